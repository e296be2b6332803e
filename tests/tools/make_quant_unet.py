#!/usr/bin/python3
"""Generates a U-Net like the dynamically quantized background-removal models (U2-Net/IS-Net style) and its float twin.

The quantized model has the structure onnxruntime's `quantize_dynamic` writes for Conv: DynamicQuantizeLinear on the
activation, ConvInteger with uint8 (or int8) weights and a weight zero point, Cast int32 -> float, Mul by
activation_scale * weight_scale, Add of the bias (reshaped to 1xCx1x1), then Relu. Around it: 3x3 convolutions with
dilations 1, 2, 4 and 8, a strided stem, MaxPool with ceil_mode=1 on odd sizes, bilinear Resize (mode 'linear' on 4D,
by `sizes` and by `scales`, coordinate modes half_pixel, pytorch_half_pixel and align_corners), Concat skip
connections, residual Adds and Sigmoid side outputs. The float model runs the same network with the dequantized
weights in float Convs. Random weights from a fixed seed, so every run writes the same files.

The quantized model has 64 quantized convolutions (about 580 nodes) and runs in well under a second on each side.

Usage: make_quant_unet.py OUT_DIR [--size N] [--seed S]
Writes OUT_DIR/quant_unet.onnx, OUT_DIR/float_unet.onnx and OUT_DIR/input.npy (1x3xNxN in [-0.5, 0.5], N <= 256).
"""
import argparse
import os

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


class Builder:
    """Adds nodes and initializers to one graph; `quantized` picks the dynamic-quantized or the float convolution."""

    def __init__(self, quantized, rng):
        self.quantized = quantized
        self.rng = rng
        self.nodes, self.inits = [], []
        self.count = 0
        self.quantized_values = {}  # float value -> its DynamicQuantizeLinear outputs (shared, as quantize_dynamic)

    def name(self, stem):
        self.count += 1
        return f"{stem}_{self.count}"

    def const(self, stem, array):
        name = self.name(stem)
        self.inits.append(numpy_helper.from_array(array, name))
        return name

    def node(self, op, inputs, stem, outputs=1, **attrs):
        node_name = self.name(stem)
        outs = [f"{node_name}_out{i}" if outputs > 1 else f"{node_name}_out" for i in range(outputs)]
        self.nodes.append(helper.make_node(op, inputs, outs, name=node_name, **attrs))
        return outs if outputs > 1 else outs[0]

    def quantize_activation(self, x):
        if x not in self.quantized_values:
            self.quantized_values[x] = self.node("DynamicQuantizeLinear", [x], "dql", outputs=3)
        return self.quantized_values[x]

    def conv(self, x, cin, cout, dilation=1, stride=1, relu=True, int8_weights=False):
        """3x3 convolution (padding = dilation keeps the size at stride 1), bias, optional Relu."""
        w = (self.rng.standard_normal((cout, cin, 3, 3)) * np.sqrt(2.0 / (cin * 9))).astype(np.float32)
        bias = (self.rng.standard_normal(cout) * 0.1).astype(np.float32)
        attrs = dict(kernel_shape=[3, 3], pads=[dilation] * 4, dilations=[dilation] * 2, strides=[stride] * 2)
        wq, w_scale, w_zp = quantize_weights(w, int8_weights)
        if self.quantized:
            xq, x_scale, x_zp = self.quantize_activation(x)
            acc = self.node("ConvInteger", [xq, self.const("w", wq), x_zp, self.const("w_zp", w_zp)], "convint",
                            **attrs)
            accf = self.node("Cast", [acc], "cast", to=TensorProto.FLOAT)
            scale = self.node("Mul", [x_scale, self.const("w_scale", w_scale)], "scale_mul")
            scaled = self.node("Mul", [accf, scale], "out_mul")
            bias_shape = self.const("bias_shape", np.array([1, -1, 1, 1], np.int64))
            y = self.node("Add", [scaled, self.node("Reshape", [self.const("b", bias), bias_shape], "bias_reshape")],
                          "bias_add")
        else:
            wf = ((wq.astype(np.float32) - np.float32(w_zp)) * w_scale).astype(np.float32)
            y = self.node("Conv", [x, self.const("w", wf), self.const("b", bias)], "conv", **attrs)
        return self.node("Relu", [y], "relu") if relu else y

    def pool(self, x):
        return self.node("MaxPool", [x], "pool", kernel_shape=[2, 2], strides=[2, 2], ceil_mode=1)

    def resize(self, x, channels, size=None, scale=None, mode="half_pixel"):
        """Bilinear Resize to size x size (by `sizes`, as exporters write after constant folding) or by `scale`."""
        roi = self.const("roi", np.array([], np.float32))
        if size is not None:
            inputs = [x, roi, "", self.const("sizes", np.array([1, channels, size, size], np.int64))]
        else:
            inputs = [x, roi, self.const("scales", np.array([1, 1, scale, scale], np.float32))]
        return self.node("Resize", inputs, "resize", mode="linear", coordinate_transformation_mode=mode)

    def concat(self, *xs):
        return self.node("Concat", list(xs), "concat", axis=1)


def quantize_weights(w, int8):
    """Per-tensor asymmetric uint8 (or symmetric int8) weights, as onnxruntime's quantizer computes them."""
    lo, hi = min(float(w.min()), 0.0), max(float(w.max()), 0.0)
    if int8:
        scale = np.float32(max(abs(lo), abs(hi)) / 127.0)
        q = np.clip(np.round(w / scale), -127, 127).astype(np.int8)
        return q, np.array(scale, np.float32), np.array(0, np.int8)
    scale = np.float32((hi - lo) / 255.0)
    zp = int(np.clip(np.round(-lo / scale), 0, 255))
    q = np.clip(np.round(w / scale) + zp, 0, 255).astype(np.uint8)
    return q, np.array(scale, np.float32), np.array(zp, np.uint8)


