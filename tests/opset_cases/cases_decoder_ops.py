"""Cases for the standard ops a transformer graph uses around its attention that the Vulkan EP runs too: Split
(opset 18's num_outputs, given sizes, uneven last chunk, negative axis, float16), Trilu (causal masks: upper and
lower, k above, below and beyond the matrix, float32/float16/int64, batched) and ArgMax/ArgMin (greedy picks: ties
with and without select_last_index, keepdims, negative axis, float16) and ScatterND (a fixed-size KV cache written
at a position, repeated tuples with add/mul/max/min in row order, negative indices, int64 data, float16, indices as
constants and as run inputs) GatherND (slices, single elements, batch_dims 1, negative indices, int64 and float16
data) and CumSum (position ids from an int64 mask, negative and large int64 values across the 32-bit carry,
exclusive, reverse, negative axis, float16, int32) and TopK (sampling over logits: largest and smallest, sorted,
ties to the lower index, an axis before the last, k = 1 and k = the row length, k as a run input, float16, a
32000-entry row; k as opset 1's attribute and opset 10's input). onnxruntime-node gives the expected outputs."""
from __future__ import annotations

import numpy as np
from onnx import TensorProto

from case_builder import Const, floats, ints, rng, single

OPSET = 18


def split_cases():
    out = []
    r = rng("split18")
    x = floats(r, 2, 7, 6)
    out.append(single("Split", OPSET, "num_outputs_axis1", [("x", x)], {"axis": 1, "num_outputs": 3}, outputs=3))
    out.append(single("Split", OPSET, "num_outputs_neg_axis", [("x", x)], {"axis": -1, "num_outputs": 2}, outputs=2))
    out.append(single("Split", OPSET, "sizes", [("x", x), Const("split", np.array([1, 4, 2], np.int64))],
                      {"axis": 1}, outputs=3))
    out.append(single("Split", OPSET, "sizes_zero", [("x", x), Const("split", np.array([0, 6], np.int64))],
                      {"axis": 2}, outputs=2))
    qkv = floats(r, 1, 3, 24, dtype=np.float16)  # a fused QKV projection split three ways
    out.append(single("Split", OPSET, "qkv_f16", [("x", qkv)], {"axis": -1, "num_outputs": 3}, outputs=3))
    return out


def trilu_cases():
    out = []
    r = rng("trilu18")
    square, wide, batched = floats(r, 5, 5), floats(r, 3, 7), floats(r, 2, 3, 4, 6)
    for upper in (0, 1):
        name = "upper" if upper else "lower"
        out.append(single("Trilu", OPSET, f"{name}_square", [("x", square)], {"upper": upper}))
        for k in (-2, 3, 9, -9):
            tag = f"neg{-k}" if k < 0 else f"pos{k}"
            out.append(single("Trilu", OPSET, f"{name}_wide_{tag}", [("x", wide), Const("k", np.array(k, np.int64))],
                              {"upper": upper}))
        out.append(single("Trilu", OPSET, f"{name}_batched_f16", [("x", batched.astype(np.float16))], {"upper": upper}))
    out.append(single("Trilu", OPSET, "lower_int64", [("x", ints(r, -9, 9, 4, 4))], {"upper": 0}))
    out.append(single("Trilu", OPSET, "upper_empty", [("x", floats(r, 0, 4))], {"upper": 1}))
    return out


def arg_reduce_cases():
    out = []
    r = rng("argreduce18")
    x = floats(r, 3, 4, 5)
    ties = np.array([[1, 3, 3, 0], [2, 2, 2, 2], [-1, -5, -5, 4]], np.float32)  # repeated extremes
    logits = floats(r, 1, 1, 32, scale=3.0)
    for op in ("ArgMax", "ArgMin"):
        out.append(single(op, OPSET, "axis1", [("x", x)], {"axis": 1}, out_types=[TensorProto.INT64]))
        out.append(single(op, OPSET, "neg_axis_no_keepdims", [("x", x)], {"axis": -1, "keepdims": 0},
                          out_types=[TensorProto.INT64]))
        out.append(single(op, OPSET, "ties_first", [("x", ties)], {"axis": 1}, out_types=[TensorProto.INT64]))
        out.append(single(op, OPSET, "ties_last", [("x", ties)], {"axis": 1, "select_last_index": 1},
                          out_types=[TensorProto.INT64]))
        out.append(single(op, OPSET, "f16", [("x", x.astype(np.float16))], {"axis": 2}, out_types=[TensorProto.INT64]))
    out.append(single("ArgMax", OPSET, "greedy_logits", [("x", logits)], {"axis": -1, "keepdims": 0},
                      out_types=[TensorProto.INT64]))
    return out


