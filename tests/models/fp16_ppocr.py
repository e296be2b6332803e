#!/usr/bin/python3
"""kiln.vulkan.fp16=1 on PP-OCRv4 det (issue 20): the float16-storage binary is at most 0.6x the float32 one, and
`kiln compare` finds its outputs within Kiln's stated float16-storage tolerance of the float32 binary's
(engine/README.md: atol 5e-3 * max(1, max|ref|), rtol 1e-2, at most 2% of elements beyond, no NaN/Inf mismatch),
on the tests' reference page (MODEL_CACHE/ref/ppocr_det/inputs/x.npy, 1x3x640x640).

Usage: fp16_ppocr.py KILN MODEL_CACHE WORK_DIR
Exit 0 when both hold, 1 otherwise, 77 (skipped) when the model is not in the cache, unless KILN_REQUIRE_MODELS=1.
"""
import json
import os
import shutil
import subprocess
import sys

from missing_model import missing_model

MODEL = "ch_PP-OCRv4_det_infer.onnx"
PAGE = os.path.join("ref", "ppocr_det", "inputs", "x.npy")
SHAPE = "x=1x3x640x640"


def kiln(binary, *args, check=True):
    result = subprocess.run([binary, *args], capture_output=True, text=True)
    if check and result.returncode != 0:
        raise RuntimeError(f"kiln {' '.join(args)} exited {result.returncode}: {result.stderr.strip()[-2000:]}")
    return result


def main():
    binary, cache, work = sys.argv[1:4]
    model, page = os.path.join(cache, MODEL), os.path.join(cache, PAGE)
    if not os.path.isfile(model) or not os.path.isfile(page):
        missing_model(f"{model} or {page} is missing (tests/tools/fetch_models.sh --with-references fetches them)")
    shutil.rmtree(work, ignore_errors=True)
    sizes, ctx = {}, {}
    for kind, extra in (("float32", []), ("fp16", ["--config", "kiln.vulkan.fp16=1"])):
        ctx[kind] = os.path.join(work, kind, "det_ctx.onnx")
        result = json.loads(kiln(binary, "compile", model, "-o", ctx[kind], "--shape", SHAPE, "--json", "--quiet",
                                 *extra).stdout)
        sizes[kind] = os.path.getsize(result["binary_path"])
    ratio = sizes["fp16"] / sizes["float32"]
    print(f"binary: float32 {sizes['float32']} bytes, fp16 {sizes['fp16']} bytes ({ratio:.2f}x)")
    failed = ratio > 0.6
    if failed:
        print("FAIL: the fp16 binary is over 0.6x the float32 one")
    compare = kiln(binary, "compare", ctx["fp16"], "--against", ctx["float32"], "--ep", "vulkan", "--shape", SHAPE,
                   "--input", f"x={page}", "--atol", "5e-3", "--rtol", "1e-2", "--max-fraction-beyond", "0.02",
                   "--json", check=False)
    report = json.loads(compare.stdout) if compare.stdout.strip() else {}
    for output in report.get("outputs", []):
        print(f"{output.get('name')}: max abs {output.get('max_abs_error')}, "
              f"{output.get('beyond_tolerance')} beyond ({output.get('allowed_beyond')} allowed)")
    if compare.returncode != 0 or not report.get("outputs"):
        print(f"FAIL: kiln compare exited {compare.returncode}: {compare.stderr.strip()[-2000:]}")
        failed = True
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
