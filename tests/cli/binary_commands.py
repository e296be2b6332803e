#!/usr/bin/python3
"""kiln compile / inspect / check end to end, with the exit codes of the Contracts (0 ok, 1 failure, 2 usage,
3 incompatible). Device-specific output, so fields are checked instead of golden files.
Usage: binary_commands.py KILN_BINARY SOURCE_DIR
"""
import json
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
    minimal = str(source / "resources/profiles/vulkan11_minimal.json")
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        live = tmp / "live" / "tiny_cnn_vulkan.bin"  # beside the ctx model -o names
        code, out, err = kiln("compile", model, "-o", str(tmp / "live" / "tiny_cnn_ctx.onnx"), "--json")
        expect(code == 0, f"compile exits 0 (got {code}: {err})")
        document = json.loads(out)
        expect(document["binary"]["target"] == "device", "compiled for the live device")
        expect(document["counters"]["glslang_compiles"] + document["counters"]["spirv_cache_hits"] > 0, "compile ran glslang")
        expect(sorted(p.name for p in (tmp / "live").iterdir()) == ["tiny_cnn_ctx.onnx", "tiny_cnn_vulkan.bin"],
               f"compile wrote the ctx model and its binary ({list((tmp / 'live').iterdir())})")

        code, out, err = kiln("inspect", str(tmp / "live" / "tiny_cnn_ctx.onnx"), "--json")
        expect(code == 0, f"inspect of the ctx model exits 0 (got {code}: {err})")
        ctx = json.loads(out) if code == 0 else {}
        nodes = ctx.get("epcontext_nodes", [])
        expect(len(nodes) == 1 and nodes[0]["ep_cache_context"] == "tiny_cnn_vulkan.bin" and nodes[0]["problem"] == "",
               f"one EPContext node followed to its binary ({nodes})")

        code, out, err = kiln("inspect", str(live), "--json")
        expect(code == 0, f"inspect exits 0 (got {code}: {err})")
        info = json.loads(out)
        expect(info["format_version"] == "1.4", "format 1.4")
        expect([s["kind"] for s in info["sections"]] == ["device", "graphs", "spirv", "spirv_digests", "driver_cache",
                                                          "weights", "pipeline_users", "compile_record"],
               f"section kinds {[s['kind'] for s in info['sections']]}")
        pipelines = info["spirv"]["pipelines"]
        expect(info["spirv"]["pipeline_users_recorded"] and len(pipelines) == info["spirv"]["modules"]
               and all(p["nodes"] for p in pipelines), f"every pipeline lists the nodes that use it ({pipelines[:1]})")
        expect(len(info["graphs"]) == 1 and info["graphs"][0]["nodes"] > 0, "one graph with nodes")
        expect(info["verdict"]["verdict"] == "optimal", f"verdict {info['verdict']}")

        code, out, _ = kiln("check", str(live))
        expect(code == 0, f"check on the producing device exits 0 (got {code})")
        code, out, _ = kiln("check", str(live), "--profile", minimal, "--json")
        expect(code == 3, f"check against the minimal profile exits 3 (got {code})")
        expect(json.loads(out)["verdict"] == "unsupported", "unsupported against the minimal profile")

        # Cross-compiled for the minimal profile: portable, compatible everywhere, never optimal.
        portable = tmp / "portable_vulkan.bin"
        code, out, err = kiln("compile", model, "--target-profile", minimal, "-o", str(tmp / "portable_ctx.onnx"), "--json")
        expect(code == 0, f"profile compile exits 0 (got {code}: {err})")
        code, out, _ = kiln("check", str(portable), "--profile", minimal, "--json")
        expect(code == 0 and json.loads(out)["verdict"] == "compatible", f"portable binary compatible ({code})")
        code, _, _ = kiln("check", str(portable), "--fail-on-suboptimal")
        expect(code == 3, f"--fail-on-suboptimal refuses compatible (got {code})")

        # Bad input: corrupt, missing, folder output.
        corrupt = tmp / "corrupt_vulkan.bin"
        data = bytearray(live.read_bytes())
        data[len(data) // 2] ^= 0xFF
        corrupt.write_bytes(bytes(data))
        code, _, err = kiln("inspect", str(corrupt))
        expect(code == 1 and "INVALID_GRAPH" in err, f"corrupt binary: exit 1 INVALID_GRAPH (got {code}: {err})")
        code, _, err = kiln("check", str(corrupt))
        expect(code == 1 and "INVALID_GRAPH" in err, f"check corrupt: exit 1 (got {code}: {err})")
        code, _, err = kiln("inspect", str(tmp / "missing.bin"))
        expect(code == 1 and "NO_SUCHFILE" in err, f"missing binary: exit 1 NO_SUCHFILE (got {code}: {err})")
        code, _, err = kiln("compile", model, "-o", str(tmp))
        expect(code == 2 and "INVALID_ARGUMENT" in err, f"folder output: exit 2 (got {code}: {err})")
        expect(not list(tmp.glob(".*tmp*")), "no temp files left behind")

        # kiln inspect also reads pipeline cache files (kiln run writes one under XDG_CACHE_HOME by default).
        import os
        env = dict(os.environ, XDG_CACHE_HOME=str(tmp / "xdg"))
        run = subprocess.run([KILN, "run", model, "--ep", "vulkan", "-q"], capture_output=True, text=True, env=env)
        expect(run.returncode == 0, f"kiln run exits 0 ({run.stderr})")
        caches = list((tmp / "xdg" / "kiln").glob("*.vkcache"))
        expect(len(caches) == 1, f"one pipeline cache file ({caches})")
        if caches:
            code, out, err = kiln("inspect", str(caches[0]), "--json")
            cache = json.loads(out) if code == 0 else {}
            expect(code == 0 and cache.get("kind") == "pipeline_cache" and cache.get("usable") and cache.get("spirv_entries", 0) > 0,
                   f"pipeline cache inspect ({code}: {err} {out[:200]})")
        code, _, err = kiln("inspect", model)
        expect(code == 1 and "no EPContext node" in err, f"inspect of a plain model: exit 1 ({code}: {err})")
        code, _, err = kiln("inspect", str(source / "README.md"))
        expect(code == 1 and "neither" in err, f"inspect of a non-Kiln file: exit 1 ({code}: {err})")
    print(f"{failures} failures")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
