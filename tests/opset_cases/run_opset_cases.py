#!/usr/bin/env python3
"""Generated conformance cases for ai.onnx opsets 18-23 and onnxruntime's com.microsoft contrib operators:
onnxruntime-node is the reference, Kiln the subject.

Usage: run_opset_cases.py --kiln KILN --ort-dir DIR --out FOLDER [--ep cpu|vulkan] [--filter REGEX] [--show-passed]

1. builds every case (the modules of CASE_MODULES) as a node-test folder under FOLDER/cases;
2. runs them all through onnxruntime-node in one process (tests/difftest/ort_batch.mjs) and stores its outputs as the
   expected output_K.pb; a case onnxruntime refuses is reported as reference-rejected and dropped, never counted
   against Kiln;
3. runs `kiln conformance --ep EP` over the folder (expected failures: expected_failures_<ep>.txt beside this script,
   if there is one; on the Vulkan EP a case the EP cannot take whole is skipped) and
   prints pass / fail / expected-failure / reference-rejected counts per opset, like the node tests' summary;
4. runs the bad-input cases of error_cases.py through `kiln run`: each must fail (exit 1-3, no signal) with its status
   code and message.

Exit 0 when no case fails unexpectedly, 1 otherwise, 2 for usage, 77 when onnxruntime-node is missing (1 with
KILN_REQUIRE_MODELS=1).
"""
from __future__ import annotations

import argparse
import json
import re
import shutil
import subprocess
import sys
from collections import defaultdict
from pathlib import Path

import numpy as np
from onnx import numpy_helper

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent / "support"))
sys.dont_write_bytecode = True  # no __pycache__ in the source tree

import cases_changed_ops  # noqa: E402
import cases_contrib_attention  # noqa: E402
import cases_contrib_ops  # noqa: E402
import cases_decoder_ops  # noqa: E402
import cases_matmul_nbits  # noqa: E402
import cases_new_ops  # noqa: E402
import cases_recurrent_ops  # noqa: E402
import error_cases  # noqa: E402
from kiln_requirements import skip_or_fail  # noqa: E402

# Where the cases come from: ai.onnx ops new in opsets 18-23, ai.onnx ops whose signature changed, and onnxruntime's
# com.microsoft contrib operators that exported transformers use (MatMulNBits in its own module), and GRU.
CASE_MODULES = (cases_new_ops, cases_changed_ops, cases_contrib_ops, cases_contrib_attention, cases_matmul_nbits,
                cases_decoder_ops, cases_recurrent_ops)
ORT_BATCH = HERE.parent / "difftest" / "ort_batch.mjs"
# Generated outputs go through float32 math in both runtimes, in different orders: 1e-5 absolute on top of
# conformance's relative 1e-3 keeps near-zero outputs (normalizations, attention) from failing on rounding alone.
ATOL = "1e-5"


def build_cases(pattern: str | None):
    cases = [c for module in CASE_MODULES for c in module.all_cases()]
    names = [c.name for c in cases]
    duplicates = {n for n in names if names.count(n) > 1}
    if duplicates:
        raise SystemExit(f"run_opset_cases: duplicate case names {sorted(duplicates)}")
    if pattern:
        cases = [c for c in cases if re.search(pattern, c.name)]
    return cases


def write_cases(cases, root: Path):
    manifest = []
    for c in cases:
        folder = root / "cases" / c.name
        data = folder / "test_data_set_0"
        work = root / "work" / c.name
        data.mkdir(parents=True)
        work.mkdir(parents=True)
        (folder / "model.onnx").write_bytes(c.model.SerializeToString())
        feeds = {}
        for k, (name, array) in enumerate(c.inputs):
            (data / f"input_{k}.pb").write_bytes(numpy_helper.from_array(array, name).SerializeToString())
            npy = work / f"input_{k}.npy"
            np.save(npy, array)
            feeds[name] = str(npy)
        manifest.append({"model": str(folder / "model.onnx"), "inputs": feeds, "out": str(work)})
    return manifest


def run_reference(manifest, root: Path, ort_dir: str):
    manifest_file, results_file = root / "manifest.json", root / "ort_results.json"
    manifest_file.write_text(json.dumps({"cases": manifest}))
    proc = subprocess.run(["node", str(ORT_BATCH), ort_dir, str(manifest_file), str(results_file)],
                          capture_output=True, text=True)
    if proc.returncode == 3:
        return None
    if proc.returncode != 0:
        raise SystemExit(f"run_opset_cases: onnxruntime-node failed ({proc.returncode}): {proc.stderr.strip()}")
    return json.loads(results_file.read_text())


def store_expected(c, root: Path) -> None:
    work = root / "work" / c.name
    data = root / "cases" / c.name / "test_data_set_0"
    outputs = [o.name for o in c.model.graph.output]
    for k, name in enumerate(outputs):
        array = np.load(work / f"ort_{k}.npy")
        (data / f"output_{k}.pb").write_bytes(numpy_helper.from_array(array, name).SerializeToString())


