#!/usr/bin/env python3
"""Greedy decoding of generated llama-style decoders (make_decoder.py) with Kiln against onnxruntime-node.

Usage: run_decoder_checks.py --kiln KILN --ort-dir DIR --out FOLDER [--layers 3] [--steps 20]

For the contrib form (GroupQueryAttention, Skip/SimplifiedLayerNormalization) and the standard form (opset-17 ops
only) with float weights, runs `kiln bench --decode STEPS --compare-onnxruntime --save-logits` on the CPU EP, and on
the Vulkan EP when `kiln devices` lists a device, and checks:
  - the logits of the prefill (every position) and of every decode step, element by element:
    |kiln - ort| <= 1e-3 * max|ort| (per step);
  - the generated token ids equal onnxruntime's exactly, and the two forms generate the same ids (same weights);
  - the top-1/top-2 logit margin of onnxruntime's steps is far above the tolerance, so exact token equality is a
    fair demand rather than luck.
The int4 contrib form (com.microsoft MatMulNBits, block 32) runs on every EP too and must generate the float form's
ids; on Vulkan the contrib and int4 decoders must each be one Vulkan partition. The bench runs each step through an
IoBinding (present.* stay on the device): per decode step the session may copy up less than one cached position's
keys and values (the token feeds and what host nodes derive from them) and down exactly one logits row, and nothing on the CPU EP; the int4 decoder once more without it (--no-io-binding) must show
the whole cache coming back. Then the bad-input cases: a model without KV-cache inputs, and --decode 0 (exit 2).
Exit 0 when all checks pass, 1 otherwise, 77 when node or onnxruntime-node is missing (1 with KILN_REQUIRE_MODELS=1).
"""
from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "support"))
sys.path.insert(0, str(HERE.parent / "cli"))
from cli_checks import Checks, run_kiln  # noqa: E402
from kiln_requirements import skip_or_fail  # noqa: E402

RELATIVE_TOLERANCE = 1e-3  # of max|reference| per step
PROMPT = 8


def make_model(out: Path, form: str, layers: int, weights: str = "float"):
    subprocess.run([sys.executable, str(HERE / "make_decoder.py"), "--form", form, "--layers", str(layers),
                    "--weights", weights, "--out", str(out)], check=True)


def logits_within(kiln_logits, ort_logits):
    """(ok, max |difference|, bound): the element-by-element check of one step."""
    bound = RELATIVE_TOLERANCE * float(np.abs(ort_logits).max())
    worst = float(np.abs(kiln_logits.astype(np.float64) - ort_logits).max())
    return worst <= bound, worst, bound


def top2_margin(logits):
    last = np.sort(logits.reshape(-1, logits.shape[-1])[-1])
    return float(last[-1] - last[-2])


def cache_bytes_per_position(model: Path):
    """Bytes one more cached position adds over every past_key_values.* input ([batch, kv_heads, past, head])."""
    total = 0
    for value in onnx.load(str(model), load_external_data=False).graph.input:
        if value.name.startswith("past_key_values."):
            dims = value.type.tensor_type.shape.dim
            size = 4 if value.type.tensor_type.elem_type == TensorProto.FLOAT else 2
            total += dims[1].dim_value * dims[3].dim_value * size
    return total


def check_transfers(checks, label, report, model: Path, steps: int, io_binding: bool):
    """Bytes the session copied between host and device per decode step (Session::transfers): with the IoBinding
    the KV cache never crosses (up: at most the token feeds; down: exactly one logits row); without it the whole
    cache comes back every step. On the CPU EP nothing crosses."""
    transfers = report["kiln"]["transfers_per_step"]
    up = transfers["host_to_device"]["samples"]
    down = transfers["device_to_host"]["samples"]
    checks.expect(len(up) == steps and len(down) == steps, f"{label}: {len(up)} transfer samples, expected {steps}")
    if "vulkan" not in label:
        checks.expect(max(up + down, default=0) == 0, f"{label}: the CPU EP copied {max(up + down)} bytes a step")
        return
    vocab_row = 4 * (report["kiln"].get("vocab") or 0)
    position = cache_bytes_per_position(model)
    smallest_cache = position * (PROMPT + 1)
    if io_binding:
        # Up: the token feeds and what host nodes derive from them (seqlens, masks): tens to hundreds of bytes, less
        # than the key/value rows of a single cached position, so no part of the cache can be among them.
        checks.expect(max(up) < position, f"{label}: {max(up)} bytes up in a step, not less than one cached position "
                                          f"({position} B)")
        checks.expect(max(down) == vocab_row, f"{label}: {max(down)} bytes down in a step, expected one logits "
                                              f"row ({vocab_row})")
    else:
        checks.expect(min(down) >= smallest_cache, f"{label} without IoBinding: {min(down)} bytes down in a step, "
                                                   f"less than the cache ({smallest_cache})")
    print(f"{label}: host->device {max(up)} B, device->host {max(down)} B per decode step (largest), "
          f"io_binding={io_binding}; the cache is {smallest_cache}+ B")


