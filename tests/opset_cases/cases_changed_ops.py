"""Cases for ops whose signature changed in opsets 18-23 (inputs instead of attributes, new attributes, new modes)
and for the version bumps that only added types (run at the new opset with the types Kiln supports)."""
from __future__ import annotations

import numpy as np
from onnx import TensorProto, helper

from case_builder import Const, Int4Const, floats, graph_case, ints, rng, single

F, F16, D, I64, I32, B, U8, I8 = (TensorProto.FLOAT, TensorProto.FLOAT16, TensorProto.DOUBLE, TensorProto.INT64,
                                  TensorProto.INT32, TensorProto.BOOL, TensorProto.UINT8, TensorProto.INT8)

REDUCE_OPS = ("ReduceMax", "ReduceMin", "ReduceMean", "ReduceSum", "ReduceProd", "ReduceL1", "ReduceL2",
              "ReduceLogSum", "ReduceLogSumExp", "ReduceSumSquare")


def reduce_cases():
    out = []
    for op in REDUCE_OPS:
        r = rng(op)
        positive = op == "ReduceLogSum"
        x = np.abs(floats(r, 2, 3, 4)) + 0.5 if positive else floats(r, 2, 3, 4)
        axes = lambda v: Const("axes", np.array(v, np.int64))  # noqa: E731
        out.append(single(op, 18, "axes_input", [("x", x), axes([1])]))
        out.append(single(op, 18, "neg_axes_nokeep", [("x", x), axes([-1, 0])], {"keepdims": 0}))
        out.append(single(op, 18, "no_axes", [("x", x)]))
        out.append(single(op, 18, "empty_axes_noop", [("x", x), axes(np.zeros(0, np.int64))],
                          {"noop_with_empty_axes": 1}))
        out.append(single(op, 18, "empty_axes_all", [("x", x), axes(np.zeros(0, np.int64))], {"keepdims": 0}))
        out.append(single(op, 18, "axes_graph_input", [("x", x), ("axes", np.array([2, 0], np.int64))]))
        if op in ("ReduceSum", "ReduceProd", "ReduceMax", "ReduceMin"):
            xi = ints(r, -4, 4, 3, 5, dtype=np.int32)
            out.append(single(op, 18, "int32", [("xi", xi), axes([0])]))
        if op in ("ReduceSum", "ReduceMean", "ReduceL2"):
            out.append(single(op, 18, "empty_dim_kept", [("x", np.zeros((2, 0, 3), np.float32)), axes([2])]))
    for op in ("ReduceMax", "ReduceMin"):
        for opset in (20, 23):
            xb = rng(f"{op}b").random((3, 4)) > 0.5
            out.append(single(op, opset, "bool", [("x", xb), Const("axes", np.array([1], np.int64))], {"keepdims": 0}))
            # (An empty bool reduction has no reference: onnxruntime refuses it.)
            x = floats(rng(op + str(opset)), 2, 5)
            out.append(single(op, opset, "float", [("x", x), Const("axes", np.array([-1], np.int64))]))
    return out


def split_cases():
    out = []
    r = rng("split")
    x = floats(r, 7, 4)
    out.append(single("Split", 18, "num_outputs_uneven", [("x", x)], {"axis": 0, "num_outputs": 3}, outputs=3))
    out.append(single("Split", 18, "num_outputs_even", [("x", x)], {"axis": -1, "num_outputs": 2}, outputs=2))
    out.append(single("Split", 18, "split_input", [("x", x), Const("split", np.array([2, 5], np.int64))],
                      {"axis": 0}, outputs=2))
    out.append(single("Split", 18, "num_outputs_4_of_3", [("x", floats(r, 2, 3))], {"axis": 1, "num_outputs": 3},
                      outputs=3))
    out.append(single("Split", 18, "zero_part", [("x", x), Const("split", np.array([0, 4], np.int64))],
                      {"axis": 1}, outputs=2))
    return out