def run_error_cases(kiln: str, root: Path, pattern: str | None) -> int:
    """Runs the bad-input cases; returns how many did not fail as they should."""
    wrong = 0
    for c, code, fragment in error_cases.error_cases():
        if pattern and not re.search(pattern, c.name):
            continue
        folder = root / "errors" / c.name
        folder.mkdir(parents=True)
        (folder / "model.onnx").write_bytes(c.model.SerializeToString())
        command = [kiln, "run", str(folder / "model.onnx"), "--ep", "cpu", "--quiet"]
        for k, (name, array) in enumerate(c.inputs):
            (folder / f"input_{k}.pb").write_bytes(numpy_helper.from_array(array, name).SerializeToString())
            command += ["--input", f"{name}={folder / f'input_{k}.pb'}"]
        proc = subprocess.run(command, capture_output=True, text=True)
        if 1 <= proc.returncode <= 3 and code in proc.stderr and fragment in proc.stderr:
            continue
        wrong += 1
        print(f"FAILED           {c.name}  wanted exit 1-3 with {code} and '{fragment}', got exit {proc.returncode}: "
              f"{proc.stderr.strip()[:300]}")
    return wrong


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kiln", required=True)
    parser.add_argument("--ort-dir", required=True, help="folder holding node_modules/onnxruntime-node")
    parser.add_argument("--out", required=True, help="working folder (emptied first)")
    parser.add_argument("--filter", help="only cases whose name matches this regex")
    parser.add_argument("--ep", default="cpu", choices=["cpu", "vulkan"], help="the EP under test; on vulkan a case the EP cannot take whole is skipped")
    parser.add_argument("--show-passed", action="store_true")
    args = parser.parse_args()

    root = Path(args.out)
    shutil.rmtree(root, ignore_errors=True)
    root.mkdir(parents=True)
    cases = build_cases(args.filter)
    manifest = write_cases(cases, root)
    results = run_reference(manifest, root, args.ort_dir)
    if results is None:
        skip_or_fail("MODELS", f"run_opset_cases: onnxruntime-node is not installed under {args.ort_dir}")

    rejected = {}
    for c, outcome in zip(cases, results["cases"]):
        if outcome["ok"]:
            store_expected(c, root)
        else:
            rejected[c.name] = outcome["error"].splitlines()[0][:200]
            shutil.rmtree(root / "cases" / c.name)
    for name, why in sorted(rejected.items()):
        print(f"reference-rejected {name}  {why}")

    expected_list = HERE / f"expected_failures_{args.ep}.txt"  # optional: an EP may have none
    command = [args.kiln, "conformance", "--json", "--ep", args.ep, "--atol", ATOL, str(root / "cases")]
    if expected_list.exists():
        command[-1:-1] = ["--expected-failures", str(expected_list)]
    proc = subprocess.run(command, capture_output=True, text=True)
    try:
        report = json.loads(proc.stdout)
    except json.JSONDecodeError:
        print(proc.stdout + proc.stderr, file=sys.stderr)
        print(f"run_opset_cases: kiln conformance printed no report (exit {proc.returncode})", file=sys.stderr)
        return 1

    group_of = {c.name: c.group for c in cases}
    table = defaultdict(lambda: defaultdict(int))
    for c in report["cases"]:
        table[group_of[c["name"]]][c["outcome"]] += 1
        if c["outcome"] != "passed" or args.show_passed:
            print(f"{c['outcome']:<16} {c['name']}  {c['detail']}")
    for name in rejected:
        table[group_of[name]]["reference-rejected"] += 1

    print(f"{results['runtime']} reference, Kiln {args.ep.upper()} EP, {len(cases)} generated cases")
    print("opset          passed  failed  expected-failures  skipped  reference-rejected")
    totals = defaultdict(int)
    for group in sorted(table, key=lambda g: (isinstance(g, str), str(g).zfill(4))):
        row = table[group]
        failed = row["FAILED"] + row["UNEXPECTED PASS"]
        cells = [row["passed"], failed, row["expected failure"], row["skipped"], row["reference-rejected"]]
        for key, value in zip(("passed", "failed", "expected", "skipped", "rejected"), cells):
            totals[key] += value
        print(f"{group:>13}  {cells[0]:>6}  {cells[1]:>6}  {cells[2]:>17}  {cells[3]:>7}  {cells[4]:>18}")
    print(f"{'total':>13}  {totals['passed']:>6}  {totals['failed']:>6}  {totals['expected']:>17}  {totals['skipped']:>7}  "
          f"{totals['rejected']:>18}")
    wrong_errors = run_error_cases(args.kiln, root, args.filter)
    errors = len([c for c, _, _ in error_cases.error_cases() if not args.filter or re.search(args.filter, c.name)])
    print(f"bad-input cases: {errors - wrong_errors} of {errors} refused with the expected status")
    return 0 if totals["failed"] == 0 and report["failed"] == 0 and wrong_errors == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