def decode(checks, kiln, ort_dir, model: Path, ep: str, steps: int, work: Path, io_binding=True):
    """Runs kiln bench --decode with onnxruntime beside it; returns its JSON report (None on failure)."""
    logits_dir = work / f"{model.stem}_{ep.replace(',', '_')}_logits"
    shutil.rmtree(logits_dir, ignore_errors=True)
    code, out, err = run_kiln(kiln, "bench", str(model), "--decode", str(steps), "--prompt", str(PROMPT), "--ep", ep,
                              "--compare-onnxruntime", "--onnxruntime-node", ort_dir,
                              "--save-logits", str(logits_dir), "--json", "--quiet",
                              *([] if io_binding else ["--no-io-binding"]), timeout=120)
    label = f"{model.stem} on {ep}" + ("" if io_binding else " (no IoBinding)")
    if code != 0:
        return None, label, code, err
    report = json.loads(out)
    checks.expect("onnxruntime" in report, f"{label}: no onnxruntime column (was node found?)")
    if "onnxruntime" not in report:
        return None, label, code, err
    worst_ratio, min_margin = 0.0, float("inf")
    for k in range(steps + 1):
        mine = np.load(logits_dir / f"logits_{k}.npy")
        ref = np.load(logits_dir / "onnxruntime" / f"logits_{k}.npy")
        checks.expect(mine.shape == ref.shape, f"{label} step {k}: logits shape {mine.shape} vs {ref.shape}")
        if mine.shape != ref.shape:
            continue
        ok, worst, bound = logits_within(mine, ref)
        checks.expect(ok, f"{label} step {k}: max |kiln - ort| {worst:.3g} > {bound:.3g}")
        worst_ratio = max(worst_ratio, worst / bound)
        min_margin = min(min_margin, top2_margin(ref) / bound)
    mine_ids, ref_ids = report["kiln"]["generated_ids"], report["onnxruntime"]["generated_ids"]
    checks.expect(len(mine_ids) == steps + 1, f"{label}: {len(mine_ids)} tokens, expected {steps + 1}")
    checks.expect(report.get("tokens_identical") is True and mine_ids == ref_ids,
                  f"{label}: tokens differ\n  kiln {mine_ids}\n  ort  {ref_ids}")
    # Logits within the tolerance of onnxruntime's move a top-1/top-2 gap by at most 2 tolerances: a larger margin
    # makes identical argmaxes a consequence of the logits check, not luck (float rounding is ~1e-3 tolerances).
    checks.expect(min_margin > 2, f"{label}: top-1/top-2 margin only {min_margin:.1f} tolerances")
    check_transfers(checks, label, report, model, steps, io_binding)
    parts = ", ".join(f"{ep_name} {c['partitions']} ({c['nodes']} nodes)"
                      for ep_name, c in report["kiln"].get("partitions", {}).items())
    print(f"{label}: {len(mine_ids)} tokens identical={mine_ids == ref_ids}, worst logits error "
          f"{worst_ratio:.2e} of the tolerance, min top-1/top-2 margin {min_margin:.1f} tolerances; partitions: {parts}")
    return report, label, code, err


def partition_counts(report):
    """{EP name: partitions} of Kiln's session."""
    return {name: c["partitions"] for name, c in report["kiln"].get("partitions", {}).items()}


def vulkan_device(kiln):
    code, out, _ = run_kiln(kiln, "devices", "--json", timeout=60)
    if code != 0:
        return False
    try:
        return bool(json.loads(out).get("devices"))
    except (ValueError, AttributeError):
        return False