def pad_cases():
    out = []
    r = rng("pad")
    x = floats(r, 2, 3, 4)
    for mode in ("constant", "reflect", "edge", "wrap"):
        opset = 19 if mode == "wrap" else 18
        out.append(single("Pad", opset, f"{mode}_axes", [("x", x), Const("pads", np.array([1, 2, 0, 1], np.int64)),
                                                          None, Const("axes", np.array([1, -1], np.int64))],
                          {"mode": mode}))
    out.append(single("Pad", 19, "wrap_all", [("x", x), Const("pads", np.array([0, 2, 3, 1, 1, 2], np.int64))],
                      {"mode": "wrap"}))
    out.append(single("Pad", 19, "wrap_negative", [("x", x), Const("pads", np.array([0, -1, 2, 0, 1, -1],
                                                                                   np.int64))], {"mode": "wrap"}))
    out.append(single("Pad", 18, "constant_value_axes",
                      [("x", x), Const("pads", np.array([2, 1], np.int64)), Const("v", np.array(1.5, np.float32)),
                       Const("axes", np.array([0], np.int64))]))
    out.append(single("Pad", 21, "int8_edge", [("x", ints(r, -9, 9, 3, 3, dtype=np.int8)),
                                                Const("pads", np.array([1, 1, 1, 1], np.int64))], {"mode": "edge"}))
    out.append(single("Pad", 23, "constant", [("x", x), Const("pads", np.array([0, 1, 0, 0, 0, 1], np.int64))]))
    return out


def resize_cases():
    out = []
    r = rng("resize")
    x = floats(r, 1, 2, 8, 8)

    def scales(*v):
        return Const("scales", np.array(v, np.float32))

    def sizes(*v):
        return Const("sizes", np.array(v, np.int64))

    out.append(single("Resize", 18, "antialias_linear", [("x", x), None, scales(1, 1, 0.5, 0.375)],
                      {"mode": "linear", "antialias": 1}))
    out.append(single("Resize", 18, "antialias_cubic", [("x", x), None, scales(1, 1, 0.6, 0.5)],
                      {"mode": "cubic", "antialias": 1}))
    out.append(single("Resize", 18, "antialias_upsample", [("x", x), None, scales(1, 1, 1.5, 2)],
                      {"mode": "linear", "antialias": 1}))
    out.append(single("Resize", 18, "axes_scales", [("x", x), None, scales(0.5, 2)],
                      {"mode": "linear", "axes": [2, 3]}))
    out.append(single("Resize", 18, "axes_sizes_neg", [("x", x), None, None, sizes(5, 3)],
                      {"mode": "nearest", "axes": [-1, -2]}))
    for policy in ("not_larger", "not_smaller"):
        out.append(single("Resize", 18, f"aspect_{policy}", [("x", floats(r, 1, 1, 4, 6)), None, None,
                                                             sizes(1, 1, 6, 6)],
                          {"mode": "nearest", "keep_aspect_ratio_policy": policy}))
        out.append(single("Resize", 18, f"aspect_{policy}_axes", [("x", floats(r, 1, 1, 4, 6)), None, None,
                                                                  sizes(3, 4)],
                          {"mode": "nearest", "keep_aspect_ratio_policy": policy, "axes": [2, 3]}))
    out.append(single("Resize", 19, "half_pixel_symmetric", [("x", x), None, scales(1, 1, 0.75, 1.6)],
                      {"mode": "linear", "coordinate_transformation_mode": "half_pixel_symmetric"}))
    out.append(single("Resize", 19, "half_pixel_symmetric_nearest", [("x", x), None, scales(1, 1, 1.25, 0.5)],
                      {"mode": "nearest", "coordinate_transformation_mode": "half_pixel_symmetric"}))
    return out


