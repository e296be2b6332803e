"""Cases for the ops that opsets 18-23 added: Gelu, Mish, Bitwise*, GroupNormalization, CenterCropPad, Col2Im,
RMSNormalization, RotaryEmbedding and Attention. Each op: its attributes, dtypes and edge shapes (empty tensors,
broadcasting, negative axes)."""
from __future__ import annotations

import numpy as np
from onnx import TensorProto

from case_builder import Const, floats, ints, rng, single

F, F16, B = TensorProto.FLOAT, TensorProto.FLOAT16, TensorProto.BOOL


def gelu_cases():
    out = []
    for opset in (20, 23):
        for approx in ("none", "tanh"):
            for variant, shape, dtype in (("3d", (2, 3, 5), np.float32), ("empty", (0, 4), np.float32),
                                           ("scalar", (), np.float32), ("f16", (3, 4), np.float16)):
                if opset == 23 and variant not in ("3d",):
                    continue
                name = f"gelu_{approx}_{variant}"
                x = floats(rng(name), *shape, dtype=dtype, scale=3.0)
                attrs = {} if approx == "none" and variant == "3d" else {"approximate": approx}
                out.append(single("Gelu", opset, f"{approx}_{variant}", [("x", x)], attrs))
    return out


def mish_cases():
    out = []
    for opset, variant, shape, dtype in ((18, "4d", (1, 2, 3, 4), np.float32), (18, "empty", (2, 0), np.float32),
                                          (18, "f64", (9,), np.float64), (22, "4d", (2, 3, 1, 2), np.float32)):
        x = floats(rng(f"mish{opset}{variant}"), *shape, dtype=dtype, scale=4.0)
        out.append(single("Mish", opset, variant, [("x", x)]))
    return out


def bitwise_cases():
    out = []
    r = rng("bitwise")
    for op in ("BitwiseAnd", "BitwiseOr", "BitwiseXor"):
        for dtype in (np.int32, np.uint8, np.int64, np.uint16, np.int8):
            info = np.iinfo(dtype)
            a = r.integers(info.min, info.max, size=(3, 4), endpoint=True).astype(dtype)
            b = r.integers(info.min, info.max, size=(4,), endpoint=True).astype(dtype)  # broadcast
            out.append(single(op, 18, f"{np.dtype(dtype).name}_bcast", [("a", a), ("b", b)]))
        a = np.zeros((0, 3), np.int32)
        out.append(single(op, 18, "empty", [("a", a), ("b", np.arange(3, dtype=np.int32))]))
    for dtype in (np.int32, np.uint8, np.int64, np.uint64):
        info = np.iinfo(dtype)
        x = r.integers(info.min, info.max, size=(2, 5), endpoint=True, dtype=dtype)
        out.append(single("BitwiseNot", 18, np.dtype(dtype).name, [("x", x)]))
    return out


def group_norm_cases():
    out = []
    for opset in (18, 21):
        for variant, shape, groups, eps in (("4d_g2", (2, 4, 3, 3), 2, 1e-5), ("3d_g1", (1, 6, 5), 1, 1e-3),
                                             ("g_eq_c", (2, 3, 4), 3, 1e-5), ("no_spatial", (3, 4), 2, 1e-5),
                                             ("empty_batch", (0, 4, 2), 2, 1e-5)):
            r = rng(f"gn{opset}{variant}")
            x = floats(r, *shape, scale=2.0) + 1.0
            n = groups if opset == 18 else shape[1]
            scale, bias = floats(r, n), floats(r, n)
            out.append(single("GroupNormalization", opset, variant, [("x", x), ("scale", scale), ("bias", bias)],
                              {"num_groups": groups, "epsilon": eps}))
    return out


def center_crop_pad_cases():
    out = []
    r = rng("ccp")
    specs = (("crop", (5, 7), [3, 4], None), ("pad", (3, 2), [6, 5], None), ("mixed", (4, 3), [2, 6], None),
             ("axes", (2, 5, 6), [3, 3], [1, 2]), ("neg_axes", (2, 5, 6), [4], [-1]), ("same", (2, 3), [2, 3], None),
             ("odd", (5, 5, 3), [2, 8], [0, 1]), ("to_empty", (3, 4), [0, 4], None))
    for variant, shape, target, axes in specs:
        x = floats(r, *shape)
        attrs = {"axes": axes} if axes is not None else {}
        out.append(single("CenterCropPad", 18, variant, [("x", x), Const("shape", np.array(target, np.int64))], attrs))
    x = ints(r, -5, 5, 3, 3, dtype=np.int32)
    out.append(single("CenterCropPad", 18, "int32", [("x", x), Const("shape", np.array([5, 1], np.int64))]))
    return out


