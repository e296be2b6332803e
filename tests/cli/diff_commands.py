#!/usr/bin/python3
"""kiln diff end to end (issue 33, item 4), on small models made here with python onnx:
- a model against a copy with one Conv's pads and one initializer's values changed: exactly those two changes, in
  text ("2 changes: 1 node changed, 1 initializer changed") and JSON ("kind": "model_diff"), exit 1;
- a model against a byte copy and against a re-serialized copy: no change, exit 0;
- an attribute changed inside an If body: reported in "main/<if>.then_branch", not as a change of the If node;
- unnamed nodes paired by position and op type (a note says so); added and removed nodes, inputs, outputs, opsets;
- a missing file (NO_SUCHFILE), a file that is not ONNX (INVALID_PROTOBUF) and a missing argument: exit 2.

Usage: diff_commands.py KILN_BINARY
"""
import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

failures = 0
checks = 0


def expect(condition, what):
    global failures, checks
    checks += 1
    if not condition:
        failures += 1
        print(f"FAIL: {what}")


def kiln(*args):
    result = subprocess.run([KILN, *map(str, args)], capture_output=True, text=True, timeout=120)
    return result.returncode, result.stdout, result.stderr


def diff_json(a, b):
    code, out, err = kiln("diff", a, b, "--json")
    try:
        return code, json.loads(out), err
    except json.JSONDecodeError:
        return code, {}, err + out


def conv_net(pads=(0, 0, 0, 0), w2_scale=1.0):
    """x -> conv1 (pads) -> unnamed Relu -> conv2 (weights W2 * w2_scale in one element) -> y."""
    rng = np.random.default_rng(7)
    w1 = rng.standard_normal((4, 3, 3, 3)).astype(np.float32)
    w2 = rng.standard_normal((4, 4, 1, 1)).astype(np.float32)
    w2[1, 2, 0, 0] *= w2_scale
    nodes = [
        helper.make_node("Conv", ["x", "W1", "B1"], ["c1"], name="conv1", pads=list(pads), kernel_shape=[3, 3]),
        helper.make_node("Relu", ["c1"], ["r1"]),
        helper.make_node("Conv", ["r1", "W2"], ["y"], name="conv2", kernel_shape=[1, 1]),
    ]
    graph = helper.make_graph(
        nodes, "net", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 8, 8])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
        [numpy_helper.from_array(w1, "W1"), numpy_helper.from_array(np.zeros(4, np.float32), "B1"),
         numpy_helper.from_array(w2, "W2")])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])


def if_net(alpha=0.1):
    """An If whose then_branch holds a LeakyRelu of `alpha`."""
    def branch(name, node):
        output = helper.make_tensor_value_info(node.output[0], TensorProto.FLOAT, None)
        return helper.make_graph([node], name, [], [output])
    then_branch = branch("then", helper.make_node("LeakyRelu", ["x"], ["t"], name="leaky", alpha=alpha))
    else_branch = branch("else", helper.make_node("Relu", ["x"], ["e"], name="relu"))
    graph = helper.make_graph(
        [helper.make_node("If", ["cond"], ["y"], name="branch", then_branch=then_branch, else_branch=else_branch)],
        "if_net",
        [helper.make_tensor_value_info("cond", TensorProto.BOOL, []),
         helper.make_tensor_value_info("x", TensorProto.FLOAT, [2])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])


def save(model, path):
    onnx.save(model, str(path))
    return path


def check_two_changes(folder):
    a = save(conv_net(), folder / "a.onnx")
    b = save(conv_net(pads=(1, 1, 1, 1), w2_scale=2.0), folder / "b.onnx")
    code, out, err = kiln("diff", a, b)
    expect(code == 1, f"changed copy: exit 1 ({code}: {err})")
    expect("2 changes: 1 node changed, 1 initializer changed" in out, f"summary line:\n{out}")
    expect("changed conv1 (Conv): pads [0, 0, 0, 0] -> [1, 1, 1, 1]" in out, f"pads line:\n{out}")
    expect("changed W2: float32[4,4,1,1] content differs (1 of 16 elements)" in out, f"W2 line:\n{out}")
    expect(len([line for line in out.splitlines() if line.startswith("  ")]) == 2, f"exactly two change lines:\n{out}")
    code, report, err = diff_json(a, b)
    expect(code == 1 and report.get("kind") == "model_diff", f"JSON kind model_diff ({code}: {err})")
    expect(report.get("change_count") == 2 and report.get("identical") is False, f"JSON change_count 2: {report}")
    nodes = report.get("nodes", [])
    expect(len(nodes) == 1 and nodes[0]["name"] == "conv1" and nodes[0]["change"] == "changed"
           and nodes[0]["attributes"] == [{"name": "pads", "a": "[0, 0, 0, 0]", "b": "[1, 1, 1, 1]"}]
           and not nodes[0]["inputs_changed"] and not nodes[0]["op_type_changed"], f"JSON node: {nodes}")
    inits = report.get("initializers", [])
    expect(len(inits) == 1 and inits[0]["name"] == "W2" and inits[0]["content_changed"]
           and not inits[0]["type_changed"] and inits[0]["differing_elements"] == 1
           and inits[0]["hash_a"] != inits[0]["hash_b"], f"JSON initializer: {inits}")
    expect(report.get("opsets") == [] and report.get("inputs") == [] and report.get("outputs") == [],
           f"JSON: nothing else changed: {report}")
    expect(any("1 unnamed node matched by position and op type" in n for n in report.get("notes", [])),
           f"JSON note on the unnamed Relu: {report.get('notes')}")