def scatter_cases():
    out = []
    r = rng("scatter")
    data = floats(r, 3, 4)
    for red in ("max", "min"):
        idx = np.array([[0, 1, 1], [2, 0, 0]], np.int64)
        upd = floats(r, 2, 3)
        out.append(single("ScatterElements", 18, f"{red}", [("data", data), ("idx", idx), ("upd", upd)],
                          {"axis": 0, "reduction": red}))
        out.append(single("ScatterElements", 18, f"{red}_neg_axis", [("data", data), ("idx", -idx - 1), ("upd", upd)],
                          {"axis": -1, "reduction": red}))
        nd_idx = np.array([[0], [2], [0]], np.int64)
        out.append(single("ScatterND", 18, f"{red}", [("data", data), ("idx", nd_idx), ("upd", floats(r, 3, 4))],
                          {"reduction": red}))
        di = ints(r, -5, 5, 4, 2, dtype=np.int32)
        out.append(single("ScatterND", 18, f"{red}_int32", [("data", di), ("idx", np.array([[1, 1], [1, 1]], np.int64)),
                                                            ("upd", np.array([7, -7], np.int32))], {"reduction": red}))
    return out


def cast_cases():
    out = []
    r = rng("cast")
    x = floats(r, 2, 5, scale=100.0)
    for opset in (19, 21, 23):
        out.append(single("Cast", opset, "to_int32_saturate", [("x", x)], {"to": I32, "saturate": 1}, out_types=[I32]))
        out.append(single("Cast", opset, "to_f16", [("x", x)], {"to": F16}, out_types=[F16]))
        out.append(single("CastLike", opset, "to_double", [("x", x), Const("like", np.zeros(1, np.float64))],
                          out_types=[D]))
    return out


def dft_cases():
    out = []
    r = rng("dft")
    real = floats(r, 2, 8, 1)
    cplx = floats(r, 2, 6, 2)
    out.append(single("DFT", 20, "axis_input", [("x", real), None, Const("axis", np.array(1, np.int64))],
                      {"onesided": 0}))
    out.append(single("DFT", 20, "default_axis", [("x", floats(r, 3, 5, 4, 2))]))
    out.append(single("DFT", 20, "onesided_len", [("x", real), Const("len", np.array(10, np.int64)),
                                                  Const("axis", np.array(-2, np.int64))], {"onesided": 1}))
    out.append(single("DFT", 20, "inverse", [("x", cplx), None, Const("axis", np.array(1, np.int64))],
                      {"inverse": 1}))
    return out


def isnan_isinf_cases():
    out = []
    special = np.array([1.0, np.nan, np.inf, -np.inf, -0.0, 3.5], np.float32)
    for opset in (20, 23):
        for dtype in (np.float32, np.float16, np.float64):
            x = special.astype(dtype)
            out.append(single("IsNaN", opset, np.dtype(dtype).name, [("x", x)], out_types=[B]))
            out.append(single("IsInf", opset, np.dtype(dtype).name, [("x", x)], {"detect_negative": 0},
                              out_types=[B]))
    return out


def grid_sample_cases():
    out = []
    r = rng("gridsample")
    x = floats(r, 1, 2, 4, 5)
    grid = r.uniform(-1.1, 1.1, size=(1, 3, 2, 2)).astype(np.float32)
    for mode in ("linear", "nearest", "cubic"):
        out.append(single("GridSample", 20, mode, [("x", x), ("grid", grid)], {"mode": mode, "align_corners": 0}))
    out.append(single("GridSample", 22, "linear_border", [("x", x), ("grid", grid)],
                      {"mode": "linear", "padding_mode": "border"}))
    return out


