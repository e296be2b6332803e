#!/usr/bin/python3
"""Generates resources/models/tiny_cnn.onnx: the bundled default model for `kiln run` and the studio's sample.

A small image classifier (Conv+BatchNorm+Relu, MaxPool, depthwise Conv, GlobalAveragePool, Gemm, Softmax) on
a 1x3x32x32 input with a symbolic batch dimension, deterministic weights (seed 7). Run with Debian's python3:
    /usr/bin/python3 tests/tools/make_sample_model.py resources/models/tiny_cnn.onnx
"""
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def main(path: str) -> None:
    rng = np.random.default_rng(7)

    def weight(name, *shape, scale=0.2):
        return numpy_helper.from_array((rng.standard_normal(shape) * scale).astype(np.float32), name)

    inits = [
        weight("conv1.w", 8, 3, 3, 3), weight("conv1.b", 8),
        numpy_helper.from_array(np.linspace(0.5, 1.5, 8, dtype=np.float32), "bn1.scale"),
        numpy_helper.from_array(np.linspace(-0.1, 0.1, 8, dtype=np.float32), "bn1.bias"),
        numpy_helper.from_array(np.zeros(8, np.float32), "bn1.mean"),
        numpy_helper.from_array(np.ones(8, np.float32), "bn1.var"),
        weight("dw.w", 8, 1, 3, 3), weight("pw.w", 16, 8, 1, 1), weight("pw.b", 16),
        weight("fc.w", 10, 16), weight("fc.b", 10),
    ]
    nodes = [
        helper.make_node("Conv", ["image", "conv1.w", "conv1.b"], ["c1"], name="conv1", pads=[1, 1, 1, 1]),
        helper.make_node("BatchNormalization", ["c1", "bn1.scale", "bn1.bias", "bn1.mean", "bn1.var"], ["b1"],
                         name="bn1"),
        helper.make_node("Relu", ["b1"], ["r1"], name="relu1"),
        helper.make_node("MaxPool", ["r1"], ["p1"], name="pool1", kernel_shape=[2, 2], strides=[2, 2]),
        helper.make_node("Conv", ["p1", "dw.w"], ["d1"], name="depthwise", group=8, pads=[1, 1, 1, 1]),
        helper.make_node("Relu", ["d1"], ["d1c"], name="relu2"),
        helper.make_node("Conv", ["d1c", "pw.w", "pw.b"], ["c2"], name="pointwise"),
        helper.make_node("HardSigmoid", ["c2"], ["hs"], name="gate", alpha=0.2, beta=0.5),
        helper.make_node("Mul", ["c2", "hs"], ["g"], name="hardswish_mul"),
        helper.make_node("GlobalAveragePool", ["g"], ["gap"], name="gap"),
        helper.make_node("Flatten", ["gap"], ["flat"], name="flatten"),
        helper.make_node("Gemm", ["flat", "fc.w", "fc.b"], ["logits"], name="fc", transB=1),
        helper.make_node("Softmax", ["logits"], ["probabilities"], name="softmax", axis=-1),
    ]
    graph = helper.make_graph(
        nodes, "tiny_cnn",
        [helper.make_tensor_value_info("image", TensorProto.FLOAT, ["batch", 3, 32, 32])],
        [helper.make_tensor_value_info("probabilities", TensorProto.FLOAT, ["batch", 10])],
        initializer=inits)
    model = helper.make_model(graph, producer_name="kiln-tests", opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    model.doc_string = "Kiln's bundled sample model (tests/tools/make_sample_model.py)"
    onnx.checker.check_model(model)
    onnx.save(model, path)


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "resources/models/tiny_cnn.onnx")
