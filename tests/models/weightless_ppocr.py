#!/usr/bin/python3
"""kiln compile --weightless on PP-OCRv4 det (issue 23): the weightless context binary is smaller than 10% of the
regular one, and `kiln run` of the two ctx models writes byte-identical outputs (.npy).

Compiles MODEL_CACHE/ch_PP-OCRv4_det_infer.onnx twice into WORK_DIR (regular and --weightless), runs both on the
Vulkan EP with the same seeded input, and compares every output file byte for byte; then checks that a weightless
ctx model whose source is gone fails to load (NO_SUCHFILE, exit 1) while the regular one still runs.

Usage: weightless_ppocr.py KILN MODEL_CACHE WORK_DIR
Exit 0 when both hold, 1 otherwise, 77 (skipped) when the model is not in the cache, unless KILN_REQUIRE_MODELS=1.
"""
import json
import os
import shutil
import subprocess
import sys

from missing_model import missing_model

MODEL = "ch_PP-OCRv4_det_infer.onnx"
SHAPE = "x=1x3x256x256"  # small enough for lavapipe, large enough to use every layer


def kiln(binary, *args):
    result = subprocess.run([binary, *args], capture_output=True, text=True)
    if result.returncode != 0:
        raise RuntimeError(f"kiln {' '.join(args)} exited {result.returncode}: {result.stderr.strip()[-2000:]}")
    return result.stdout


def main():
    binary, cache, work = sys.argv[1:4]
    source = os.path.join(cache, MODEL)
    if not os.path.isfile(source):
        missing_model(f"{source} is missing (tests/tools/fetch_models.sh fetches it)")
    shutil.rmtree(work, ignore_errors=True)
    # The source model is copied beside the outputs, so it can be taken away at the end without touching the cache.
    model = os.path.join(work, "src", MODEL)
    os.makedirs(os.path.dirname(model))
    shutil.copyfile(source, model)
    sizes, outputs = {}, {}
    for kind, extra in (("regular", []), ("weightless", ["--weightless"])):
        ctx = os.path.join(work, kind, "det_ctx.onnx")
        result = json.loads(kiln(binary, "compile", model, "-o", ctx, "--json", "--quiet", *extra))
        sizes[kind] = os.path.getsize(result["binary_path"])
        out = os.path.join(work, kind, "out")
        kiln(binary, "run", ctx, "--ep", "vulkan", "--seed", "7", "--shape", SHAPE, "--output-dir", out, "--quiet")
        outputs[kind] = out
        if kind == "weightless":
            info = json.loads(kiln(binary, "inspect", result["binary_path"], "--json"))
            weightless = info.get("weightless")
            if not weightless or weightless["sources"] != [os.path.join("..", "src", MODEL)]:
                print(f"FAIL: kiln inspect does not show the weightless binary's source: {weightless}")
                return 1
            folds = sum(1 for w in weightless["weights"] if w["transform"].startswith("bn_fold"))
            if len(weightless["weights"]) != weightless["references"]:
                print(f"FAIL: kiln inspect lists {len(weightless['weights'])} of {weightless['references']} references")
                return 1
            print(f"weightless: {weightless['references']} weights ({weightless['bytes']} bytes) from the source "
                  f"({folds} Conv+BatchNormalization folds), {weightless['derived_constants']} prepacked constants "
                  f"derived at load")
    ratio = sizes["weightless"] / sizes["regular"]
    print(f"binary: regular {sizes['regular']} bytes, weightless {sizes['weightless']} bytes ({ratio:.1%})")
    failed = False
    if ratio >= 0.10:
        print("FAIL: the weightless binary is not smaller than 10% of the regular one")
        failed = True
    names = sorted(os.listdir(outputs["regular"]))
    if not names or names != sorted(os.listdir(outputs["weightless"])):
        print(f"FAIL: different outputs: {names} vs {sorted(os.listdir(outputs['weightless']))}")
        return 1
    for name in names:
        with open(os.path.join(outputs["regular"], name), "rb") as a, open(os.path.join(outputs["weightless"], name), "rb") as b:
            same = a.read() == b.read()
        print(f"{name}: {'byte-identical' if same else 'DIFFERENT'}")
        failed |= not same
    # The source gone: the weightless ctx model cannot load (the regular one does not need it).
    os.remove(model)
    gone = subprocess.run([binary, "run", os.path.join(work, "weightless", "det_ctx.onnx"), "--ep", "vulkan",
                           "--shape", SHAPE, "--quiet"], capture_output=True, text=True)
    if gone.returncode != 1 or "ep.context_source_model_path" not in gone.stderr:
        print(f"FAIL: without its source the weightless model gave exit {gone.returncode}: {gone.stderr.strip()}")
        failed = True
    kiln(binary, "run", os.path.join(work, "regular", "det_ctx.onnx"), "--ep", "vulkan", "--shape", SHAPE, "--quiet")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