def check_identical(folder):
    a = save(conv_net(), folder / "same_a.onnx")
    byte_copy = folder / "same_copy.onnx"
    shutil.copy(a, byte_copy)
    resaved = save(onnx.load(str(a)), folder / "same_resaved.onnx")
    for other in (byte_copy, resaved):
        code, out, err = kiln("diff", a, other)
        expect(code == 0 and out.strip().endswith("no differences"), f"{other.name}: identical ({code}: {out}{err})")
        code, report, err = diff_json(a, other)
        expect(code == 0 and report.get("identical") is True and report.get("change_count") == 0
               and report.get("nodes") == [] and report.get("initializers") == [], f"{other.name}: JSON {report}")


def check_body(folder):
    a = save(if_net(0.1), folder / "if_a.onnx")
    b = save(if_net(0.2), folder / "if_b.onnx")
    code, report, err = diff_json(a, b)
    nodes = report.get("nodes", [])
    expect(code == 1 and len(nodes) == 1 and nodes[0]["graph"] == "main/branch.then_branch"
           and nodes[0]["name"] == "leaky" and nodes[0]["attributes"][0]["name"] == "alpha"
           and nodes[0]["attributes"][0]["a"] == "0.1" and nodes[0]["attributes"][0]["b"] == "0.2",
           f"If body: one change in main/branch.then_branch ({code}: {nodes} {err})")
    code, out, _ = kiln("diff", a, b)
    expect("changed leaky (LeakyRelu) in main/branch.then_branch: alpha 0.1 -> 0.2" in out, f"If body text:\n{out}")


def check_structure(folder):
    a_model = conv_net()
    b_model = conv_net()
    b_model.graph.node.append(helper.make_node("Sigmoid", ["y"], ["z"], name="sig"))
    b_model.graph.output[0].name = "z"
    b_model.opset_import[0].version = 17
    del b_model.graph.node[1]  # the unnamed Relu
    b_model.graph.node[1].input[0] = "c1"
    a = save(a_model, folder / "s_a.onnx")
    b = save(b_model, folder / "s_b.onnx")
    code, report, err = diff_json(a, b)
    changes = {(n["name"], n["change"]) for n in report.get("nodes", [])}
    expect(code == 1 and changes == {("Relu_1", "removed"), ("sig", "added"), ("conv2", "changed")},
           f"structure: nodes {changes} ({code}: {err})")
    conv2 = [n for n in report.get("nodes", []) if n["name"] == "conv2"]
    expect(conv2 and conv2[0]["inputs_changed"] and conv2[0]["b"]["inputs"] == ["c1", "W2"], f"conv2 inputs: {conv2}")
    outputs = {(o["name"], o["change"]) for o in report.get("outputs", [])}
    expect(outputs == {("y", "removed"), ("z", "added")}, f"outputs: {outputs}")
    expect(report.get("opsets") == [{"domain": "", "change": "changed", "version_a": 13, "version_b": 17}],
           f"opsets: {report.get('opsets')}")


def check_errors(folder):
    a = save(conv_net(), folder / "e_a.onnx")
    code, _, err = kiln("diff", a, folder / "missing.onnx")
    expect(code == 2 and "NO_SUCHFILE" in err, f"missing file: exit 2, NO_SUCHFILE ({code}: {err})")
    junk = folder / "junk.onnx"
    junk.write_bytes(b"this is not a model\x00\xff" * 10)
    code, out, err = kiln("diff", junk, a, "--json")
    expect(code == 2 and "INVALID_PROTOBUF" in err, f"not ONNX: exit 2, INVALID_PROTOBUF ({code}: {err})")
    expect(json.loads(out or "{}").get("error", {}).get("code") == "INVALID_PROTOBUF", f"not ONNX: JSON error: {out}")
    code, _, err = kiln("diff", a)
    expect(code == 2, f"one argument: usage error, exit 2 ({code}: {err})")


if __name__ == "__main__":
    KILN = sys.argv[1]
    with tempfile.TemporaryDirectory(prefix="kiln_diff_") as temp:
        folder = Path(temp)
        check_two_changes(folder)
        check_identical(folder)
        check_body(folder)
        check_structure(folder)
        check_errors(folder)
    print(f"{checks - failures}/{checks} checks passed")
    sys.exit(1 if failures else 0)
