#!/usr/bin/python3
"""Generates a QDQ conv net as onnxruntime's static quantizer writes it (QuantizeLinear/DequantizeLinear pairs around
every activation, uint8 activations, per-channel int8 weights and int32 biases behind DequantizeLinear), with the data
movement between the convolutions that the exact QDQ drops cover: MaxPool, Concat (a skip connection whose inputs
share the output's parameters), Pad with zeros, nearest Resize, Transpose, Reshape and Gather. Random weights from a
fixed seed, so every run writes the same files.

Usage: make_qdq_net.py OUT_DIR [--size N] [--seed S]
Writes OUT_DIR/qdq_net.onnx and OUT_DIR/input.npy (1x3xNxN in [-1, 1]; N a multiple of 4, default 128).
"""
import argparse
import os

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


class Builder:
    def __init__(self, rng):
        self.rng = rng
        self.nodes, self.inits = [], []
        self.count = 0

    def name(self, stem):
        self.count += 1
        return f"{stem}_{self.count}"

    def const(self, stem, array):
        name = self.name(stem)
        self.inits.append(numpy_helper.from_array(np.asarray(array), name))
        return name

    def node(self, op, inputs, stem, **attrs):
        out = self.name(stem)
        self.nodes.append(helper.make_node(op, inputs, [out], name=out + "_node", **attrs))
        return out

    def qdq(self, x, scale, zero=128):
        """QuantizeLinear then DequantizeLinear with one uint8 scale/zero point pair (as the quantizer writes)."""
        s, z = self.const("s", np.float32(scale)), self.const("z", np.uint8(zero))
        q = self.node("QuantizeLinear", [x, s, z], "q")
        return self.node("DequantizeLinear", [q, s, z], "dq")

    def conv(self, x, x_scale, cin, cout, k, out_scale, **attrs):
        w = self.rng.standard_normal((cout, cin, k, k)).astype(np.float32) * np.sqrt(2.0 / (cin * k * k))
        w_scale = (np.abs(w).reshape(cout, -1).max(axis=1) / 127).astype(np.float32)
        wq = np.clip(np.round(w / w_scale[:, None, None, None]), -127, 127).astype(np.int8)
        wd = self.node("DequantizeLinear", [self.const("w", wq), self.const("ws", w_scale),
                                            self.const("wz", np.zeros(cout, np.int8))], "wdq", axis=0)
        b_scale = (np.float32(x_scale) * w_scale).astype(np.float32)
        bq = np.round(self.rng.standard_normal(cout) * 0.05 / b_scale).astype(np.int32)
        bd = self.node("DequantizeLinear", [self.const("b", bq), self.const("bs", b_scale)], "bdq", axis=0)
        y = self.node("Conv", [x, wd, bd], "conv", kernel_shape=[k, k], **attrs)
        return self.qdq(self.node("Relu", [self.qdq(y, out_scale)], "relu"), out_scale)


def build(size, seed):
    b = Builder(np.random.default_rng(seed))
    x = b.qdq("input", 1 / 127)
    c1 = b.conv(x, 1 / 127, 3, 16, 3, 0.05, pads=[1, 1, 1, 1], strides=[2, 2])
    p1 = b.qdq(b.node("MaxPool", [c1], "maxpool", kernel_shape=[2, 2], strides=[2, 2]), 0.05)  # dropped
    c2 = b.conv(p1, 0.05, 16, 16, 3, 0.05, pads=[1, 1, 1, 1])
    cat = b.qdq(b.node("Concat", [c2, p1], "concat", axis=1), 0.05)  # dropped: one scale for all three
    c3 = b.conv(cat, 0.05, 32, 16, 1, 0.04)
    padded = b.qdq(b.node("Pad", [c3, b.const("pads", np.array([0, 0, 1, 1, 0, 0, 1, 1], np.int64))], "pad"), 0.04)
    c4 = b.conv(padded, 0.04, 16, 16, 3, 0.04)
    up = b.qdq(b.node("Resize", [c4, "", b.const("scales", np.array([1, 1, 2, 2], np.float32))], "resize",
                      mode="nearest"), 0.04)  # dropped
    c5 = b.conv(up, 0.04, 16, 8, 3, 0.03, pads=[1, 1, 1, 1], strides=[2, 2])
    nhwc = b.qdq(b.node("Transpose", [c5], "transpose", perm=[0, 2, 3, 1]), 0.03)  # dropped
    side = size // 4
    rows = b.qdq(b.node("Reshape", [nhwc, b.const("shape", np.array([1, side * side, 8], np.int64))], "reshape"),
                 0.03)  # dropped
    picked = b.qdq(b.node("Gather", [rows, b.const("idx", np.arange(0, side * side, 7, dtype=np.int64))], "gather",
                          axis=1), 0.03)  # dropped
    wm = b.const("wm", (b.rng.standard_normal((8, 4)) * 0.3).astype(np.float32))
    out = b.node("MatMul", [picked, wm], "matmul")
    b.nodes.append(helper.make_node("Identity", [b.qdq(out, 0.02)], ["output"], name="output_node"))
    graph = helper.make_graph(b.nodes, "qdq_net",
                              [helper.make_tensor_value_info("input", TensorProto.FLOAT, [1, 3, size, size])],
                              [helper.make_tensor_value_info("output", TensorProto.FLOAT, [1, len(range(0, side * side, 7)), 4])], b.inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    onnx.checker.check_model(model)
    return model


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("out_dir")
    parser.add_argument("--size", type=int, default=128)
    parser.add_argument("--seed", type=int, default=7)
    args = parser.parse_args()
    if args.size < 8 or args.size % 4:
        parser.error("--size must be a multiple of 4, at least 8")
    os.makedirs(args.out_dir, exist_ok=True)
    onnx.save(build(args.size, args.seed), os.path.join(args.out_dir, "qdq_net.onnx"))
    rng = np.random.default_rng(args.seed + 1)
    np.save(os.path.join(args.out_dir, "input.npy"),
            rng.uniform(-1, 1, (1, 3, args.size, args.size)).astype(np.float32))
    print(os.path.join(args.out_dir, "qdq_net.onnx"))


if __name__ == "__main__":
    main()
