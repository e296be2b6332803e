#!/usr/bin/python3
"""kiln partition and kiln merge --dry-run on compiled (ctx) models: the engine's partition report of a model whose
EPContext nodes sit in If bodies, and the engine's merge plan. Device-specific binaries, so fields are checked
instead of golden files. Exits 77 (skipped) when no Vulkan device compiles, unless KILN_REQUIRE_VULKAN=1.
Usage: ctx_commands.py KILN_BINARY SOURCE_DIR
"""
import json
import subprocess
import sys
import tempfile
from pathlib import Path

import onnx
from onnx import TensorProto, helper

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "support"))
from kiln_requirements import skip_or_fail  # noqa: E402

failures = 0


def kiln(*args):
    result = subprocess.run([KILN, *map(str, args)], capture_output=True, text=True, timeout=600)
    return result.returncode, result.stdout, result.stderr


def expect(condition, what):
    global failures
    if not condition:
        failures += 1
        print(f"FAIL: {what}")


def if_model(path):
    """y = If(cond) then: Relu(x + 1) then Mod (CPU fallback) then Sigmoid; else: Neg(x)."""
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 4])
    cond = helper.make_tensor_value_info("cond", TensorProto.BOOL, [])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 4])
    one = helper.make_tensor("one", TensorProto.FLOAT, [4], [1.0] * 4)
    three = helper.make_tensor("three", TensorProto.FLOAT, [4], [3.0] * 4)
    then_y = helper.make_tensor_value_info("then_y", TensorProto.FLOAT, [2, 4])
    then_branch = helper.make_graph(
        [helper.make_node("Add", ["x", "one"], ["then_sum"], name="then_add"),
         helper.make_node("Relu", ["then_sum"], ["then_relu"], name="then_relu"),
         helper.make_node("Mod", ["then_relu", "three"], ["then_mod"], name="then_mod", fmod=1),
         helper.make_node("Sigmoid", ["then_mod"], ["then_y"], name="then_sigmoid")],
        "then", [], [then_y], [one, three])
    else_y = helper.make_tensor_value_info("else_y", TensorProto.FLOAT, [2, 4])
    else_branch = helper.make_graph(
        [helper.make_node("Neg", ["x"], ["else_neg"], name="else_neg"),
         helper.make_node("Tanh", ["else_neg"], ["else_y"], name="else_tanh")],
        "else", [], [else_y])
    branch = helper.make_node("If", ["cond"], ["y"], name="branch", then_branch=then_branch, else_branch=else_branch)
    graph = helper.make_graph([branch], "if_model", [x, cond], [y])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    onnx.save(model, path)


def epcontext_nodes(graph, path="main"):
    """(graph path, node name) of every EPContext node, bodies included (paths as the partition report spells them)."""
    found = []
    for index, node in enumerate(graph.node):
        if node.op_type == "EPContext":
            found.append((path, node.name))
        for attr in node.attribute:
            if attr.type == onnx.AttributeProto.GRAPH:
                name = node.name or f"{node.op_type}_{index}"
                found += epcontext_nodes(attr.g, f"{path}/{name}.{attr.name}")
    return found


