#!/usr/bin/python3
"""A compile for a device profile needs no Vulkan driver at all: with the Vulkan loader pointed at no driver
(VK_ICD_FILENAMES and VK_DRIVER_FILES naming a file that does not exist), `kiln devices` lists nothing and `kiln compile
--target-profile lavapipe.json` still writes the ctx model and its binary (exit 0), which `kiln inspect --profile`
accepts. Where a device exists, the ctx model then runs on it and equals the source model on the CPU EP.
Exits 77 (skipped) for the second half without a Vulkan device unless KILN_REQUIRE_VULKAN=1.
Usage: compile_without_device.py KILN_BINARY SOURCE_DIR
"""
import json
import os
import sys
import tempfile
from pathlib import Path

from cli_checks import Checks, run_kiln

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "support"))
from kiln_requirements import skip_or_fail  # noqa: E402


def main(kiln_binary, source):
    checks = Checks("compile_without_device")
    expect = checks.expect
    no_driver = dict(os.environ, VK_ICD_FILENAMES="/nonexistent/icd.json", VK_DRIVER_FILES="/nonexistent/icd.json")
    no_driver.pop("VK_ADD_DRIVER_FILES", None)

    def kiln(*args, env=None):
        return run_kiln(kiln_binary, *map(str, args), timeout=600, env=env)

    model = source / "resources" / "models" / "tiny_cnn.onnx"
    profile = source / "resources" / "profiles" / "lavapipe.json"
    with tempfile.TemporaryDirectory() as tmp:
        ctx = Path(tmp) / "tiny_cnn_ctx.onnx"
        code, out, err = kiln("devices", "--json", env=no_driver)
        listed = json.loads(out).get("devices", []) if code == 0 and out.strip() else []
        expect(not listed, f"no Vulkan device is visible with the loader pointed at no driver ({code}: {out}{err})")
        code, out, err = kiln("compile", model, "--target-profile", profile, "-o", ctx, env=no_driver)
        expect(code == 0, f"kiln compile --target-profile without a driver exits 0 ({code}: {err})")
        binary = Path(tmp) / "tiny_cnn_vulkan.bin"
        expect(ctx.is_file() and binary.is_file(), f"the ctx model and its binary are written ({sorted(os.listdir(tmp))})")
        if checks.failures:
            return checks.finish()
        code, out, err = kiln("inspect", ctx, "--profile", profile, env=no_driver)
        expect(code == 0, f"kiln inspect --profile accepts the cross-compiled model without a driver ({code}: {out}{err})")

        code, out, _ = kiln("devices", "--json")
        if code != 0 or not json.loads(out).get("devices"):
            if checks.failures:
                return checks.finish()
            skip_or_fail("VULKAN", "no Vulkan device to run the cross-compiled model on")
        code, out, err = kiln("compare", ctx, "--ep", "vulkan", "--against", model, "--against-ep", "cpu", "--json")
        expect(code == 0, f"the cross-compiled ctx model on Vulkan equals the source on the CPU EP ({code}: {out}{err})")
    return checks.finish()


if __name__ == "__main__":
    sys.exit(main(sys.argv[1], Path(sys.argv[2])))
