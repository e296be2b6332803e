#!/usr/bin/python3
"""The QDQ handling of level `all` end to end through the CLI, on the QDQ conv net of tests/tools/make_qdq_net.py
(onnxruntime's static quantizer style, with MaxPool, Concat, Pad, Resize, Transpose, Reshape and Gather between QDQ
pairs, and five QDQ Conv units):
- `kiln partition --json` at kiln.graph_optimization_level=all shows 24 nodes fewer than at basic (the exact drops'
  seven pairs, one DequantizeLinear of which stays for a Conv unit; the five Conv units fused into QLinearConv take
  their QuantizeLinear and input DequantizeLinear with them: basic folds the weights' DequantizeLinear nodes), one
  partition on the CPU EP and one Vulkan partition with every node;
- `kiln compare`: Vulkan against the CPU EP at level all with atol 0; level all against basic within one output
  quantization step (the fused units accumulate in integers and requantize once, the float path does not);
- against onnxruntime-node (graph optimization 'all', which fuses the same units) when it is cached: atol 0.
Exits 77 (skipped) without a Vulkan device unless KILN_REQUIRE_VULKAN=1.
Usage: qdq_drop.py KILN_BINARY SOURCE_DIR MODEL_CACHE
"""
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

from cli_checks import Checks, run_kiln

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "support"))
from kiln_requirements import failure, required  # noqa: E402

checks = Checks("qdq_drop")
expect = checks.expect
LEVEL = "kiln.graph_optimization_level"
OUTPUT_STEP = 0.02  # the output QuantizeLinear's scale in make_qdq_net.py
DROPPED_NODES = 24


def kiln(*args):
    return run_kiln(KILN, *map(str, args), timeout=600)


def summary(model, ep, level):
    code, out, err = kiln("partition", model, "--ep", ep, "--json", "--config", f"{LEVEL}={level}")
    expect(code == 0, f"kiln partition --ep {ep} at {level} ({code}: {err.strip()})")
    return json.loads(out).get("summary", {}) if code == 0 and out else {}


def compare(model, inputs, side, reference, atol, what):
    code, out, err = kiln("compare", model, *inputs, *side, *reference, "--atol", atol, "--rtol", 0, "--json", "-q")
    report = json.loads(out) if out else {}
    worst = [o.get("max_abs_error") for o in report.get("outputs", [])]
    expect(code == 0 and report.get("passed") is True, f"{what} within atol {atol} ({code}: {worst} {err.strip()})")
    print(f"{what}: max abs error {worst}")


def main():
    global KILN
    KILN, source, cache = os.path.abspath(sys.argv[1]), Path(sys.argv[2]).resolve(), Path(sys.argv[3])
    code, out, _ = kiln("devices", "--json")
    vulkan = code == 0 and bool(json.loads(out).get("devices"))
    if not vulkan and required("VULKAN"):
        print(f"FAIL: {failure('VULKAN', 'no Vulkan device')}")
        return 1
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        subprocess.run(["/usr/bin/python3", source / "tests/tools/make_qdq_net.py", tmp, "--size", "32"], check=True,
                       capture_output=True)
        model, inputs = tmp / "qdq_net.onnx", ["--input", f"input={tmp / 'input.npy'}"]
        basic, all_ = summary(model, "cpu", "basic"), summary(model, "cpu", "all")
        nodes = lambda s: sum(s.get("nodes_per_execution_provider", {}).values())
        expect(nodes(basic) - nodes(all_) == DROPPED_NODES and all_.get("partitions") == 1,
               f"CPU EP: level all runs {DROPPED_NODES} nodes fewer in one partition ({basic} / {all_})")
        compare(model, inputs, ["--ep", "cpu", "--config", f"{LEVEL}=all"],
                ["--against-ep", "cpu", "--against-config", f"{LEVEL}=basic"], OUTPUT_STEP * 1.001,
                "CPU EP, level all against basic")
        if vulkan:
            on_vulkan = summary(model, "vulkan,cpu", "all")
            expect(list(on_vulkan.get("nodes_per_execution_provider", {})) == ["VulkanExecutionProvider"]
                   and on_vulkan.get("partitions") == 1 and nodes(on_vulkan) == nodes(all_),
                   f"Vulkan: every node in one partition at level all ({on_vulkan})")
            compare(model, inputs, ["--ep", "vulkan", "--config", f"{LEVEL}=all"],
                    ["--against-ep", "vulkan", "--against-config", f"{LEVEL}=basic"], OUTPUT_STEP * 1.001,
                    "Vulkan, level all against basic")
            compare(model, inputs, ["--ep", "vulkan", "--config", f"{LEVEL}=all"],
                    ["--against-ep", "cpu", "--against-config", f"{LEVEL}=all"], 0, "Vulkan against the CPU EP")
        ort = cache / "ort"
        if (ort / "node_modules" / "onnxruntime-node").is_dir():
            compare(model, inputs, ["--ep", "cpu", "--config", f"{LEVEL}=all"],
                    ["--against", "onnxruntime", "--onnxruntime-node", ort], 0,
                    "CPU EP at level all against onnxruntime")
        else:
            print(f"SKIP: against onnxruntime (no onnxruntime-node under {ort})")
    code = checks.finish()
    return 77 if code == 0 and not vulkan else code


if __name__ == "__main__":
    sys.exit(main())
