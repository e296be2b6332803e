#!/usr/bin/python3
"""kiln package / inspect / check / run on a model package, and kiln compile's no-op, end to end through the CLI
as a user runs them: exit codes of the Contracts (0 ok, 1 failure, 2 usage, 3 incompatible), files and mtimes.
Usage: package_commands.py KILN_BINARY SOURCE_DIR
"""
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

failures = 0


def kiln(*args):
    result = subprocess.run([KILN, *args], capture_output=True, text=True, timeout=600)
    return result.returncode, result.stdout, result.stderr


def expect(condition, what):
    global failures
    if not condition:
        failures += 1
        print(f"FAIL: {what}")


def main():
    global KILN
    KILN, source = sys.argv[1], Path(sys.argv[2])
    model = str(source / "resources/models/tiny_cnn.onnx")
    profiles = [str(source / "resources/profiles" / name) for name in ("lavapipe.json", "vulkan11_minimal.json")]
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        package = tmp / "tiny.kilnpkg"
        code, out, err = kiln("package", model, "--profile", profiles[0], "--profile", profiles[1],
                              "--variant", "fp32,fp16", "-o", str(package), "--json")
        expect(code == 0, f"package exits 0 (got {code}: {err})")
        document = json.loads(out) if code == 0 else {"variants": []}
        expect([v["name"] for v in document["variants"]] ==
               ["lavapipe-fp32", "lavapipe-fp16", "vulkan11_minimal-fp32", "vulkan11_minimal-fp16"],
               f"one variant per profile and precision ({[v['name'] for v in document['variants']]})")
        expect(sorted(p.name for p in tmp.iterdir()) == ["tiny.kilnpkg"], f"no staging folder left ({list(tmp.iterdir())})")
        code, _, err = kiln("package", model, "-o", str(package))
        expect(code == 2, f"an existing package without --force is a usage error (got {code}: {err})")

        code, out, err = kiln("check", str(package), "--json")
        expect(code == 0, f"check of the package exits 0 (got {code}: {err})")
        checked = json.loads(out) if code == 0 else {"choice": {}, "variants": []}
        expect(checked["choice"].get("variant") == "lavapipe-fp32", f"lavapipe-fp32 chosen ({checked['choice']})")
        code, out, err = kiln("check", str(package), "--config", "kiln.vulkan.fp16=1", "--json")
        expect(code == 0 and json.loads(out)["choice"]["variant"] == "lavapipe-fp16", f"fp16 asked for, fp16 chosen ({out[-300:]})")
        code, out, err = kiln("inspect", str(package))
        expect(code == 0 and "* lavapipe-fp32" in out, f"inspect marks the chosen variant ({code}: {out[:400]})")

        outputs = {}
        for name, path in (("package", package), ("ctx", package / "models/tiny_cnn/lavapipe-fp32/tiny_cnn_ctx.onnx")):
            folder = tmp / f"out_{name}"
            code, _, err = kiln("run", str(path), "--ep", "vulkan", "--seed", "3", "--output-dir", str(folder), "-q")
            expect(code == 0, f"run {name} exits 0 (got {code}: {err})")
            outputs[name] = {p.name: p.read_bytes() for p in folder.glob("*.npy")} if folder.exists() else {}
        expect(outputs["package"] and outputs["package"] == outputs["ctx"],
               "the package runs exactly as the chosen variant's ctx model")

        # Every variant's binary damaged: none fits, check says so with exit 3, a run compiles the packaged source.
        for variant in checked["variants"]:
            binary = next(f for f in variant["files"] if f["path"].endswith(".bin"))
            with open(package / binary["path"], "r+b") as f:
                f.seek(binary["size"] // 2)
                f.write(b"\x00\x01")
        code, out, err = kiln("check", str(package), "--json")
        judged = json.loads(out) if out else {"variants": [], "choice": {}}
        expect(code == 3 and judged["choice"].get("compiles_source") is True, f"no variant fits: exit 3 ({code}: {err})")
        expect(all(v["compatibility"] == "UNSUPPORTED" and "does not match its digest" in v["reasons"][0]
                   for v in judged["variants"]), "each damaged variant says why")
        code, _, err = kiln("run", str(package), "--ep", "vulkan", "-q")
        expect(code == 0, f"run compiles the packaged source (got {code}: {err})")
        code, _, err = kiln("run", str(package), "--ep", "vulkan", "-q", "--config", "session.disable_model_compile=1")
        expect(code != 0 and "MODEL_REQUIRES_COMPILATION" in err, f"disable_model_compile refuses ({code}: {err})")

        # The compiles handed to kiln batch: --plan writes the jobs file, batch runs it, --assemble publishes.
        plan, planned = tmp / "tiny.plan", tmp / "planned.kilnpkg"
        code, _, err = kiln("package", model, "--profile", profiles[0], "--variant", "fp32,fp16", "-o", str(planned),
                            "--plan", str(plan), "-q")
        expect(code == 0 and (plan / "jobs.json").is_file(), f"--plan writes a jobs file ({code}: {err})")
        code, _, err = kiln("package", "--assemble", str(plan), "-q")
        expect(code == 2 and "not compiled yet" in err, f"--assemble before the compiles is refused ({code}: {err})")
        code, out, err = kiln("batch", str(plan / "jobs.json"), "--jobs", "2", "--json")
        expect(code == 0 and json.loads(out)["summary"]["succeeded"] == 2, f"batch runs the two compiles ({code}: {err})")
        code, out, err = kiln("package", "--assemble", str(plan), "--json")
        assembled = json.loads(out) if code == 0 else {"variants": []}
        expect(code == 0 and [v["name"] for v in assembled["variants"]] == ["lavapipe-fp32", "lavapipe-fp16"],
               f"--assemble publishes the package ({code}: {err})")
        expect(not plan.exists(), "the plan folder is gone once the package is published")
        code, out, err = kiln("check", str(planned), "--json")
        expect(code == 0 and json.loads(out)["choice"]["variant"] == "lavapipe-fp32", f"the assembled package loads ({err})")

        # kiln compile twice: the second is a no-op that writes nothing; a changed option compiles again.
        ctx = tmp / "c" / "tiny_cnn_ctx.onnx"
        code, _, err = kiln("compile", model, "-o", str(ctx), "-q")
        expect(code == 0, f"first compile exits 0 ({code}: {err})")
        stamps = {p.name: p.stat().st_mtime_ns for p in ctx.parent.iterdir()}
        code, out, err = kiln("compile", model, "-o", str(ctx), "--json")
        result = json.loads(out) if code == 0 else {}
        expect(code == 0 and result.get("reused") is True and result.get("files_written") == [],
               f"second compile reuses the outputs ({code}: {out[:300]} {err})")
        expect({p.name: p.stat().st_mtime_ns for p in ctx.parent.iterdir()} == stamps, "the no-op rewrote nothing")
        code, out, err = kiln("compile", model, "-o", str(ctx), "--config", "kiln.vulkan.fp16=1")
        expect(code == 0 and "recompiling: stale: options changed" in out, f"a changed option recompiles ({out} {err})")
        code, out, err = kiln("compile", model, "-o", str(ctx), "--config", "kiln.vulkan.fp16=1", "--force", "--json")
        expect(code == 0 and json.loads(out)["reused"] is False, "--force compiles anyway")
        expect(sorted(os.listdir(ctx.parent)) == ["tiny_cnn_ctx.onnx", "tiny_cnn_vulkan.bin"],
               f"nothing but the outputs beside them ({os.listdir(ctx.parent)})")
    print(f"package_commands: {failures} failure(s)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
