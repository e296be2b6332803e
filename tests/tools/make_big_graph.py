#!/usr/bin/python3
"""Generates a big synthetic model for the studio's graph view benchmark (tests/bench/graph_view_bench.cpp).

Residual blocks (1x1 Conv, Relu, 1x1 Conv, Sigmoid, Mul, Add) on a [1,16,32,32] tensor, with a Shrink every
`--partition-every` blocks: the Vulkan EP has no Shrink kernel, so the model splits into alternating Vulkan and
CPU partitions, as real models with unsupported ops do (the tensor is large enough that the partitioner's cost
model offloads each island: on [1,8,8,8] its work would not pay for the transfers). Exactly `--nodes` nodes (default 3000). Run with
Debian's python3:
    /usr/bin/python3 tests/tools/make_big_graph.py out.onnx [--nodes 3000] [--partition-every 25]
"""
import argparse

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("output")
    parser.add_argument("--nodes", type=int, default=3000)
    parser.add_argument("--partition-every", type=int, default=25)
    args = parser.parse_args()

    rng = np.random.default_rng(7)
    channels, side = 16, 32
    nodes, initializers = [], []
    current = "x"
    block = 0

    def add(node):
        if len(nodes) < args.nodes:
            nodes.append(node)
            return True
        return False

    while len(nodes) < args.nodes:
        b = f"b{block}"
        if block > 0 and block % args.partition_every == 0:
            if not add(helper.make_node("Shrink", [current], [f"{b}_shrink"], name=f"{b}_shrink", lambd=0.01)):
                break
            current = f"{b}_shrink"
        w1, w2 = f"{b}_w1", f"{b}_w2"
        initializers.append(numpy_helper.from_array(
            rng.standard_normal((channels, channels, 1, 1)).astype(np.float32) * 0.3, w1))
        initializers.append(numpy_helper.from_array(
            rng.standard_normal((channels, channels, 1, 1)).astype(np.float32) * 0.3, w2))
        steps = [
            helper.make_node("Conv", [current, w1], [f"{b}_c1"], name=f"{b}_conv1"),
            helper.make_node("Relu", [f"{b}_c1"], [f"{b}_r"], name=f"{b}_relu"),
            helper.make_node("Conv", [f"{b}_r", w2], [f"{b}_c2"], name=f"{b}_conv2"),
            helper.make_node("Sigmoid", [f"{b}_c2"], [f"{b}_s"], name=f"{b}_sigmoid"),
            helper.make_node("Mul", [f"{b}_c2", f"{b}_s"], [f"{b}_m"], name=f"{b}_mul"),
            helper.make_node("Add", [current, f"{b}_m"], [f"{b}_out"], name=f"{b}_add"),
        ]
        last = current
        for step in steps:
            if not add(step):
                break
            last = step.output[0]
        current = last
        block += 1

    # Unused weights of a block cut short would be dead initializers: keep only the ones read.
    read = {name for node in nodes for name in node.input}
    initializers = [i for i in initializers if i.name in read]
    graph = helper.make_graph(
        nodes, "big_graph",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, channels, side, side])],
        [helper.make_tensor_value_info(current, TensorProto.FLOAT, [1, channels, side, side])],
        initializer=initializers)
    model = helper.make_model(graph, producer_name="kiln-tests", opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    onnx.checker.check_model(model)
    onnx.save(model, args.output)
    print(f"{args.output}: {len(nodes)} nodes, {block} blocks")


if __name__ == "__main__":
    main()
