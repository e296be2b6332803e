#!/usr/bin/python3
"""Generates two small models that differ in three ways, for kiln-studio's model diff test and screenshot tour.

A: x -> Conv 'conv' (W, B; strides 1) -> Relu 'relu' -> Conv 'head' (W2) -> y
B: x -> Sigmoid 'gate' (added) -> Conv 'conv' (strides 2, reads gate's output) -> Relu 'relu' -> Conv 'head' (W2 with
   one element doubled) -> y
so `kiln diff A B` reports exactly: node conv changed (strides, and its first input), node gate added, initializer W2
changed. Run with Debian's python3:
    /usr/bin/python3 tests/tools/make_diff_models.py OUT_DIR     (writes OUT_DIR/diff_a.onnx and OUT_DIR/diff_b.onnx)
"""
import argparse
from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def model(b_side: bool) -> onnx.ModelProto:
    rng = np.random.default_rng(3)
    w = rng.standard_normal((8, 3, 3, 3)).astype(np.float32)
    bias = rng.standard_normal(8).astype(np.float32)
    w2 = rng.standard_normal((4, 8, 1, 1)).astype(np.float32)
    nodes = []
    conv_input = "x"
    if b_side:
        w2[2, 5, 0, 0] *= 2.0
        nodes.append(helper.make_node("Sigmoid", ["x"], ["x_gated"], name="gate"))
        conv_input = "x_gated"
    strides = [2, 2] if b_side else [1, 1]
    nodes += [
        helper.make_node("Conv", [conv_input, "W", "B"], ["c"], name="conv", kernel_shape=[3, 3], pads=[1, 1, 1, 1],
                         strides=strides),
        helper.make_node("Relu", ["c"], ["r"], name="relu"),
        helper.make_node("Conv", ["r", "W2"], ["y"], name="head", kernel_shape=[1, 1]),
    ]
    graph = helper.make_graph(
        nodes, "diff_net", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 16, 16])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4, "h", "w"])],
        [numpy_helper.from_array(w, "W"), numpy_helper.from_array(bias, "B"), numpy_helper.from_array(w2, "W2")])
    result = helper.make_model(graph, producer_name="kiln-tests", opset_imports=[helper.make_opsetid("", 13)])
    result.ir_version = 8
    onnx.checker.check_model(result)
    return result


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("out_dir")
    args = parser.parse_args()
    out = Path(args.out_dir)
    out.mkdir(parents=True, exist_ok=True)
    onnx.save(model(False), out / "diff_a.onnx")
    onnx.save(model(True), out / "diff_b.onnx")


if __name__ == "__main__":
    main()