def pool_cases():
    out = []
    r = rng("pool")
    x = floats(r, 1, 2, 7, 7)
    out.append(single("AveragePool", 19, "dilations", [("x", x)], {"kernel_shape": [2, 2], "dilations": [2, 2]}))
    out.append(single("AveragePool", 19, "dilations_pads", [("x", x)], {"kernel_shape": [3, 2], "dilations": [2, 1],
                                                                        "pads": [1, 1, 1, 0], "strides": [2, 1]}))
    out.append(single("AveragePool", 22, "ceil", [("x", x)], {"kernel_shape": [3, 3], "strides": [2, 2],
                                                               "ceil_mode": 1}))
    out.append(single("LpPool", 18, "ceil_mode", [("x", x)], {"kernel_shape": [2, 2], "strides": [2, 2],
                                                               "ceil_mode": 1, "p": 2}))
    out.append(single("LpPool", 22, "dilations", [("x", x)], {"kernel_shape": [2, 2], "dilations": [2, 2], "p": 1}))
    out.append(single("MaxPool", 22, "basic", [("x", x)], {"kernel_shape": [3, 3], "pads": [1, 1, 1, 1]}))
    out.append(single("Conv", 22, "basic", [("x", x), Const("w", floats(r, 3, 2, 3, 3))], {"pads": [1, 1, 1, 1]}))
    return out


