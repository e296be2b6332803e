"""Bad inputs to the opset 18-23 kernels: each must fail with the named status code and a message naming the
problem, never crash. No reference runtime is involved; run_opset_cases.py runs each through `kiln run`."""
from __future__ import annotations

import numpy as np
from onnx import helper

from case_builder import FLOAT8E4M3FN, Const, Int4Const, floats, graph_case, rng, single

F = 1


def nbits_error(variant, attrs, a_cols=64, g_idx=False):
    """A MatMulNBits node (K = 64, N = 8, 4 bits, blocks of 32) with `attrs` overriding those, A [2, a_cols]."""
    r = rng(f"nbits_error_{variant}")
    inputs = [("a", floats(r, 2, a_cols)), Const("b", np.zeros((8, 2, 16), np.uint8)),
              Const("scales", np.ones(16, np.float32))]
    if g_idx:
        inputs += [None, Const("g_idx", (np.arange(64) // 32).astype(np.int32))]
    return single("MatMulNBits", 17, variant, inputs, {"K": 64, "N": 8, "bits": 4, "block_size": 32, **attrs},
                  domain="com.microsoft")


def error_cases():
    """[(case, status code, message fragment)]"""
    r = rng("errors")
    x = floats(r, 2, 4, 3)
    out = [
        (single("Gelu", 20, "bad_approximate", [("x", x)], {"approximate": "fast"}),
         "INVALID_ARGUMENT", "approximate must be 'none' or 'tanh'"),
        (single("BiasGelu", 17, "bias_not_hidden", [("x", x), ("b", floats(r, 4))], domain="com.microsoft"),
         "INVALID_ARGUMENT", "X's last dimension"),
        (single("SkipLayerNormalization", 17, "skip_shape", [("x", x), ("s", floats(r, 2, 3, 3)),
                                                             ("g", floats(r, 3))], domain="com.microsoft"),
         "INVALID_ARGUMENT", "must be input's shape"),
        (single("SkipSimplifiedLayerNormalization", 17, "gamma_size", [("x", x), ("s", x), ("g", floats(r, 4))],
                domain="com.microsoft"), "INVALID_ARGUMENT", "gamma must be [3]"),
        (single("SimplifiedLayerNormalization", 17, "scale_size", [("x", x), ("s", floats(r, 4))]),
         "INVALID_ARGUMENT", "must hold the 3 values"),
        (single("RotaryEmbedding", 17, "ms_position_past_cache",
                [("x", floats(r, 1, 2, 16)), ("p", np.array([7], np.int64)), Const("c", floats(r, 8, 8)),
                 Const("s", floats(r, 8, 8))], domain="com.microsoft"), "INVALID_ARGUMENT", "outside the cache"),
        (single("GroupQueryAttention", 17, "heads_not_multiple",
                [("q", floats(r, 1, 1, 48)), ("k", floats(r, 1, 1, 32)), ("v", floats(r, 1, 1, 32)), None, None,
                 ("l", np.array([0], np.int32)), ("t", np.array([1], np.int32))],
                {"num_heads": 3, "kv_num_heads": 2}, domain="com.microsoft"), "INVALID_ARGUMENT", "multiple"),
        (single("GroupQueryAttention", 17, "seqlens_past_cache",
                [("q", floats(r, 1, 1, 32)), ("k", floats(r, 1, 1, 16)), ("v", floats(r, 1, 1, 16)),
                 ("pk", floats(r, 1, 1, 2, 16)), ("pv", floats(r, 1, 1, 2, 16)), ("l", np.array([9], np.int32)),
                 ("t", np.array([3], np.int32))], {"num_heads": 2, "kv_num_heads": 1}, domain="com.microsoft"),
         "INVALID_ARGUMENT", "seqlens_k[0] = 9"),
        (single("MultiHeadAttention", 17, "packed_kv",
                [("q", floats(r, 1, 2, 16)), ("kv", floats(r, 1, 3, 2, 2, 8)), ("v", floats(r, 1, 3, 16))],
                {"num_heads": 2}, domain="com.microsoft"), "NOT_IMPLEMENTED", "packed KV"),
        (single("MultiHeadAttention", 17, "mask_shape",
                [("q", floats(r, 1, 2, 16)), ("k", floats(r, 1, 3, 16)), ("v", floats(r, 1, 3, 16)), None,
                 ("m", np.ones((1, 4), np.int32))], {"num_heads": 2}, domain="com.microsoft"),
         "INVALID_ARGUMENT", "key_padding_mask must be int32"),
        (single("GroupNormalization", 21, "groups_not_dividing", [("x", x), ("s", floats(r, 4)), ("b", floats(r, 4))],
                {"num_groups": 3}), "INVALID_ARGUMENT", "num_groups 3"),
        (single("GroupNormalization", 18, "scale_per_channel_at_18", [("x", x), ("s", floats(r, 4)),
                                                                       ("b", floats(r, 4))], {"num_groups": 2}),
         "INVALID_ARGUMENT", "(groups)"),
        (single("RMSNormalization", 23, "scale_mismatch", [("x", x), ("s", floats(r, 4))]),
         "INVALID_ARGUMENT", "does not broadcast"),
        (single("Attention", 23, "heads_not_multiple", [("q", floats(r, 1, 3, 2, 4)), ("k", floats(r, 1, 2, 2, 4)),
                                                        ("v", floats(r, 1, 2, 2, 4))]),
         "INVALID_ARGUMENT", "not a multiple of kv_num_heads"),
        (single("Attention", 23, "3d_without_heads", [("q", floats(r, 1, 2, 8)), ("k", floats(r, 1, 2, 8)),
                                                      ("v", floats(r, 1, 2, 8))]),
         "INVALID_ARGUMENT", "q_num_heads and kv_num_heads"),
        (single("Attention", 23, "mask_shape", [("q", floats(r, 1, 2, 3, 4)), ("k", floats(r, 1, 2, 5, 4)),
                                                ("v", floats(r, 1, 2, 5, 4)), ("m", np.ones((3, 4), bool))]),
         "INVALID_ARGUMENT", "does not broadcast"),
        (single("RotaryEmbedding", 23, "position_out_of_range",
                [("x", floats(r, 1, 1, 2, 4)), Const("c", floats(r, 3, 2)), Const("s", floats(r, 3, 2)),
                 ("p", np.array([[0, 3]], np.int64))]), "INVALID_ARGUMENT", "outside the cache"),
        (single("RotaryEmbedding", 23, "odd_rotary_dim",
                [("x", floats(r, 1, 1, 2, 4)), Const("c", floats(r, 3, 1)), Const("s", floats(r, 3, 1)),
                 ("p", np.array([[0, 1]], np.int64))], {"rotary_embedding_dim": 3}),
         "INVALID_ARGUMENT", "must be even"),
        (single("CenterCropPad", 18, "shape_length", [("x", x), Const("shape", np.array([2, 2], np.int64))]),
         "INVALID_ARGUMENT", "2 values for 3 axes"),
        (single("Col2Im", 18, "wrong_block_count", [("x", floats(r, 1, 4, 5)), Const("i", np.array([3, 3], np.int64)),
                                                    Const("b", np.array([2, 2], np.int64))]),
         "INVALID_ARGUMENT", "does not fit blocks"),
        (single("DFT", 20, "axis_on_complex_dim", [("x", floats(r, 2, 4, 1)), None,
                                                   Const("axis", np.array(-1, np.int64))]),
         "INVALID_ARGUMENT", "out of range"),
        (single("DequantizeLinear", 21, "block_scale_shape",
                [("x", np.zeros((4, 6), np.int8)), ("s", np.ones((4, 3), np.float32))], {"axis": 1, "block_size": 4},
                out_types=[F]), "INVALID_ARGUMENT", "needs scale (and zero point) of shape"),
        (single("Cast", 19, "to_float8", [("x", x)], {"to": FLOAT8E4M3FN}, out_types=[FLOAT8E4M3FN]),
         "NOT_IMPLEMENTED", "float8e4m3fn"),
        (nbits_error("bits_3", {"bits": 3}), "INVALID_ARGUMENT", "bits must be 2, 4 or 8"),
        (nbits_error("k_mismatch", {"K": 96}, a_cols=96), "INVALID_ARGUMENT", "B must be uint8 8x3x16"),
        (nbits_error("a_last_dim", {}, a_cols=48), "INVALID_ARGUMENT", "A's last dimension must be K = 64"),
        (nbits_error("block_size_24", {"block_size": 24}), "INVALID_ARGUMENT", "block_size must be a power of 2"),
        (nbits_error("g_idx", {}, g_idx=True), "NOT_IMPLEMENTED", "g_idx"),
        (graph_case("Identity", 21, "int4_initializer", [helper.make_node("Identity", ["w"], ["y"])],
                    [Int4Const("w", np.array([1, -2, 3], np.int64))], [("y", 22)]),
         "NOT_IMPLEMENTED", "int4"),
    ]
    return out