def col2im_cases():
    out = []
    r = rng("col2im")
    specs = (("basic", (3, 4), (2, 2), {}, 1), ("block2", (4, 4), (2, 2), {}, 2),
             ("strides", (5, 5), (2, 2), {"strides": [2, 2]}, 1),
             ("pads_dil", (6, 6), (2, 3), {"pads": [1, 0, 1, 2], "dilations": [2, 1]}, 3),
             ("1d", (10,), (3,), {"strides": [2]}, 2))
    for variant, image, block, attrs, channels in specs:
        rank = len(image)
        strides = attrs.get("strides", [1] * rank)
        dil = attrs.get("dilations", [1] * rank)
        pads = attrs.get("pads", [0] * (2 * rank))
        blocks = 1
        for d in range(rank):
            eff = dil[d] * (block[d] - 1) + 1
            blocks *= (image[d] + pads[d] + pads[d + rank] - eff) // strides[d] + 1
        cols = floats(r, 2, channels * int(np.prod(block)), blocks)
        out.append(single("Col2Im", 18, variant, [("x", cols), Const("image_shape", np.array(image, np.int64)),
                                                   Const("block_shape", np.array(block, np.int64))], attrs))
    return out


def rms_norm_cases():
    out = []
    specs = (("last", (2, 3, 8), -1, (8,), np.float32, {}), ("axis1", (2, 3, 4), 1, (3, 4), np.float32, {}),
             ("bcast_scale", (2, 3, 4), 1, (1, 4), np.float32, {}), ("eps", (4, 6), -1, (6,), np.float32,
                                                                     {"epsilon": 0.1}),
             ("f16", (2, 8), -1, (8,), np.float16, {}), ("f64", (3, 5), 0, (3, 5), np.float64, {}),
             ("empty_batch", (0, 4), -1, (4,), np.float32, {}), ("neg2", (2, 3, 4), -2, (3, 4), np.float32, {}))
    for variant, shape, axis, sshape, dtype, extra in specs:
        r = rng(f"rms{variant}")
        x, scale = floats(r, *shape, dtype=dtype), floats(r, *sshape, dtype=dtype)
        out.append(single("RMSNormalization", 23, variant, [("x", x), ("scale", scale)], {"axis": axis, **extra}))
    return out


def _rope_caches(r, positions, half):
    theta = r.uniform(0.1, 1.0, size=(positions, half)).astype(np.float32) * np.arange(positions)[:, None]
    return np.cos(theta).astype(np.float32), np.sin(theta).astype(np.float32)


def rotary_cases():
    out = []
    # (variant, x shape, interleaved, rotary_dim, num_heads, with position_ids)
    specs = (("4d_pos", (2, 3, 4, 8), 0, 0, 0, True), ("4d_interleaved", (1, 2, 5, 6), 1, 0, 0, True),
             ("3d_heads", (2, 4, 12), 0, 0, 3, True), ("3d_interleaved", (1, 3, 8), 1, 0, 2, True),
             ("partial", (1, 2, 3, 8), 0, 4, 0, True), ("partial_interleaved", (2, 6, 12), 1, 4, 2, True),
             ("no_pos", (2, 2, 3, 4), 0, 0, 0, False), ("no_pos_3d", (2, 3, 8), 1, 0, 2, False),
             ("empty_seq", (1, 2, 0, 4), 0, 0, 0, True))
    for variant, shape, interleaved, rot, heads, with_pos in specs:
        r = rng(f"rope{variant}")
        x = floats(r, *shape)
        batch = shape[0]
        seq = shape[2] if len(shape) == 4 else shape[1]
        head = shape[3] if len(shape) == 4 else shape[2] // heads
        half = (rot or head) // 2
        attrs = {"interleaved": interleaved}
        if rot:
            attrs["rotary_embedding_dim"] = rot
        if heads:
            attrs["num_heads"] = heads
        if with_pos:
            cos, sin = _rope_caches(r, 16, half)
            pos = r.integers(0, 15, size=(batch, seq)).astype(np.int64)
            inputs = [("x", x), Const("cos", cos), Const("sin", sin), ("pos", pos)]
        else:
            cos = np.cos(floats(r, batch, seq, half))
            sin = np.sin(floats(r, batch, seq, half))
            inputs = [("x", x), ("cos", cos), ("sin", sin)]
        out.append(single("RotaryEmbedding", 23, variant, inputs, attrs))
    return out