def bad_inputs(checks, kiln, work: Path, model: Path):
    plain = work / "no_cache.onnx"
    graph = helper.make_graph([helper.make_node("Identity", ["input_ids"], ["logits"])], "plain",
                              [helper.make_tensor_value_info("input_ids", TensorProto.INT64, [1, 4])],
                              [helper.make_tensor_value_info("logits", TensorProto.INT64, [1, 4])])
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), plain)
    code, _, err = run_kiln(kiln, "bench", str(plain), "--decode", "4", "--ep", "cpu")
    checks.expect(code == 2 and "past_key_values" in err, f"a model without a KV cache: exit {code}, {err.strip()}")
    code, _, err = run_kiln(kiln, "bench", str(model), "--decode", "0", "--ep", "cpu")
    checks.expect(code == 2 and "--decode" in err, f"--decode 0: exit {code}, {err.strip()}")
    code, _, err = run_kiln(kiln, "bench", str(model), "--decode", "2", "--prompt", "0", "--ep", "cpu")
    checks.expect(code == 2 and "--prompt" in err, f"--prompt 0: exit {code}, {err.strip()}")


def self_test(checks):
    """The logits check must be able to fail: a step perturbed by 1% of its range is refused."""
    ref = np.linspace(-4, 4, 256, dtype=np.float32)
    checks.expect(logits_within(ref, ref)[0], "self-test: identical logits refused")
    checks.expect(not logits_within(ref + 0.01 * 4, ref)[0], "self-test: logits 1% off accepted")


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--kiln", required=True)
    p.add_argument("--ort-dir", required=True)
    p.add_argument("--out", required=True)
    p.add_argument("--layers", type=int, default=3)
    p.add_argument("--steps", type=int, default=20)
    args = p.parse_args()
    if not shutil.which("node"):
        skip_or_fail("MODELS", "node is not on PATH")
    if not (Path(args.ort_dir) / "node_modules" / "onnxruntime-node").is_dir():
        skip_or_fail("MODELS", f"no onnxruntime-node under {args.ort_dir}")
    work = Path(args.out)
    work.mkdir(parents=True, exist_ok=True)
    checks = Checks("decoder checks")
    self_test(checks)

    eps = ["cpu"] + (["vulkan"] if vulkan_device(args.kiln) else [])
    if len(eps) == 1:
        print("no Vulkan device: the Vulkan EP part is skipped")
    tokens, one_step_partitions = {}, {}
    for form in ("contrib", "standard"):
        model = work / f"decoder_{form}.onnx"
        make_model(model, form, args.layers)
        for ep in eps:
            report, label, code, err = decode(checks, args.kiln, args.ort_dir, model, ep, args.steps, work)
            checks.expect(report is not None, f"{label}: kiln bench --decode exit {code}: {err.strip()[-600:]}")
            if report:
                tokens[(form, ep)] = report["kiln"]["generated_ids"]
                one_step_partitions[(form, ep)] = partition_counts(report)
    # One seed, one set of weights: every form on every EP generates the same ids.
    runs = {key: ids for key, ids in tokens.items()}
    first = runs.get(("contrib", "cpu"))
    for key, ids in runs.items():
        checks.expect(ids == first, f"{key[0]} form on {key[1]} generates other ids than contrib on cpu")

    int4 = work / "decoder_int4.onnx"
    make_model(int4, "contrib", args.layers, "int4")
    for ep in eps:
        report, label, code, err = decode(checks, args.kiln, args.ort_dir, int4, ep, args.steps, work)
        checks.expect(report is not None, f"{label}: kiln bench --decode exit {code}: {err.strip()[-600:]}")
        if report:
            one_step_partitions[("int4", ep)] = partition_counts(report)
            checks.expect(report["kiln"]["generated_ids"] == tokens.get(("contrib", "cpu")),
                          f"{label}: other ids than the float decoder (same dequantized weights)")
    if "vulkan" in eps:  # the counters must see the cache when it does cross
        report, label, code, err = decode(checks, args.kiln, args.ort_dir, int4, "vulkan", args.steps, work,
                                          io_binding=False)
        checks.expect(report is not None, f"{label}: kiln bench --decode exit {code}: {err.strip()[-600:]}")
    for form, ep in [(f, e) for f in ("contrib", "int4") for e in eps if e == "vulkan"]:
        # A decoder layer must stay on the device: the whole step is one Vulkan partition.
        parts = one_step_partitions.get((form, ep), {})
        checks.expect(list(parts) == ["VulkanExecutionProvider"] and parts["VulkanExecutionProvider"] == 1,
                      f"{form} decoder on vulkan runs in partitions {parts}, not one Vulkan partition")

    bad_inputs(checks, args.kiln, work, work / "decoder_contrib.onnx")
    return checks.finish()


if __name__ == "__main__":
    sys.exit(main())
