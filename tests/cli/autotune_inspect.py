#!/usr/bin/python3
"""kiln compile --autotune stores the kernel choices in the context binary; kiln inspect lists them (text and --json)
with their measured times; a session from the ctx model runs them with no tuning (autotune_ms 0); a cross-compile
for a device profile keeps defaults and says so.
Usage: autotune_inspect.py KILN_BINARY SOURCE_DIR
"""
import json
import sys
import tempfile
from pathlib import Path

from cli_checks import Checks, run_kiln

CHECKS = Checks("autotune_inspect")
expect = CHECKS.expect


def kiln(*args):
    return run_kiln(KILN, *args, timeout=600)


def main():
    global KILN
    KILN, source = sys.argv[1], Path(sys.argv[2])
    model = str(source / "resources/models/tiny_cnn.onnx")
    minimal = str(source / "resources/profiles/vulkan11_minimal.json")
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        ctx = tmp / "tuned" / "tiny_cnn_ctx.onnx"
        binary = tmp / "tuned" / "tiny_cnn_vulkan.bin"
        code, out, err = kiln("compile", model, "-o", str(ctx), "--autotune", "--shape", "image=1x3x32x32", "--json")
        expect(code == 0, f"compile --autotune exits 0 (got {code}: {err})")
        compiled = json.loads(out) if code == 0 else {}
        expect(compiled.get("timings", {}).get("autotune_ms", 0) > 0, f"compile tuned ({compiled.get('timings')})")

        code, out, err = kiln("inspect", str(binary), "--json")
        expect(code == 0, f"inspect --json exits 0 (got {code}: {err})")
        info = json.loads(out) if code == 0 else {}
        expect(info.get("format_version") == "1.4", f"format 1.4 ({info.get('format_version')})")
        pipelines = info.get("spirv", {}).get("pipelines", [])
        expect(pipelines and all(p["nodes"] for p in pipelines), "every stored (chosen) pipeline lists its nodes")
        expect("tuning" in [s["kind"] for s in info.get("sections", [])], "a tuning section")
        expect(info.get("autotune") == "tuned", f"autotune tuned ({info.get('autotune')})")
        choices = [k for g in info.get("graphs", []) for k in g["tuning"]]
        expect(len(choices) > 0, "stored choices listed")
        for k in choices:
            names = [c["name"] for c in k["candidates"]]
            expect(k["chosen"] in names and len(names) > 1, f"{k['node']}: chosen among its candidates ({k})")
            expect(k["chosen_ms"] > 0 and all(c["ms"] > 0 for c in k["candidates"]), f"{k['node']}: measured times")
            expect(k["chosen_ms"] == min(c["ms"] for c in k["candidates"]), f"{k['node']}: the fastest was kept")

        code, out, err = kiln("inspect", str(binary))
        expect(code == 0 and "autotune: choices stored" in out, f"inspect text says choices are stored ({code}: {out}{err})")
        for k in choices:
            expect(k["node"] in out and k["chosen"] in out, f"inspect text lists {k['node']} -> {k['chosen']}")

        # The ctx model's session runs the stored choices: no tuning, even with kiln.vulkan.autotune=1.
        code, out, err = kiln("run", str(ctx), "--ep", "vulkan", "--json", "--config", "kiln.vulkan.autotune=1")
        expect(code == 0, f"run of the tuned ctx model exits 0 (got {code}: {err})")
        if code == 0:
            timings = json.loads(out).get("timings", {})
            expect("autotune_ms" in timings and timings["autotune_ms"] == 0, f"no tuning at load or run ({timings})")

        # Cross-compiled: defaults kept, and inspect says why.
        portable = tmp / "portable" / "tiny_cnn_vulkan.bin"
        code, out, err = kiln("compile", model, "--target-profile", minimal, "--autotune", "--shape", "image=1x3x32x32", "-o",
                              str(tmp / "portable" / "tiny_cnn_ctx.onnx"), "--json")
        expect(code == 0, f"profile compile --autotune exits 0 (got {code}: {err})")
        code, out, err = kiln("inspect", str(portable), "--json")
        info = json.loads(out) if code == 0 else {}
        expect(info.get("autotune") == "defaults", f"cross-compile keeps defaults ({info.get('autotune')})")
        notes = [g["tuning_note"] for g in info.get("graphs", [])]
        expect(notes and all("cross-compiled" in n for n in notes), f"each graph says why ({notes})")
        code, out, err = kiln("inspect", str(portable))
        expect(code == 0 and "defaults kept: cross-compiled" in out, f"inspect text says defaults were kept ({out}{err})")

        # Tuning at compile needs fixed input shapes: without --shape nothing is stored, and inspect says why.
        code, out, err = kiln("compile", model, "--autotune", "-o", str(tmp / "free" / "tiny_cnn_ctx.onnx"), "--json")
        expect(code == 0, f"compile --autotune without --shape exits 0 (got {code}: {err})")
        code, out, err = kiln("inspect", str(tmp / "free" / "tiny_cnn_vulkan.bin"), "--json")
        info = json.loads(out) if code == 0 else {}
        notes = [g["tuning_note"] for g in info.get("graphs", [])]
        expect(info.get("autotune") == "defaults" and any("no fixed shape" in n for n in notes),
               f"free batch dimension: defaults, and why ({info.get('autotune')}, {notes})")

        # Compiled without --autotune: no tuning section.
        code, out, err = kiln("compile", model, "-o", str(tmp / "plain" / "tiny_cnn_ctx.onnx"), "--json")
        code, out, err = kiln("inspect", str(tmp / "plain" / "tiny_cnn_vulkan.bin"), "--json")
        info = json.loads(out) if code == 0 else {}
        expect(info.get("autotune") == "off" and "tuning" not in [s["kind"] for s in info.get("sections", [])],
               f"no tuning section without --autotune ({info.get('autotune')})")
    return CHECKS.finish()


if __name__ == "__main__":
    sys.exit(main())
