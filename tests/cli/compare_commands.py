#!/usr/bin/python3
"""kiln compare end to end: Vulkan against CPU (tiny_cnn and, when cached, PP-OCRv4 det) passes with every JSON
field; --atol 0 --rtol 0 --bisect names a node whose inputs agree and outputs do not, and its --reproducer shows
the divergence again through kiln compare and runs with kiln run; a model with one weight changed (made here with
python onnx) fails and bisect names the node that reads the weight; --against onnxruntime when onnxruntime-node is
cached; --max-fraction-beyond judges the fraction of elements beyond (models made here differing in one element of
1000); a missing onnxruntime-node and bad usage exit 2.

Usage: compare_commands.py KILN_BINARY SOURCE_DIR MODEL_CACHE   (exit 77: skipped, no Vulkan device and
KILN_REQUIRE_VULKAN unset)
"""
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
import onnx
from onnx import numpy_helper

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "support"))
from kiln_requirements import failure, required  # noqa: E402

failures = 0
checks = 0
FIELDS = ["max_abs_error", "max_rel_error", "mean_abs_error", "cosine_similarity", "fraction_beyond_tolerance",
          "worst", "nan_mismatches", "inf_mismatches", "shape_mismatch", "dtype_mismatch"]


def expect(condition, what):
    global failures, checks
    checks += 1
    if not condition:
        failures += 1
        print(f"FAIL: {what}")


def kiln(*args, cwd=None):
    result = subprocess.run([KILN, *map(str, args)], capture_output=True, text=True, timeout=300, cwd=cwd)
    return result.returncode, result.stdout, result.stderr


def compare_json(*args, cwd=None):
    code, out, err = kiln("compare", *args, "--json", "-q", cwd=cwd)
    try:
        return code, json.loads(out), err
    except json.JSONDecodeError:
        return code, {}, err + out


def vulkan_available():
    result = subprocess.run([KILN, "devices", "--json"], capture_output=True, text=True, timeout=120)
    return result.returncode == 0 and json.loads(result.stdout)["devices"]


def vulkan_against_cpu(model, *extra):
    code, report, err = compare_json(model, "--ep", "vulkan", "--against-ep", "cpu", *extra)
    expect(code == 0, f"{Path(model).name}: Vulkan against CPU passes at the default tolerance ({code}: {err})")
    expect(report.get("passed") is True and report.get("outputs"), f"{Path(model).name}: passed and outputs listed")
    for output in report.get("outputs", []):
        missing = [f for f in FIELDS if f not in output]
        expect(not missing, f"{Path(model).name}: output {output.get('name')} has every field (missing {missing})")
        expect(output["worst"] and {"index", "value", "reference"} <= set(output["worst"]), "worst has its fields")


def bisect_vulkan_cpu(tmp, model):
    repro = tmp / "repro"
    code, report, err = compare_json(model, "--ep", "vulkan", "--against-ep", "cpu", "--atol", 0, "--rtol", 0,
                                     "--bisect", "--bisect-chunk", 4, "--reproducer", repro)
    divergence = report.get("first_divergence")
    expect(code == 1 and divergence, f"zero tolerance: exit 1 and a first divergence ({code}: {err})")
    if not divergence:
        return
    nodes = {n.name or n.output[0] for n in onnx.load(model).graph.node}
    expect(divergence["node"] in nodes, f"first_divergence.node {divergence['node']} is a node of the model")
    expect(all(i["passed"] for i in divergence["inputs"]), "the node's inputs agree")
    expect(any(not o["passed"] for o in divergence["outputs"]), "the node's outputs do not")
    expect(report["bisect"]["chunks"] >= 1, "bisect reports its chunks")
    # The reproducer: kiln run runs it, and the same comparison on it diverges again.
    readme = (repro / "README.txt").read_text()
    expect("kiln run model.onnx" in readme and "kiln compare model.onnx" in readme, "README says how to run it")
    model_inputs = [i.name for i in onnx.load(repro / "model.onnx").graph.input]
    inputs = [f"{name}=input_{k}.npy" for k, name in enumerate(model_inputs)]
    run_args = [a for i in inputs for a in ("--input", i)]
    code, out, err = kiln("run", "model.onnx", *run_args, "--output-dir", "out", cwd=repro)
    expect(code == 0 and list((repro / "out").glob("*.npy")), f"kiln run runs the reproducer ({code}: {err})")
    code, again, err = compare_json("model.onnx", *run_args, "--ep", "vulkan", "--against-ep", "cpu", "--atol", 0,
                                    "--rtol", 0, cwd=repro)
    expect(code == 1 and not again.get("passed", True), f"the reproducer shows the divergence ({code}: {err})")
    # A compiled (ctx) model matches its source; bisect says why it cannot look inside it.
    code, _, err = kiln("compile", model, "-o", tmp / "ctx" / "tiny_ctx.onnx", "-q")
    expect(code == 0, f"kiln compile ({code}: {err})")
    code, report, err = compare_json(tmp / "ctx" / "tiny_ctx.onnx", "--ep", "vulkan", "--against", model)
    expect(code == 0 and report.get("passed"), f"the ctx model matches its source ({code}: {err})")
    code, _, err = kiln("compare", tmp / "ctx" / "tiny_ctx.onnx", "--ep", "vulkan", "--against", model, "--bisect")
    expect(code == 1 and "EPContext" in err, f"bisect of a ctx model explains itself ({code}: {err})")
    code, _, err = kiln("compare", model, "--ep", "vulkan", "--against-ep", "cpu", "--atol", 0, "--rtol", 0, "--bisect",
                        "--reproducer", repro)
    expect(code == 2 and "empty folder" in err, f"a reproducer folder that is not empty is refused ({code}: {err})")