def check_partition(tmp, embed):
    folder = tmp / f"embed{embed}"
    folder.mkdir()
    source = folder / "ifm.onnx"
    if_model(source)
    ctx = folder / "ifm_ctx.onnx"
    code, out, err = kiln("compile", source, "-o", ctx, "--embed-mode", embed, "--json")
    if code != 0:
        return code, err
    expected = epcontext_nodes(onnx.load(str(ctx)).graph)
    expect(len(expected) >= 2 and all(path != "main" for path, _ in expected),
           f"the EPContext nodes sit in the If bodies ({expected})")
    code, out, err = kiln("partition", ctx, "--json")
    expect(code == 0, f"kiln partition of the ctx model exits 0 (got {code}: {err})")
    report = json.loads(out) if code == 0 else {"graphs": []}
    graphs = {g["path"]: g for g in report["graphs"]}
    expect(report["graphs"] and report["graphs"][0]["path"] == "main", "main graph first")
    binary = "embedded" if embed == 1 else "ifm_vulkan.bin"
    for path, name in expected:
        label = f"'{name}' (EPContext)"
        graph = graphs.get(path, {"nodes": [], "partitions": []})
        nodes = [n for n in graph["nodes"] if n["node"] == label]
        expect(len(nodes) == 1 and nodes[0]["op_type"] == "EPContext" and
               nodes[0]["execution_provider"] == "VulkanExecutionProvider",
               f"{label} among the nodes of {path} ({graph['nodes']})")
        partitions = [p for p in graph["partitions"] if p["nodes"] == [label]]
        expect(len(partitions) == 1 and partitions[0]["compiled"] and partitions[0].get("binary") == binary,
               f"{label} is a compiled partition naming binary {binary} ({graph['partitions']})")
    cpu = [p for g in report["graphs"] for p in g["partitions"] if not p["compiled"]]
    expect(cpu and all("binary" not in p and p["execution_provider"] == "CPUExecutionProvider" for p in cpu),
           f"CPU-fallback runs carry no binary key ({cpu})")
    then_cpu = [n for n in graphs.get("main/branch.then_branch", {"nodes": []})["nodes"] if n["op_type"] == "Mod"]
    expect(len(then_cpu) == 1 and then_cpu[0]["execution_provider"] == "CPUExecutionProvider",
           f"the then-branch's Mod runs on the CPU EP ({then_cpu})")
    expect(report["summary"]["compiled_partitions"] == len(expected), f"summary {report['summary']}")

    code, out, err = kiln("partition", ctx)
    expect(code == 0 and f"binary: {binary}" in out, f"the text report names the binary ({code}: {out}{err})")
    return 0, ""


def check_merge_dry_run(tmp):
    model = SOURCE / "resources/models/tiny_cnn.onnx"
    for name in ("a", "b"):
        (tmp / name).mkdir()
        code, _, err = kiln("compile", model, "-o", tmp / name / "tiny_ctx.onnx")
        expect(code == 0, f"compile {name} exits 0 (got {code}: {err})")
    a, b = tmp / "a" / "tiny_ctx.onnx", tmp / "b" / "tiny_ctx.onnx"
    out_path = tmp / "merged" / "ab_ctx.onnx"
    code, out, err = kiln("merge", a, b, "-o", out_path, "--prefix", "a_", "--prefix", "b_", "--dry-run", "--json")
    expect(code == 0, f"dry run exits 0 (got {code}: {err})")
    plan = json.loads(out) if code == 0 else {}
    expect(plan.get("ok") is True and not plan.get("conflicts"), f"plan ok ({plan.get('conflicts')})")
    expect([v["name"] for v in plan.get("inputs", [])] == ["a_image", "b_image"], f"inputs {plan.get('inputs')}")
    expect(sorted(g["name"] for g in plan.get("graphs", [])) == ["a_vulkan_0", "b_vulkan_0"], f"graphs {plan.get('graphs')}")
    expect(any(n["epcontext"] and n["partition"] == "a_vulkan_0" for n in plan.get("nodes", [])), "EPContext node listed")
    expect(not out_path.parent.exists(), "a dry run writes nothing")

    code, out, err = kiln("merge", a, b, "-o", out_path, "--prefix", "x_", "--prefix", "x_", "--dry-run", "--json")
    plan = json.loads(out) if out else {}
    expect(code == 2 and plan.get("ok") is False, f"identical prefixes: exit 2 and ok false (got {code})")
    expect(any("node 'x_" in c for c in plan.get("conflicts", [])), f"node conflict listed ({plan.get('conflicts')})")
    expect("name conflict(s) after prefixing (give each input its own prefix)" in err and "--prefix" not in err,
           f"the engine's message names the option, not the flag ({err})")

    code, out, err = kiln("merge", a, b, "-o", out_path, "--prefix", "a_", "--prefix", "b_", "--connect",
                          "a_nothing=b_image", "--dry-run", "--json")
    plan = json.loads(out) if out else {}
    connections = plan.get("connections", [])
    expect(code == 2 and len(connections) == 1 and "not an output" in connections[0]["problem"],
           f"a bad connection is refused with its reason ({code}: {connections})")
    expect("--connect" not in err, f"no CLI flag in the engine's message ({err})")


def main():
    global KILN, SOURCE
    KILN, SOURCE = sys.argv[1], Path(sys.argv[2])
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        for embed in (0, 1):
            code, err = check_partition(tmp, embed)
            if code != 0:
                skip_or_fail("VULKAN", f"no Vulkan device compiles (compile exits {code}: {err.strip()})")
        check_merge_dry_run(tmp)
    print(f"{failures} failure(s)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
