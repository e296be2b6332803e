#!/usr/bin/python3
"""kiln_vulkan_floor against the engine on the same context binary: for each model, `kiln compile` writes the
binary, the floor loads it with raw Vulkan (--json) and kiln_vulkan_floor_reference loads it with the engine. The
floor must create exactly the engine's pipelines_created and upload exactly the engine's bytes, and its JSON must be
sane. Not a timed test: no timing is compared with another.
Usage: vulkan_floor_check.py KILN FLOOR REFERENCE MODEL...
Exit 77 (skipped) without a Vulkan device unless KILN_REQUIRE_VULKAN=1, or when a model is missing unless
KILN_REQUIRE_MODELS=1.
"""
import json
import math
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "support"))
from kiln_requirements import skip_or_fail  # noqa: E402

failures = 0


def expect(condition, what):
    global failures
    if not condition:
        failures += 1
        print(f"FAIL: {what}")


def run(*args):
    result = subprocess.run([str(a) for a in args], capture_output=True, text=True, timeout=600)
    return result.returncode, result.stdout, result.stderr


def has_vulkan_device(kiln):
    code, out, _ = run(kiln, "devices", "--json")
    return code == 0 and bool(json.loads(out).get("devices"))


def check_model(kiln, floor, reference, model, tmp):
    stem = model.stem
    binary = tmp / f"{stem}_vulkan.bin"  # beside the ctx model
    code, out, err = run(kiln, "compile", model, "-o", tmp / f"{stem}_ctx.onnx", "--json")
    expect(code == 0, f"{stem}: kiln compile exits 0 (got {code}: {err})")
    if code != 0:
        return
    compiled = json.loads(out)

    code, out, err = run(floor, binary, "--json")
    expect(code == 0, f"{stem}: floor exits 0 (got {code}: {err})")
    if code != 0:
        return
    f = json.loads(out)
    code, out, err = run(reference, model, binary)
    expect(code == 0, f"{stem}: reference exits 0 (got {code}: {err})")
    if code != 0:
        return
    engine = json.loads(out)
    counters = engine["counters"]

    # The same work as the engine's load.
    expect(f["pipelines"] > 0, f"{stem}: pipelines > 0 ({f['pipelines']})")
    expect(f["pipelines"] == counters["pipelines_created"],
           f"{stem}: floor pipelines {f['pipelines']} == engine pipelines_created {counters['pipelines_created']}")
    expect(f["pipelines"] == engine["variant_keys"], f"{stem}: one pipeline per shader variant")
    expect(f["spirv_modules"] == compiled["binary"]["spirv"]["modules"],
           f"{stem}: spirv_modules {f['spirv_modules']} == inspect's {compiled['binary']['spirv']['modules']}")
    expect(f["pipelines"] == f["spirv_modules"], f"{stem}: every stored module is one pipeline")
    expect(f["partitions"] == engine["partitions"], f"{stem}: partitions {f['partitions']} == {engine['partitions']}")
    expect(f["weight_bytes"] == engine["upload_bytes"],
           f"{stem}: floor weight_bytes {f['weight_bytes']} == engine upload {engine['upload_bytes']}")
    expect(f["weight_tensors"] == engine["upload_tensors"],
           f"{stem}: floor weight_tensors {f['weight_tensors']} == engine {engine['upload_tensors']}")
    expect(f["weight_bytes"] <= f["file_bytes"], f"{stem}: weights fit in the file")
    for key in ["glslang_compiles", "optimizer_passes_run", "weights_prepacked"]:
        expect(counters[key] == 0, f"{stem}: the engine's load ran no {key} ({counters[key]})")

    # Sane timings: finite, non-negative, total = the four stages.
    stages = ["device_create_ms", "file_read_ms", "pipeline_create_ms", "weight_upload_ms"]
    for key in stages + ["instance_create_ms", "total_ms", "locate_ms", "wall_ms"]:
        expect(isinstance(f[key], (int, float)) and math.isfinite(f[key]) and f[key] >= 0, f"{stem}: {key} = {f[key]}")
    expect(abs(f["total_ms"] - sum(f[k] for k in stages)) < 1e-6, f"{stem}: total_ms is the sum of the stages")
    expect(f["pipeline_create_ms"] > 0 and f["device_create_ms"] > 0, f"{stem}: the timed stages took time")
    expect(f["instance_create_ms"] <= f["device_create_ms"], f"{stem}: instance creation is part of device_create_ms")
    expect(f["wall_ms"] >= f["total_ms"], f"{stem}: wall_ms covers total_ms")
    print(f"{stem}: {f['pipelines']} pipelines, {f['weight_bytes']} weight bytes in {f['weight_tensors']} tensors, "
          f"floor {f['total_ms']:.1f} ms")


def main():
    kiln, floor, reference = sys.argv[1:4]
    models = [Path(m) for m in sys.argv[4:]]
    if not has_vulkan_device(kiln):
        skip_or_fail("VULKAN", "kiln devices lists no Vulkan device")
    missing = [m for m in models if not m.is_file()]
    if missing:
        skip_or_fail("MODELS", f"missing {', '.join(map(str, missing))} (tests/tools/fetch_models.sh)")

    with tempfile.TemporaryDirectory() as tmp:
        for model in models:
            check_model(kiln, floor, reference, model, Path(tmp))
        # Usage and failures: exit codes and messages.
        code, _, err = run(floor)
        expect(code == 2 and "usage" in err, f"no arguments: exit 2 (got {code})")
        code, _, err = run(floor, Path(tmp) / "missing_vulkan.bin")
        expect(code == 1 and "NO_SUCHFILE" in err, f"missing binary: exit 1 NO_SUCHFILE (got {code}: {err})")
        code, _, err = run(floor, models[0], "--device", "no such device")
        expect(code == 1 and "matches no Vulkan device" in err, f"unknown device: exit 1 (got {code}: {err})")
        code, _, err = run(floor, models[0])
        expect(code == 1 and "INVALID_GRAPH" in err, f"an .onnx is not a binary: exit 1 (got {code}: {err})")
    print("vulkan_floor_check: " + ("ok" if failures == 0 else f"{failures} failures"))
    return 0 if failures == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