def scatter_nd_cases():
    out = []
    r = rng("scatternd18")
    cache, row = floats(r, 1, 2, 8, 4), floats(r, 1, 2, 1, 4)
    # present[:, h, 5, :] = the new key of head h: tuples (0, h, 5), one [4] row each
    at5 = np.array([[[0, 0, 5], [0, 1, 5]]], np.int64)
    out.append(single("ScatterND", OPSET, "kv_cache_const", [("data", cache), Const("indices", at5),
                                                              ("updates", row.reshape(1, 2, 4))]))
    out.append(single("ScatterND", OPSET, "kv_cache_input", [("data", cache), ("indices", at5),
                                                              ("updates", row.reshape(1, 2, 4))]))
    out.append(single("ScatterND", OPSET, "kv_cache_f16", [("data", cache.astype(np.float16)), Const("indices", at5),
                                                            ("updates", row.reshape(1, 2, 4).astype(np.float16))]))
    data, repeated = floats(r, 4, 3), np.array([[1], [3], [1], [-4]], np.int64)  # row 1 twice, -4 is row 0
    updates = floats(r, 4, 3)
    for reduction in ("add", "mul", "max", "min"):
        out.append(single("ScatterND", OPSET, f"repeated_{reduction}", [("data", data), Const("indices", repeated),
                                                                          ("updates", updates)],
                          {"reduction": reduction}))
    elements = np.array([[0, 2], [3, 1], [-1, 0]], np.int64)  # whole tuples: single elements
    out.append(single("ScatterND", OPSET, "elements", [("data", data), ("indices", elements),
                                                       ("updates", floats(r, 3))]))
    out.append(single("ScatterND", OPSET, "int64", [("data", ints(r, -50, 50, 4, 3)), Const("indices", repeated[:2]),
                                                    ("updates", ints(r, -50, 50, 2, 3))]))
    return out


def gather_nd_cases():
    out = []
    r = rng("gathernd18")
    data = floats(r, 3, 4, 5)
    rows = np.array([[2, 1], [0, -1], [1, 3]], np.int64)  # (dim 0, dim 1) tuples: [5] slices
    out.append(single("GatherND", OPSET, "slices_const", [("data", data), Const("indices", rows)]))
    out.append(single("GatherND", OPSET, "slices_input", [("data", data), ("indices", rows)]))
    out.append(single("GatherND", OPSET, "elements", [("data", data), ("indices", np.array([[[1, 2, 3]], [[2, 0, -1]]],
                                                                                          np.int64))]))
    per_batch = np.array([[[1], [3]], [[0], [0]], [[2], [-4]]], np.int64)  # batch_dims 1: rows within each batch
    out.append(single("GatherND", OPSET, "batch_dims", [("data", data), Const("indices", per_batch)], {"batch_dims": 1}))
    out.append(single("GatherND", OPSET, "f16", [("data", data.astype(np.float16)), Const("indices", rows)]))
    out.append(single("GatherND", OPSET, "int64", [("data", ints(r, -99, 99, 4, 3)), Const("indices",
                                                                                         np.array([[3], [0]], np.int64))]))
    return out


