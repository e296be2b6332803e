#!/usr/bin/python3
"""kiln compile's ctx models read back with Debian's python3-onnx: onnx.checker.check_model accepts them, and the
EPContext attributes have ONNX Runtime's types (embed_mode/main_context/max_size INT, the rest STRING) and the
values the options asked for. Exit 77 (skipped) without a Vulkan device unless KILN_REQUIRE_VULKAN=1.
Usage: check_ctx_models.py KILN_BINARY SOURCE_DIR
"""
import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import onnx
from onnx import AttributeProto, TensorProto, helper, numpy_helper
import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "support"))
from kiln_requirements import skip_or_fail  # noqa: E402

failures = 0
STRING_ATTRIBUTES = ["ep_cache_context", "partition_name", "source", "ep_sdk_version", "hardware_architecture", "notes",
                     "onnx_model_filename"]
INT_ATTRIBUTES = ["embed_mode", "main_context", "max_size"]


def expect(condition, what):
    global failures
    if not condition:
        failures += 1
        print(f"FAIL: {what}")


def kiln(*args):
    result = subprocess.run([KILN, *map(str, args)], capture_output=True, text=True, timeout=300)
    return result.returncode, result.stdout, result.stderr


def two_partition_model(path):
    """Add, Mul, Relu (Vulkan) -> Mod (no Vulkan kernel: CPU) -> Add, Sigmoid (Vulkan); inputs declared mask, x."""
    rng = np.random.default_rng(7)
    inits = [numpy_helper.from_array(rng.uniform(0.5, 1.5, (1, 8)).astype(np.float32), "S"),
             numpy_helper.from_array(rng.uniform(0.8, 1.6, (2, 8)).astype(np.float32), "M"),
             numpy_helper.from_array(rng.uniform(-1, 1, (2, 8)).astype(np.float32), "B")]
    nodes = [helper.make_node("Add", ["x", "mask"], ["s"], "add_mask"),
             helper.make_node("Mul", ["s", "S"], ["m"], "scale"),
             helper.make_node("Relu", ["m"], ["aux"], "relu"),
             helper.make_node("Mod", ["aux", "M"], ["r"], "mod", fmod=1),
             helper.make_node("Add", ["r", "B"], ["b"], "add_b"),
             helper.make_node("Sigmoid", ["b"], ["y"], "sigmoid")]
    io = lambda name: helper.make_tensor_value_info(name, TensorProto.FLOAT, [2, 8])
    graph = helper.make_graph(nodes, "two", [io("mask"), io("x")], [io("y"), io("aux")], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    onnx.save(model, str(path))
    return model


def epcontext_nodes(graph):
    """EPContext nodes in the order the writer numbers them: graph order, bodies right after their node."""
    found = []
    for node in graph.node:
        if node.op_type == "EPContext":
            found.append(node)
        for attr in node.attribute:
            if attr.type == AttributeProto.GRAPH:
                found += epcontext_nodes(attr.g)
            for g in attr.graphs:
                found += epcontext_nodes(g)
    return found


def check_ctx(ctx_path, source, embed, binary_name, nodes, prefix="", external=None):
    """Checks one ctx model; `source` is the source ModelProto, `external` the external-initializer file, if any."""
    what = str(ctx_path)
    try:
        onnx.checker.check_model(str(ctx_path))  # by path: external data files are checked to exist too
    except Exception as error:  # noqa: BLE001 (the checker raises several types)
        expect(False, f"{what}: onnx.checker rejects it: {error}")
    model = onnx.load(str(ctx_path), load_external_data=False)
    expect([i.name for i in model.graph.input] == [i.name for i in source.graph.input], f"{what}: input order")
    expect([o.name for o in model.graph.output] == [o.name for o in source.graph.output], f"{what}: output order")
    expect(any(o.domain == "com.microsoft" and o.version == 1 for o in model.opset_import), f"{what}: com.microsoft opset")
    found = epcontext_nodes(model.graph)
    expect(len(found) == nodes, f"{what}: {len(found)} EPContext nodes, expected {nodes}")
    names = set()
    for index, node in enumerate(found):
        where = f"{what} node {index} '{node.name}'"
        attrs = {a.name: a for a in node.attribute}
        expect(node.domain == "com.microsoft", f"{where}: domain {node.domain}")
        expect(node.name.startswith(prefix), f"{where}: no prefix {prefix}")
        main = embed == 0 or index == 0
        for name in STRING_ATTRIBUTES:
            if name == "ep_cache_context" and not main:
                expect(name not in attrs, f"{where}: a main_context=0 node carries ep_cache_context")
                continue
            expect(name in attrs and attrs[name].type == AttributeProto.STRING,
                   f"{where}: {name} missing or not STRING ({attrs[name].type if name in attrs else None})")
        for name in INT_ATTRIBUTES:
            expect(name in attrs and attrs[name].type == AttributeProto.INT, f"{where}: {name} missing or not INT")
        value = lambda name: helper.get_attribute_value(attrs[name]) if name in attrs else None
        expect(value("source") == b"VulkanExecutionProvider", f"{where}: source {value('source')}")
        expect(value("embed_mode") == embed, f"{where}: embed_mode {value('embed_mode')}")
        expect(value("main_context") == (1 if main else 0), f"{where}: main_context {value('main_context')}")
        expect(value("max_size") == 0, f"{where}: max_size {value('max_size')}")
        if main:
            payload = value("ep_cache_context") or b""
            if embed == 0:
                expect(payload == binary_name.encode(), f"{where}: ep_cache_context {payload[:40]}")
            else:
                expect(payload.startswith(b"KILNVKCB"), f"{where}: embedded payload is not a context binary")
        partition = (value("partition_name") or b"").decode()
        expect(partition.startswith(prefix) and partition not in names, f"{where}: partition_name {partition}")
        names.add(partition)
        notes = json.loads(value("notes") or b"{}")
        expect(notes.get("producer") == "kiln" and notes.get("nodes", 0) > 0, f"{where}: notes {notes}")
        expect(value("ep_sdk_version"), f"{where}: empty ep_sdk_version")
        expect(value("hardware_architecture"), f"{where}: empty hardware_architecture")
    metadata = {p.key: p.value for p in model.metadata_props}
    expect(metadata.get("ep_compatibility_info.VulkanExecutionProvider", "").startswith("kiln;version="),
           f"{what}: compatibility metadata {metadata}")
    hash_key = f"kiln.context_binary_hash.{binary_name}"
    expect((hash_key in metadata) == (embed == 0), f"{what}: content id metadata {metadata}")
    if external:
        locations = {next((e.value for e in t.external_data if e.key == "location"), None)
                     for t in model.graph.initializer if t.data_location == TensorProto.EXTERNAL}
        expect(locations == {external}, f"{what}: external initializer locations {locations}")
    return model


def main():
    global KILN
    KILN, source_dir = sys.argv[1], Path(sys.argv[2])
    code, out, _ = kiln("devices", "--json")
    if code != 0 or not json.loads(out or "{}").get("devices"):
        skip_or_fail("VULKAN", "no Vulkan device")
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        tiny = tmp / "tiny_cnn.onnx"
        shutil.copy(source_dir / "resources/models/tiny_cnn.onnx", tiny)
        two = two_partition_model(tmp / "two.onnx")

        # Embed mode 0, explicit output path: <X stem without _ctx>_vulkan.bin beside it.
        code, out, err = kiln("compile", tiny, "-o", tmp / "out" / "tiny_ctx.onnx", "--json")
        expect(code == 0, f"compile tiny_cnn exits 0 ({code}: {err})")
        result = json.loads(out) if code == 0 else {}
        expect(sorted(Path(p).name for p in result.get("files_written", [])) == ["tiny_ctx.onnx", "tiny_vulkan.bin"],
               f"files written {result.get('files_written')}")
        check_ctx(tmp / "out" / "tiny_ctx.onnx", onnx.load(str(tiny)), 0, "tiny_vulkan.bin", 1)
        code, out, err = kiln("run", tmp / "out" / "tiny_ctx.onnx", "--ep", "vulkan", "--json")
        counters = json.loads(out)["counters"] if code == 0 else {}
        expect(code == 0 and counters.get("glslang_compiles") == 0 and counters.get("optimizer_passes_run") == 0
               and counters.get("weights_prepacked") == 0, f"kiln run of the ctx model: {code} {counters} {err}")

        # Embed mode 1 with a prefix and two partitions: the first node carries the payload.
        code, out, err = kiln("compile", tmp / "two.onnx", "--embed-mode", "1", "--prefix", "p_", "--json")
        expect(code == 0, f"compile two.onnx --embed-mode 1 exits 0 ({code}: {err})")
        expect(not (tmp / "two_vulkan.bin").exists(), "embed mode 1 wrote a binary file")
        model = check_ctx(tmp / "two_ctx.onnx", two, 1, "two_vulkan.bin", 2, prefix="p_")
        kept = {t.name for t in model.graph.initializer}
        expect(kept == {"M"}, f"initializers kept in the ctx model: {kept} (the Vulkan ones belong to the binary)")

        # External initializers of the CPU-fallback node.
        code, out, err = kiln("compile", tmp / "two.onnx", "-o", tmp / "ext" / "two_ctx.onnx",
                              "--ext-initializers", "weights.bin", "--ext-threshold", "0", "--json")
        expect(code == 0, f"compile with --ext-initializers exits 0 ({code}: {err})")
        check_ctx(tmp / "ext" / "two_ctx.onnx", two, 0, "two_vulkan.bin", 2, external="weights.bin")
        expect((tmp / "ext" / "weights.bin").stat().st_size >= 64 if (tmp / "ext" / "weights.bin").exists() else False,
               "weights.bin holds M")

        # A sharing group: two ctx models, one binary named after the first model.
        shutil.copy(tmp / "two.onnx", tmp / "share_b.onnx")
        code, out, err = kiln("compile", "--share", tmp / "two.onnx", tmp / "share_b.onnx", "-o", tmp / "shared", "--json")
        expect(code == 0, f"compile --share exits 0 ({code}: {err})")
        expect(sorted(p.name for p in (tmp / "shared").iterdir()) == ["share_b_ctx.onnx", "two_ctx.onnx", "two_vulkan.bin"],
               f"shared outputs {sorted(p.name for p in (tmp / 'shared').iterdir())}")
        check_ctx(tmp / "shared" / "two_ctx.onnx", two, 0, "two_vulkan.bin", 2, prefix="two_")
        check_ctx(tmp / "shared" / "share_b_ctx.onnx", two, 0, "two_vulkan.bin", 2, prefix="share_b_")

        # Errors keep the CLI's exit codes: an existing output with --error-if-exists is a failure (1).
        code, _, err = kiln("compile", tmp / "two.onnx", "--error-if-exists")
        expect(code == 1 and "exists already" in err, f"--error-if-exists on an existing output: {code} {err}")
    print(f"{failures} failures")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