class UNet:
    """The network: a strided stem, RSU blocks (encoder-decoder with skips) down and up, sigmoid side outputs."""

    def __init__(self, builder):
        self.b = builder

    def rsu(self, x, size, cin, mid, cout, depth, mode):
        """U2-Net's RSU-L: an inner U-Net of `depth` levels with ceil-mode pooling, a dilated bottom, a residual."""
        xin = self.b.conv(x, cin, cout)
        skips, sizes = [self.b.conv(xin, cout, mid)], [size]
        h = skips[0]
        for level in range(1, depth - 1):
            h = self.b.pool(h)
            sizes.append((sizes[-1] + 1) // 2)
            h = self.b.conv(h, mid, mid, int8_weights=level % 2 == 0)
            skips.append(h)
        h = self.b.conv(h, mid, mid, dilation=2)
        for level in range(depth - 2, -1, -1):
            h = self.b.conv(self.b.concat(h, skips[level]), 2 * mid, mid if level else cout)
            if level:
                h = self.b.resize(h, mid, sizes[level - 1], mode=mode)
        return self.b.node("Add", [h, xin], "residual")

    def rsu_dilated(self, x, cin, mid, cout):
        """U2-Net's RSU-4F: no pooling, dilations 1, 2, 4, 8 down and 4, 2, 1 up."""
        xin = self.b.conv(x, cin, cout)
        h1 = self.b.conv(xin, cout, mid)
        h2 = self.b.conv(h1, mid, mid, dilation=2)
        h3 = self.b.conv(h2, mid, mid, dilation=4)
        h4 = self.b.conv(h3, mid, mid, dilation=8)
        h3d = self.b.conv(self.b.concat(h4, h3), 2 * mid, mid, dilation=4)
        h2d = self.b.conv(self.b.concat(h3d, h2), 2 * mid, mid, dilation=2)
        h1d = self.b.conv(self.b.concat(h2d, h1), 2 * mid, cout)
        return self.b.node("Add", [h1d, xin], "residual")

    def side(self, logits):
        return self.b.node("Sigmoid", [logits], "side")

    def build(self, image, size):
        b = self.b
        sizes = [(size + 1) // 2]  # the stem: stride 2, pad 1; then ceil-mode pooling halves
        for _ in range(3):
            sizes.append((sizes[-1] + 1) // 2)
        stem = b.conv(image, 3, 8, stride=2)
        e1 = self.rsu(stem, sizes[0], 8, 8, 16, 5, "half_pixel")
        e2 = self.rsu(b.pool(e1), sizes[1], 16, 8, 16, 4, "align_corners")
        e3 = self.rsu_dilated(b.pool(e2), 16, 8, 16)
        e4 = self.rsu_dilated(b.pool(e3), 16, 8, 16)
        d3 = self.rsu_dilated(b.concat(b.resize(e4, 16, sizes[2], mode="pytorch_half_pixel"), e3), 32, 8, 16)
        d2 = self.rsu(b.concat(b.resize(d3, 16, sizes[1], mode="align_corners"), e2), sizes[1], 32, 8, 16, 4,
                      "half_pixel")
        d1 = self.rsu(b.concat(b.resize(d2, 16, sizes[0]), e1), sizes[0], 32, 8, 16, 5, "align_corners")
        side3 = b.conv(d3, 16, 1, relu=False)
        return [self.side(b.conv(d1, 16, 1, relu=False)),
                self.side(b.resize(b.conv(d2, 16, 1, relu=False), 1, sizes[0])),
                self.side(b.resize(side3, 1, sizes[0], mode="align_corners")),
                self.side(b.resize(side3, 1, scale=2.0))]


def make_model(quantized, size, seed):
    rng = np.random.default_rng(seed)
    b = Builder(quantized, rng)
    outputs = UNet(b).build("input", size)
    out_names = [f"mask{i}" for i in range(len(outputs))]
    for src, dst in zip(outputs, out_names):
        b.nodes.append(helper.make_node("Identity", [src], [dst], name=f"{dst}_identity"))
    graph = helper.make_graph(
        b.nodes, "quant_unet" if quantized else "float_unet",
        [helper.make_tensor_value_info("input", TensorProto.FLOAT, [1, 3, size, size])],
        [helper.make_tensor_value_info(n, TensorProto.FLOAT, [1, 1, None, None]) for n in out_names],
        initializer=b.inits)
    model = helper.make_model(graph, producer_name="kiln-tests", opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    onnx.checker.check_model(model)
    return model


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("out_dir")
    parser.add_argument("--size", type=int, default=189, help="input height and width (<= 256)")
    parser.add_argument("--seed", type=int, default=19)
    args = parser.parse_args()
    if not 16 <= args.size <= 256:
        parser.error("--size must be in [16, 256]")
    os.makedirs(args.out_dir, exist_ok=True)
    for quantized, file in ((True, "quant_unet.onnx"), (False, "float_unet.onnx")):
        onnx.save(make_model(quantized, args.size, args.seed), os.path.join(args.out_dir, file))
    # Normalized as IS-Net normalizes (mean 0.5, std 1): negative values give the first DynamicQuantizeLinear
    # a zero point.
    pixels = np.random.default_rng(args.seed + 1).random((1, 3, args.size, args.size), dtype=np.float32)
    image = pixels - np.float32(0.5)
    np.save(os.path.join(args.out_dir, "input.npy"), image)


if __name__ == "__main__":
    main()
