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
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "support"))
from kiln_requirements import skip_or_fail  # noqa: E402

failures = 0
NO_DRIVER = {"VK_ICD_FILENAMES": "/nonexistent/icd.json", "VK_DRIVER_FILES": "/nonexistent/icd.json"}


def kiln(*args, env=None):
    full = dict(os.environ)
    full.pop("VK_ADD_DRIVER_FILES", None)
    full.update(env or {})
    result = subprocess.run([KILN, *map(str, args)], capture_output=True, text=True, timeout=600, env=full)
    return result.returncode, result.stdout, result.stderr


def expect(condition, what):
    global failures
    if not condition:
        failures += 1
        print(f"FAIL: {what}")


def main():
    source = Path(sys.argv[2])
    model = source / "resources" / "models" / "tiny_cnn.onnx"
    profile = source / "resources" / "profiles" / "lavapipe.json"
    with tempfile.TemporaryDirectory() as tmp:
        ctx = Path(tmp) / "tiny_cnn_ctx.onnx"
        code, out, err = kiln("devices", "--json", env=NO_DRIVER)
        listed = json.loads(out).get("devices", []) if code == 0 and out.strip() else []
        expect(not listed, f"no Vulkan device is visible with the loader pointed at no driver ({code}: {out}{err})")
        code, out, err = kiln("compile", model, "--target-profile", profile, "-o", ctx, env=NO_DRIVER)
        expect(code == 0, f"kiln compile --target-profile without a driver exits 0 ({code}: {err})")
        binary = Path(tmp) / "tiny_cnn_vulkan.bin"
        expect(ctx.is_file() and binary.is_file(), f"the ctx model and its binary are written ({sorted(os.listdir(tmp))})")
        if failures:
            return 1
        code, out, err = kiln("inspect", ctx, "--profile", profile, env=NO_DRIVER)
        expect(code == 0, f"kiln inspect --profile accepts the cross-compiled model without a driver ({code}: {out}{err})")

        code, out, _ = kiln("devices", "--json")
        if code != 0 or not json.loads(out).get("devices"):
            if failures:
                return 1
            skip_or_fail("VULKAN", "no Vulkan device to run the cross-compiled model on")
        code, out, err = kiln("compare", ctx, "--ep", "vulkan", "--against", model, "--against-ep", "cpu", "--json")
        expect(code == 0, f"the cross-compiled ctx model on Vulkan equals the source on the CPU EP ({code}: {out}{err})")
    return 1 if failures else 0


if __name__ == "__main__":
    KILN = sys.argv[1]
    sys.exit(main())