def silero_bodies(tmp, model):
    """Silero VAD computes everything inside If branches: bisect must look into them."""
    np.save(tmp / "input.npy", np.random.default_rng(0).random((1, 512), dtype=np.float32) - 0.5)
    np.save(tmp / "sr.npy", np.array(16000, np.int64))
    np.save(tmp / "state.npy", np.zeros((2, 1, 128), np.float32))
    inputs = [a for n in ("input", "sr", "state") for a in ("--input", f"{n}={tmp / (n + '.npy')}")]
    vulkan_against_cpu(model, *inputs)
    code, report, err = compare_json(model, *inputs, "--ep", "vulkan", "--against-ep", "cpu", "--atol", 0, "--rtol", 0,
                                     "--bisect")
    divergence = report.get("first_divergence") or {}
    expect(code == 1 and divergence.get("node", "").startswith("If_0_then_branch"),
           f"silero: bisect names a node inside the 16 kHz branch ({code}: {divergence.get('node')} {err})")
    expect(all(i["passed"] for i in divergence.get("inputs", [])), "silero: the body node's inputs agree")


def changed_weight(tmp, model):
    proto = onnx.load(model)
    by_name = {i.name: i for i in proto.graph.initializer}
    reader = next(n for n in proto.graph.node if n.op_type == "Conv" and n.input[1] in by_name and
                  any(n.input[1] in m.input for m in proto.graph.node if m is not n) is False)
    weight = numpy_helper.to_array(by_name[reader.input[1]]).copy()
    weight.flat[0] += 0.5
    by_name[reader.input[1]].CopyFrom(numpy_helper.from_array(weight, reader.input[1]))
    changed = tmp / "changed.onnx"
    onnx.save(proto, changed)
    code, report, err = compare_json(model, "--ep", "cpu", "--against", changed, "--bisect")
    expect(code == 1 and report.get("passed") is False, f"a changed weight fails ({code}: {err})")
    divergence = report.get("first_divergence") or {}
    expect(divergence.get("node") == (reader.name or reader.output[0]),
           f"bisect names the node reading the changed weight: {divergence.get('node')} vs {reader.name}")
    weights = [i for i in divergence.get("inputs", []) if i["name"] == reader.input[1]]
    expect(weights and not weights[0]["passed"], "the changed weight is reported as differing")
    # --node-data: every node's error, in the per-node data format.
    node_data = tmp / "errors.json"
    code, report, err = compare_json(model, "--ep", "cpu", "--against", changed, "--node-data", node_data)
    expect(node_data.exists() and code == (0 if report.get("passed") else 1),
           f"--node-data writes its file; the exit code follows the outputs ({code}: {err})")
    if node_data.exists():
        data = json.loads(node_data.read_text())
        expect(data["format"] == "kiln-node-data" and data["kind"] == "compare", "node data format and kind")
        entries = {e["node"]: e for e in data["nodes"]}
        computing = [n.name for n in proto.graph.node if n.op_type != "Constant"]
        expect(set(entries) == set(computing), f"one entry per node: {sorted(entries)}")
        first = [name for name, e in entries.items() if e.get("first_divergence")]
        expect(first == [reader.name], f"the changed node is marked first_divergence: {first}")
        expect(all("max_abs_error" in e["metrics"] and "cosine_similarity" in e["metrics"] for e in entries.values()),
               "every entry has its error metrics")
        # abs_error_histogram: 14 decade bins of |difference| (bin 0 below 1e-10), summed over the node's outputs.
        for name, e in entries.items():
            histogram = e.get("abs_error_histogram", [])
            elements = sum(o["elements"] - o["nan_mismatches"] - o["inf_mismatches"] for o in e["outputs"])
            expect(len(histogram) == 14 and sum(histogram) == elements,
                   f"{name}: abs_error_histogram has 14 bins counting every finite pair ({histogram}, {elements})")
        changed_bins = entries.get(reader.name, {}).get("abs_error_histogram", [0])
        expect(sum(changed_bins[1:]) > 0, f"the changed node's differences leave bin 0: {changed_bins}")
    code, _, err = kiln("compare", model, "--against-ep", "cpu", "--node-data", tmp / "no-such-folder" / "x.json")
    expect(code == 2 and "no-such-folder" in err, f"--node-data in a missing folder: exit 2 ({code}: {err})")