def attention_cases():
    out = []
    # (variant, B, q_heads, kv_heads, S, L, past, H, Hv, rank, attrs, mask (None, "bool2d", "float4d", "bool3d"))
    specs = (
        ("4d_basic", 2, 2, 2, 3, 3, 0, 4, 4, 4, {}, None),
        ("4d_causal", 1, 2, 2, 4, 4, 0, 8, 8, 4, {"is_causal": 1}, None),
        ("4d_gqa", 2, 4, 2, 3, 5, 0, 4, 6, 4, {}, None),
        ("3d_heads", 2, 3, 3, 4, 2, 0, 2, 2, 3, {}, None),
        ("3d_gqa_causal", 1, 4, 1, 3, 3, 0, 4, 4, 3, {"is_causal": 1}, None),
        ("mask_bool", 2, 2, 2, 3, 4, 0, 4, 4, 4, {}, "bool2d"),
        ("mask_float", 2, 2, 1, 2, 3, 0, 4, 4, 4, {}, "float4d"),
        ("mask_bool3d", 1, 2, 2, 3, 3, 0, 4, 4, 4, {}, "bool3d"),
        ("past", 1, 2, 2, 2, 2, 3, 4, 4, 4, {}, None),
        ("past_causal", 2, 2, 2, 3, 3, 2, 4, 4, 4, {"is_causal": 1}, None),
        ("decode_causal", 1, 4, 2, 1, 1, 5, 8, 8, 4, {"is_causal": 1}, None),
        ("past_3d_mask", 1, 2, 2, 2, 2, 2, 4, 4, 3, {}, "bool2d"),
        ("scale", 1, 2, 2, 3, 3, 0, 4, 4, 4, {"scale": 0.3}, None),
        ("softcap", 1, 2, 2, 3, 4, 0, 4, 4, 4, {"softcap": 2.0}, None),
        ("softcap_causal_mask", 1, 2, 2, 3, 3, 0, 4, 4, 4, {"softcap": 1.5, "is_causal": 1}, "float4d"),
        ("causal_mask", 1, 2, 2, 3, 3, 0, 4, 4, 4, {"is_causal": 1}, "bool2d"),
        ("masked_row", 1, 1, 1, 2, 3, 0, 4, 4, 4, {}, "bool_row_off"),
    )
    for variant, b, qh, kvh, s, l, past, h, hv, rank, attrs, mask in specs:
        r = rng(f"attn{variant}")
        total = past + l
        if rank == 4:
            q, k, v = floats(r, b, qh, s, h), floats(r, b, kvh, l, h), floats(r, b, kvh, l, hv)
        else:
            q, k, v = floats(r, b, s, qh * h), floats(r, b, l, kvh * h), floats(r, b, l, kvh * hv)
            attrs = {**attrs, "q_num_heads": qh, "kv_num_heads": kvh}
        inputs = [("q", q), ("k", k), ("v", v)]
        if mask == "bool2d":
            m = r.random((s, total)) > 0.3
            m[:, 0] = True
            inputs.append(("mask", m))
        elif mask == "bool3d":
            m = r.random((qh, s, total)) > 0.3
            m[:, :, 0] = True
            inputs.append(("mask", m))
        elif mask == "bool_row_off":
            m = np.ones((s, total), bool)
            m[1, :] = False  # a row with nothing to attend to
            inputs.append(("mask", m))
        elif mask == "float4d":
            inputs.append(("mask", floats(r, b, 1, s, total)))
        else:
            inputs.append(None)
        outputs = ["y"]
        types = [F]
        if past:
            inputs += [("past_k", floats(r, b, kvh, past, h)), ("past_v", floats(r, b, kvh, past, hv))]
            outputs += ["present_k", "present_v"]
            types += [F, F]
        while inputs[-1] is None:
            inputs.pop()
        out.append(single("Attention", 23, variant, inputs, attrs, outputs=outputs, out_types=types))
    for mode in (0, 3):
        r = rng(f"attn_qk{mode}")
        q, k, v = floats(r, 1, 2, 3, 4), floats(r, 1, 2, 4, 4), floats(r, 1, 2, 4, 4)
        out.append(single("Attention", 23, f"qk_output_mode{mode}", [("q", q), ("k", k), ("v", v)],
                          {"qk_matmul_output_mode": mode, "is_causal": 1}, outputs=["y", "", "", "qk"],
                          out_types=[F, F]))
    return out


def all_cases():
    return (gelu_cases() + mish_cases() + bitwise_cases() + group_norm_cases() + center_crop_pad_cases()
            + col2im_cases() + rms_norm_cases() + rotary_cases() + attention_cases())