def quantize_cases():
    out = []
    r = rng("quant")
    # int4 weights with block quantization (the MatMulNBits layout): x [K, N] blocked along axis 0.
    for signed in (True, False):
        for block, shape in ((2, (6, 3)), (4, (8, 2)), (3, (7, 2)), (2, (5, 3))):
            q = r.integers(-8, 7, size=shape, endpoint=True) if signed else r.integers(0, 15, size=shape,
                                                                                        endpoint=True)
            blocks = -(-shape[0] // block)
            scale = (r.uniform(0.01, 0.2, size=(blocks, shape[1]))).astype(np.float32)
            zp = r.integers(-8, 7, size=(blocks, shape[1]), endpoint=True) if signed else \
                r.integers(0, 15, size=(blocks, shape[1]), endpoint=True)
            kind = "int4" if signed else "uint4"
            node = helper.make_node("DequantizeLinear", ["q", "scale", "zp"], ["y"], axis=0, block_size=block)
            out.append(graph_case("DequantizeLinear", 21, f"{kind}_block{block}_{shape[0]}", [node],
                                  [Int4Const("q", q, signed), ("scale", scale), Int4Const("zp", zp, signed)],
                                  [("y", F)]))
        q = r.integers(-8, 7, size=(4, 6), endpoint=True) if signed else r.integers(0, 15, size=(4, 6), endpoint=True)
        node = helper.make_node("DequantizeLinear", ["q", "scale"], ["y"], axis=-1, block_size=4)
        kind = "int4" if signed else "uint4"
        out.append(graph_case("DequantizeLinear", 21, f"{kind}_noz_lastaxis", [node],
                              [Int4Const("q", q, signed), ("scale", r.uniform(0.1, 1, size=(4, 2)).astype(np.float32))],
                              [("y", F)]))
        node = helper.make_node("DequantizeLinear", ["q", "scale"], ["y"])
        out.append(graph_case("DequantizeLinear", 21, f"{kind}_per_tensor", [node],
                              [Int4Const("q", q, signed), Const("scale", np.array(0.25, np.float32))], [("y", F)]))
    # 8-bit blocked and the plain forms at the new opsets.
    x8 = ints(r, -128, 127, 4, 6, dtype=np.int8)
    out.append(single("DequantizeLinear", 21, "int8_block3", [("x", x8), ("s", r.uniform(0.1, 1, (4, 2))
                                                                           .astype(np.float32)),
                                                              ("z", ints(r, -3, 3, 4, 2, dtype=np.int8))],
                      {"axis": 1, "block_size": 3}, out_types=[F]))
    for opset in (19, 21, 23):
        xu = ints(r, 0, 255, 2, 5, dtype=np.uint8)
        out.append(single("DequantizeLinear", opset, "uint8", [("x", xu), Const("s", np.array(0.5, np.float32)),
                                                               Const("z", np.array(3, np.uint8))], out_types=[F]))
        xf = floats(r, 2, 5, scale=20.0)
        out.append(single("QuantizeLinear", opset, "int8", [("x", xf), Const("s", np.array(0.5, np.float32)),
                                                            Const("z", np.array(-2, np.int8))], out_types=[I8]))
    out.append(single("QuantizeLinear", 21, "uint8_block2", [("x", floats(r, 4, 3, scale=9.0)),
                                                             Const("s", r.uniform(0.1, 1, (2, 3)).astype(np.float32)),
                                                             Const("z", ints(r, 0, 20, 2, 3, dtype=np.uint8))],
                      {"axis": 0, "block_size": 2}, out_types=[U8]))
    return out


def type_bump_cases():
    """Ops whose opset 19/21/23 versions only added types: the types Kiln runs, at those opsets."""
    out = []
    r = rng("bumps")
    x = floats(r, 2, 3, 4)
    for opset in (19, 21, 23):
        out.append(single("Identity", opset, "float", [("x", x)]))
        out.append(single("Reshape", opset, "allowzero", [("x", x), Const("s", np.array([0, -1], np.int64))],
                          {"allowzero": 0}))
        out.append(single("Shape", opset, "start_end", [("x", x)], {"start": 1, "end": -1}, out_types=[I64]))
        out.append(single("Size", opset, "float", [("x", x)], out_types=[I64]))
        if opset >= 21:
            out.append(single("Transpose", opset, "perm", [("x", x)], {"perm": [2, 0, 1]}))
            out.append(single("Flatten", opset, "axis_neg", [("x", x)], {"axis": -1}))
            out.append(single("Squeeze", opset, "axes", [("x", floats(r, 2, 1, 3)),
                                                         Const("a", np.array([-2], np.int64))]))
            out.append(single("Unsqueeze", opset, "axes", [("x", x), Const("a", np.array([0, -1], np.int64))]))
        cnode = helper.make_node("Constant", [], ["y"], value=helper.make_tensor("c", F, [2], [1.5, -2.0]))
        out.append(graph_case("Constant", opset, "tensor", [cnode, helper.make_node("Add", ["y", "x"], ["z"])],
                              [("x", floats(r, 3, 2))], [("z", F)]))
        out.append(single("ConstantOfShape", opset if opset != 19 else 20, "int32",
                          [("s", np.array([2, 3], np.int64))],
                          {"value": helper.make_tensor("v", I32, [1], [7])}, out_types=[I32]))
        out.append(single("Equal", 19, "int64", [("a", ints(r, 0, 2, 3, 3)), ("b", ints(r, 0, 2, 3))], out_types=[B])
                   ) if opset == 19 else None
    for opset in (22,):
        for op in ("Softplus", "Round", "Sin", "Elu", "HardSwish", "ThresholdedRelu", "Selu", "Softsign"):
            out.append(single(op, opset, "float", [("x", floats(r, 3, 4, scale=2.0))]))
        out.append(single("InstanceNormalization", opset, "4d", [("x", floats(r, 2, 3, 4, 4)),
                                                                 ("s", floats(r, 3)), ("b", floats(r, 3))]))
        out.append(single("GlobalAveragePool", opset, "4d", [("x", floats(r, 2, 3, 4, 4))]))
        out.append(single("EyeLike", opset, "k1", [("x", floats(r, 3, 4))], {"k": 1}))
    return [c for c in out if c is not None]


def control_flow_cases():
    out = []
    r = rng("if")
    for opset in (19, 21, 23):
        then_g = helper.make_graph([helper.make_node("Neg", ["x"], ["t"])], "then", [],
                                   [helper.make_tensor_value_info("t", F, None)])
        else_g = helper.make_graph([helper.make_node("Abs", ["x"], ["e"])], "else", [],
                                   [helper.make_tensor_value_info("e", F, None)])
        node = helper.make_node("If", ["c"], ["y"], then_branch=then_g, else_branch=else_g)
        out.append(graph_case("If", opset, "branches", [node], [("c", np.array(False)), ("x", floats(r, 2, 3))],
                              [("y", F)]))
    return out


def all_cases():
    return (reduce_cases() + split_cases() + pad_cases() + resize_cases() + scatter_cases() + cast_cases()
            + dft_cases() + isnan_isinf_cases() + grid_sample_cases() + pool_cases() + quantize_cases()
            + type_bump_cases() + control_flow_cases())