def if_body_model(tmp):
    """If(c): then (x + 1) * 2, else -x; then Relu. Returns the model path and its --input arguments."""
    h, T = onnx.helper, onnx.TensorProto
    then = h.make_graph([h.make_node("Add", ["x", "one"], ["t1"], name="then_add"),
                         h.make_node("Mul", ["t1", "two"], ["t2"], name="then_mul")], "then", [],
                        [h.make_tensor_value_info("t2", T.FLOAT, [1, 4])],
                        [numpy_helper.from_array(np.array([1], np.float32), "one"),
                         numpy_helper.from_array(np.array([2], np.float32), "two")])
    other = h.make_graph([h.make_node("Neg", ["x"], ["e1"], name="else_neg")], "else", [],
                         [h.make_tensor_value_info("e1", T.FLOAT, [1, 4])])
    graph = h.make_graph([h.make_node("If", ["c"], ["y"], name="branch", then_branch=then, else_branch=other),
                          h.make_node("Relu", ["y"], ["z"], name="relu")], "main",
                         [h.make_tensor_value_info("x", T.FLOAT, [1, 4]), h.make_tensor_value_info("c", T.BOOL, [])],
                         [h.make_tensor_value_info("z", T.FLOAT, [1, 4])])
    model = h.make_model(graph, opset_imports=[h.make_opsetid("", 13)])
    model.ir_version = 8
    onnx.save(model, tmp / "if.onnx")
    np.save(tmp / "if_x.npy", np.array([[1, 2, -3, 4]], np.float32))
    np.save(tmp / "if_c.npy", np.array(True))
    return tmp / "if.onnx", ["--input", f"x={tmp / 'if_x.npy'}", "--input", f"c={tmp / 'if_c.npy'}"]


def onnxruntime(tmp, model, cache):
    ort_dir = Path(cache) / "ort"
    code, _, err = kiln("compare", model, "--against", "onnxruntime", "--onnxruntime-node", tmp / "no-ort")
    expect(code == 2 and "onnxruntime-node" in err, f"missing onnxruntime-node: exit 2 with a message ({code}: {err})")
    if not (ort_dir / "node_modules" / "onnxruntime-node").is_dir():
        print(f"SKIP: --against onnxruntime (no onnxruntime-node under {ort_dir})")
        return
    code, report, err = compare_json(model, "--ep", "cpu", "--against", "onnxruntime", "--onnxruntime-node", ort_dir)
    expect(code == 0 and report.get("reference") == "onnxruntime", f"CPU against onnxruntime passes ({code}: {err})")
    # Values inside an If body, one of them the branch's own output, exposed on onnxruntime too: exact agreement.
    if_model, inputs = if_body_model(tmp)
    code, report, err = compare_json(if_model, *inputs, "--ep", "cpu", "--against", "onnxruntime", "--onnxruntime-node",
                                     ort_dir, "--atol", 0, "--rtol", 0, "--node-data", tmp / "if_nodes.json")
    nodes = json.loads((tmp / "if_nodes.json").read_text())["nodes"] if (tmp / "if_nodes.json").exists() else []
    expect(code == 0 and len(nodes) == 5 and all(n["passed"] for n in nodes),
           f"If body values agree with onnxruntime: {[(n['node'], n['passed']) for n in nodes]} ({code}: {err})")


def offset_model(path, offsets):
    """y = x + offsets (float32, the shape of `offsets`): two such models differ exactly where their offsets do."""
    h, T = onnx.helper, onnx.TensorProto
    graph = h.make_graph([h.make_node("Add", ["x", "offsets"], ["y"], name="add")], "main",
                         [h.make_tensor_value_info("x", T.FLOAT, list(offsets.shape))],
                         [h.make_tensor_value_info("y", T.FLOAT, list(offsets.shape))],
                         [numpy_helper.from_array(offsets.astype(np.float32), "offsets")])
    model = h.make_model(graph, opset_imports=[h.make_opsetid("", 13)])
    model.ir_version = 8
    onnx.save(model, path)
    return path