def cumsum_cases():
    out = []
    r = rng("cumsum18")
    x = floats(r, 2, 5, 3)
    for exclusive, reverse in ((0, 0), (1, 0), (0, 1), (1, 1)):
        out.append(single("CumSum", OPSET, f"axis1_ex{exclusive}_rev{reverse}",
                          [("x", x), Const("axis", np.array(1, np.int64))], {"exclusive": exclusive, "reverse": reverse}))
    out.append(single("CumSum", OPSET, "neg_axis_f16", [("x", x.astype(np.float16)), Const("axis", np.array(-1, np.int32))]))
    mask = np.array([[1, 1, 1, 1, 0, 0], [0, 0, 1, 1, 1, 1]], np.int64)  # position ids of a left-padded batch
    out.append(single("CumSum", OPSET, "mask_int64", [("x", mask), Const("axis", np.array(1, np.int64))]))
    big = np.array([[3_000_000_000, 2_000_000_000, -7_000_000_000, 5, -1, 4_294_967_295]], np.int64)
    out.append(single("CumSum", OPSET, "int64_carry", [("x", big), Const("axis", np.array(-1, np.int64))]))
    out.append(single("CumSum", OPSET, "int32", [("x", ints(r, -9, 9, 3, 4, dtype=np.int32)),
                                                 Const("axis", np.array(0, np.int64))], {"exclusive": 1}))
    return out


def topk_cases():
    out = []
    r = rng("topk18")
    x = floats(r, 3, 10)
    both = [TensorProto.FLOAT, TensorProto.INT64]

    def k_of(value):
        return Const("k", np.array([value], np.int64))

    for largest in (1, 0):
        tag = "largest" if largest else "smallest"
        out.append(single("TopK", OPSET, f"{tag}_k3", [("x", x), k_of(3)], {"largest": largest}, outputs=2,
                          out_types=both))
        ties = np.array([[1, 3, 3, 0, 3, -2, 0, 0], [2, 2, 2, 2, 2, 2, 2, 2], [-1, -5, -5, 4, 4, -5, 7, -1]],
                        np.float32)
        out.append(single("TopK", OPSET, f"{tag}_ties", [("x", ties), k_of(5)], {"largest": largest}, outputs=2,
                          out_types=both))
    # sorted=0 leaves the order unspecified (Kiln sorts anyway, onnxruntime does not): no element-wise case for it.
    out.append(single("TopK", OPSET, "sorted", [("x", x), k_of(4)], {"sorted": 1}, outputs=2, out_types=both))
    out.append(single("TopK", OPSET, "axis1", [("x", floats(r, 2, 7, 5)), k_of(2)], {"axis": 1}, outputs=2,
                      out_types=both))
    out.append(single("TopK", OPSET, "axis0_smallest", [("x", floats(r, 6, 3)), k_of(3)], {"axis": -2, "largest": 0},
                      outputs=2, out_types=both))
    out.append(single("TopK", OPSET, "k1_logits", [("x", floats(r, 1, 1, 32, scale=3.0)), k_of(1)], outputs=2,
                      out_types=both))
    out.append(single("TopK", OPSET, "k_row_length", [("x", floats(r, 4, 6)), k_of(6)], outputs=2, out_types=both))
    out.append(single("TopK", OPSET, "k_input", [("x", x), ("k", np.array([4], np.int64))], outputs=2,
                      out_types=both))
    out.append(single("TopK", OPSET, "f16", [("x", floats(r, 2, 16, dtype=np.float16)), k_of(5)], outputs=2,
                      out_types=[TensorProto.FLOAT16, TensorProto.INT64]))
    vocab = floats(r, 2, 32000, scale=4.0)  # two rows of decoder logits, top-50 sampling
    out.append(single("TopK", OPSET, "vocab32000_k50", [("x", vocab), k_of(50)], outputs=2, out_types=both))
    out.append(single("TopK", 1, "attr_k", [("x", x)], {"k": 2}, outputs=2, out_types=both))
    out.append(single("TopK", 10, "input_k", [("x", x), k_of(3)], {"axis": 0}, outputs=2, out_types=both))
    return out


def all_cases():
    return (split_cases() + trilu_cases() + arg_reduce_cases() + scatter_nd_cases() + gather_nd_cases()
            + cumsum_cases() + topk_cases())
