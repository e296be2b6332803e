#!/usr/bin/python3
"""Kiln's CPU EP against onnxruntime-node on a dynamically quantized U-Net and its float twin (issue 19).

Generates both models and an input with tests/tools/make_quant_unet.py into WORK_DIR, runs each once on onnxruntime
(resources/bench/ort_run.mjs: CPU EP, default options) and on `kiln run --ep cpu`, and checks every element of every
output: |kiln - ort| <= atol + rtol * |ort| with atol = 1e-5 * max(1, max|ort|) and rtol = 1e-3. Prints each
output's max absolute and relative error.

Usage: quant_unet_vs_onnxruntime.py KILN SOURCE_DIR MODEL_CACHE WORK_DIR
MODEL_CACHE holds ort/node_modules/onnxruntime-node (tests/tools/fetch_models.sh). Exit 0 when everything matches,
1 on a mismatch or failure, 77 (skipped) when node or onnxruntime-node is missing, unless KILN_REQUIRE_MODELS=1.
"""
import os
import shutil
import subprocess
import sys

import numpy as np
import onnx

from missing_model import missing_model

RTOL = 1e-3
ORT_MISSING = 3  # ort_run.mjs's exit status when onnxruntime-node is not installed


def run(command):
    result = subprocess.run(command, capture_output=True, text=True)
    if result.returncode != 0:
        return result.returncode, result.stderr.strip()
    return 0, ""


def run_onnxruntime(source_dir, cache, model, inputs, out_dir):
    if shutil.which("node") is None:
        missing_model("node is not installed")
    script = os.path.join(source_dir, "resources", "bench", "ort_run.mjs")
    status, error = run(["node", script, os.path.join(cache, "ort"), model, out_dir, "--input", f"input={inputs}"])
    if status == ORT_MISSING:
        missing_model(f"onnxruntime-node is not under {cache}/ort (tests/tools/fetch_models.sh installs it)")
    if status != 0:
        raise RuntimeError(f"onnxruntime failed on {model}: {error}")


def compare(label, got, ref):
    """Prints the errors of one output; returns True when every element is within tolerance."""
    if got.shape != ref.shape or got.dtype != ref.dtype:
        print(f"{label}: kiln {got.dtype}{list(got.shape)} vs onnxruntime {ref.dtype}{list(ref.shape)}")
        return False
    got64, ref64 = got.astype(np.float64), ref.astype(np.float64)
    atol = 1e-5 * max(1.0, float(np.nanmax(np.abs(ref64))) if ref64.size else 1.0)
    error = np.abs(got64 - ref64)
    nan_mismatch = int((np.isnan(got64) != np.isnan(ref64)).sum())
    beyond = int((error > atol + RTOL * np.abs(ref64)).sum()) + nan_mismatch
    relative = error / np.maximum(np.abs(ref64), np.finfo(np.float32).tiny)
    print(f"{label}: max abs error {np.nanmax(error):.3g}, max rel error {np.nanmax(relative):.3g}, "
          f"{beyond} of {ref.size} beyond atol {atol:.3g} + rtol {RTOL}, {nan_mismatch} NaN mismatches")
    return beyond == 0


def check_model(kiln, source_dir, cache, work, name):
    model = os.path.join(work, f"{name}_unet.onnx")
    inputs = os.path.join(work, "input.npy")
    ort_dir, kiln_dir = os.path.join(work, f"ort_{name}"), os.path.join(work, f"kiln_{name}")
    run_onnxruntime(source_dir, cache, model, inputs, ort_dir)
    status, error = run([kiln, "run", model, "--ep", "cpu", "--input", f"input={inputs}", "--output-dir", kiln_dir,
                         "-q"])
    if status != 0:
        raise RuntimeError(f"kiln run failed on {model}: {error}")
    ok = True
    for k, output in enumerate(onnx.load(model).graph.output):
        ref = np.load(os.path.join(ort_dir, f"output_{k}.npy"))
        got = np.load(os.path.join(kiln_dir, f"{output.name}.npy"))
        ok = compare(f"{name} {output.name}", got, ref) and ok
    return ok


def main():
    if len(sys.argv) != 5:
        print(__doc__)
        return 2
    kiln, source_dir, cache, work = sys.argv[1:]
    shutil.rmtree(work, ignore_errors=True)
    generator = os.path.join(source_dir, "tests", "tools", "make_quant_unet.py")
    subprocess.run([sys.executable, generator, work], check=True)
    ok = True
    for name in ("quant", "float"):
        ok = check_model(kiln, source_dir, cache, work, name) and ok
    print("PASS" if ok else "FAIL: Kiln's CPU EP differs from onnxruntime beyond tolerance")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