def max_fraction_beyond(tmp):
    """--max-fraction-beyond F: an output with 1 of 1000 elements beyond passes at 0.001, fails at 0.0009 and at the
    default; the tolerance used is reported (JSON and text); a NaN mismatch fails whatever F; bad F is usage (2)."""
    zeros = np.zeros((1, 1000), np.float32)
    one_off = zeros.copy()
    one_off[0, 417] = 1
    base, changed = offset_model(tmp / "offset0.onnx", zeros), offset_model(tmp / "offset1.onnx", one_off)
    side = [base, "--ep", "cpu", "--against", changed, "--against-ep", "cpu"]
    code, report, err = compare_json(*side)
    expect(code == 1 and report.get("passed") is False and report.get("tolerance", {}).get("max_fraction_beyond") == 0,
           f"1 of 1000 beyond fails by default, max_fraction_beyond 0 reported ({code}: {report.get('tolerance')} {err})")
    code, report, err = compare_json(*side, "--max-fraction-beyond", "0.001")
    outputs = report.get("outputs") or [{}]
    expect(code == 0 and report.get("passed") is True and outputs[0].get("beyond_tolerance") == 1 and
           outputs[0].get("allowed_beyond") == 1 and outputs[0].get("passed") is True,
           f"1 of 1000 beyond passes with --max-fraction-beyond 0.001 ({code}: {outputs[0]} {err})")
    expect(report.get("tolerance") == {"atol": 1e-4, "rtol": 1e-3, "max_fraction_beyond": 0.001},
           f"JSON states the tolerance used: {report.get('tolerance')}")
    code, report, err = compare_json(*side, "--max-fraction-beyond", "0.0009")
    expect(code == 1 and report.get("passed") is False, f"1 of 1000 beyond fails at 0.0009 ({code}: {err})")
    code, out, err = kiln("compare", *side, "--max-fraction-beyond", "0.001")
    expect(code == 0 and "but at most 0.1% of each output's elements" in out and "1 beyond, 1 allowed" in out,
           f"the text report states the fraction and the allowance ({code}: {out} {err})")
    code, out, err = kiln("compare", *side)
    expect(code == 1 and "for every element" in out, f"the text report states the element-wise default ({code}: {out})")
    # A NaN on one side is never excused: x + NaN offset at one element.
    nan_off = zeros.copy()
    nan_off[0, 3] = np.nan
    with_nan = offset_model(tmp / "offset_nan.onnx", nan_off)
    code, report, err = compare_json(base, "--ep", "cpu", "--against", with_nan, "--against-ep", "cpu",
                                     "--max-fraction-beyond", "0.5")
    outputs = report.get("outputs") or [{}]
    expect(code == 1 and outputs[0].get("nan_mismatches") == 1,
           f"a NaN mismatch fails whatever the fraction ({code}: {outputs[0].get('nan_mismatches')} {err})")
    for bad in ("-0.1", "1", "1.5", "nan", "two"):
        code, _, err = kiln("compare", *side, "--max-fraction-beyond", bad)
        expect(code == 2 and "--max-fraction-beyond" in err,
               f"--max-fraction-beyond {bad}: exit 2 naming the option ({code}: {err.strip()})")


def usage_errors(tmp, model):
    np.save(tmp / "x.npy", np.zeros((1, 3, 32, 32), np.float32))
    for args in ([model], [model, "--against-ep", "gpu"], [model, "--against-ep", "cpu", "--atol", "-1"],
                 [model, "--against-ep", "cpu", "--reproducer", "x"], [model, "--against", "onnxruntime",
                 "--against-ep", "cpu"], [model, "--against-ep", "cpu", "--bogus"],
                 [model, "--against-ep", "cpu", "--input", f"nope={tmp / 'x.npy'}"],
                 [model, "--against-ep", "cpu", "--input-dir", tmp / "no-such-folder"]):
        code, _, err = kiln("compare", *args)
        expect(code == 2 and err.strip(), f"kiln compare {' '.join(map(str, args[1:]))}: exit 2 ({code})")


def main():
    global KILN
    KILN, source, cache = os.path.abspath(sys.argv[1]), Path(sys.argv[2]).resolve(), sys.argv[3]
    model = str(source / "resources/models/tiny_cnn.onnx")
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        usage_errors(tmp, model)
        max_fraction_beyond(tmp)
        changed_weight(tmp, model)
        onnxruntime(tmp, model, cache)
        if not vulkan_available():
            if required("VULKAN"):
                expect(False, failure("VULKAN", "no Vulkan device"))
            else:
                print("SKIP: Vulkan against CPU needs a Vulkan device (lavapipe will do)")
                return 77 if failures == 0 else 1
        vulkan_against_cpu(model)
        real = Path(cache) / "ch_PP-OCRv4_det_infer.onnx"
        if real.exists():
            vulkan_against_cpu(str(real), "--shape", "x=1x3x256x256")
        else:
            print(f"SKIP: {real} is not cached (tests/tools/fetch_models.sh)")
        bisect_vulkan_cpu(tmp, model)
        silero = Path(cache) / "silero_vad_v5.onnx"
        if silero.exists():
            silero_bodies(tmp, str(silero))
    print(f"{checks} checks, {failures} failures")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
