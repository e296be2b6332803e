"""Cases for onnxruntime's com.microsoft attention operators: RotaryEmbedding (its own input order and position_ids
forms), MultiHeadAttention (self and cross attention, bias, past/present, masks in three forms, attention bias,
a 4-D cross-attention cache) and GroupQueryAttention (first prompt, decode steps after a cache, a later prompt, packed QKV, rotary inside,
local window, softcap, smooth softmax, float16). Key/value caches are exactly as long as the tokens they hold, as a
decoder without a shared buffer feeds them, so every present element is defined in onnxruntime's output too."""
from __future__ import annotations

import numpy as np
from onnx import TensorProto

from case_builder import Const, floats, rng, single

MS = "com.microsoft"
OPSET = 17
F, F16 = TensorProto.FLOAT, TensorProto.FLOAT16


def _caches(r, positions, width, dtype=np.float32):
    theta = r.uniform(0.05, 1.0, size=(1, width)) * np.arange(positions)[:, None]
    return np.cos(theta).astype(dtype), np.sin(theta).astype(dtype)


def rotary_cases():
    out = []
    specs = (  # variant, x shape, position ids, attrs, cache width
        ("3d_ids", (2, 3, 32), "ids", {}, 8), ("3d_start", (2, 3, 32), "start", {}, 8),
        ("4d", (2, 2, 3, 16), "ids", {}, 8), ("interleaved", (1, 4, 32), "ids", {"interleaved": 1}, 8),
        ("partial_dim", (2, 3, 32), "ids", {"rotary_embedding_dim": 8, "num_heads": 2}, 4),
        ("num_heads", (1, 2, 64), "start", {"num_heads": 4}, 8), ("f16", (2, 3, 32), "ids", {}, 8))
    for variant, shape, pos_kind, attrs, width in specs:
        r = rng(f"ms_rope{variant}")
        dtype = np.float16 if variant == "f16" else np.float32
        x = floats(r, *shape, dtype=dtype)
        batch, seq = shape[0], shape[2] if len(shape) == 4 else shape[1]
        cos, sin = _caches(r, 16, width, dtype)
        ids = r.integers(0, 16 - seq, size=(batch, seq)).astype(np.int64) if pos_kind == "ids" \
            else np.array([5], np.int64)
        out.append(single("RotaryEmbedding", OPSET, variant, [("x", x), ("pos", ids), Const("cos", cos),
                                                              Const("sin", sin)], attrs, domain=MS))
    return out


def _gqa(variant, batch, seq, heads, kv_heads, head, past, attrs=None, packed=False, rotary=False,
         dtype=np.float32, seqlens=None):
    """One GroupQueryAttention case: `past` cached positions per sequence (0: first prompt, no past inputs)."""
    r = rng(f"ms_gqa{variant}")
    total = past + seq
    if packed:
        inputs = [("q", floats(r, batch, seq, (heads + 2 * kv_heads) * head, dtype=dtype)), None, None]
    else:
        inputs = [("q", floats(r, batch, seq, heads * head, dtype=dtype)),
                  ("k", floats(r, batch, seq, kv_heads * head, dtype=dtype)),
                  ("v", floats(r, batch, seq, kv_heads * head, dtype=dtype))]
    if past:
        inputs += [("past_k", floats(r, batch, kv_heads, past, head, dtype=dtype)),
                   ("past_v", floats(r, batch, kv_heads, past, head, dtype=dtype))]
    else:
        inputs += [None, None]
    lengths = np.full(batch, total - 1, np.int32) if seqlens is None else np.array(seqlens, np.int32)
    inputs += [("seqlens_k", lengths), ("total_len", np.array([total], np.int32))]
    attrs = {"num_heads": heads, "kv_num_heads": kv_heads, **(attrs or {})}
    if rotary:
        cos, sin = _caches(r, total + 4, head // 2 if head % 16 == 0 else 8, dtype)
        inputs += [Const("cos", cos), Const("sin", sin)]
        attrs["do_rotary"] = 1
    et = F16 if dtype == np.float16 else F
    return single("GroupQueryAttention", OPSET, variant, inputs, attrs, outputs=["y", "present_k", "present_v"],
                  out_types=[et, et, et], domain=MS)


def gqa_cases():
    return [
        _gqa("prompt", 2, 4, 4, 2, 16, 0),
        _gqa("prompt_mha", 1, 5, 2, 2, 16, 0),
        _gqa("decode", 2, 1, 4, 2, 16, 5),
        _gqa("decode_mqa", 1, 1, 8, 1, 16, 7),
        _gqa("later_prompt", 1, 3, 4, 2, 16, 4),
        _gqa("packed_prompt", 2, 3, 4, 2, 16, 0, packed=True),
        _gqa("packed_decode", 1, 1, 4, 2, 16, 6, packed=True),
        _gqa("rotary_prompt", 1, 4, 4, 2, 32, 0, rotary=True),
        _gqa("rotary_decode", 2, 1, 4, 2, 32, 6, rotary=True),
        _gqa("rotary_interleaved", 1, 1, 4, 2, 16, 3, {"rotary_interleaved": 1}, rotary=True),
        _gqa("rotary_packed", 1, 2, 4, 2, 16, 0, packed=True, rotary=True),
        _gqa("local_window", 1, 6, 2, 1, 16, 0, {"local_window_size": 2}),
        _gqa("local_window_decode", 1, 1, 2, 1, 16, 8, {"local_window_size": 3}),
        _gqa("softcap", 1, 3, 2, 1, 16, 2, {"softcap": 2.0}),
        _gqa("scale", 1, 2, 2, 2, 8, 0, {"scale": 0.5}),
        _gqa("smooth_softmax", 1, 3, 2, 1, 16, 0, {"smooth_softmax": 1}),
        _gqa("f16_decode", 1, 1, 4, 2, 16, 4, dtype=np.float16),
        _gqa("ragged_decode", 2, 1, 4, 2, 16, 5, seqlens=[5, 3]),
    ]


def _mha(variant, batch, seq, heads, head, kv_seq, past=0, v_head=None, attrs=None, bias=False, mask=None,
         attn_bias=None, bnsh_kv=False, presents=True, dtype=np.float32):
    """One MultiHeadAttention case; `mask`: "lengths" ([batch]), "2d" or "3d" key_padding_mask; `attn_bias`: the
    broadcast shape's leading two dims ((1, 1), (batch, heads), ...)."""
    r = rng(f"ms_mha{variant}")
    v_head = v_head or head
    total = past + kv_seq
    if bnsh_kv:
        k, v = floats(r, batch, heads, kv_seq, head, dtype=dtype), floats(r, batch, heads, kv_seq, v_head, dtype=dtype)
    else:
        k, v = floats(r, batch, kv_seq, heads * head, dtype=dtype), floats(r, batch, kv_seq, heads * v_head, dtype=dtype)
    inputs = [("q", floats(r, batch, seq, heads * head, dtype=dtype)), ("k", k), ("v", v)]
    inputs.append(("bias", floats(r, heads * (2 * head + v_head), dtype=dtype)) if bias else None)
    if mask == "lengths":
        inputs.append(("mask", r.integers(1, total + 1, size=batch).astype(np.int32)))
    elif mask == "2d":
        m = (r.uniform(size=(batch, total)) > 0.3).astype(np.int32)
        m[:, 0] = 1
        inputs.append(("mask", m))
    elif mask == "3d":
        m = (r.uniform(size=(batch, seq, total)) > 0.3).astype(np.int32)
        m[:, :, 0] = 1
        inputs.append(("mask", m))
    else:
        inputs.append(None)
    inputs.append(("attn_bias", floats(r, *attn_bias, seq, total, dtype=dtype)) if attn_bias else None)
    if past:
        inputs += [("past_k", floats(r, batch, heads, past, head, dtype=dtype)),
                   ("past_v", floats(r, batch, heads, past, v_head, dtype=dtype))]
    while inputs and inputs[-1] is None:
        inputs.pop()
    et = F16 if dtype == np.float16 else F
    outputs = ["y", "present_k", "present_v"] if presents else ["y"]
    return single("MultiHeadAttention", OPSET, variant, inputs, {"num_heads": heads, **(attrs or {})},
                  outputs=outputs, out_types=[et] * len(outputs), domain=MS)


def mha_cases():
    return [
        _mha("self", 2, 4, 2, 8, 4, presents=False),
        _mha("cross", 1, 3, 4, 8, 6, presents=False),
        _mha("v_head", 1, 3, 2, 8, 5, v_head=16, presents=False),
        _mha("bias", 2, 3, 2, 8, 3, bias=True),
        _mha("past", 2, 1, 2, 8, 1, past=5),
        _mha("past_causal", 1, 3, 2, 8, 3, past=2, attrs={"unidirectional": 1}),
        _mha("causal", 1, 5, 2, 8, 5, attrs={"unidirectional": 1}, presents=False),
        _mha("mask_lengths", 2, 3, 2, 8, 4, mask="lengths", presents=False),
        _mha("mask_2d", 2, 3, 2, 8, 4, past=2, mask="2d"),
        _mha("mask_3d", 2, 3, 2, 8, 4, mask="3d", presents=False),
        _mha("attn_bias", 2, 3, 2, 8, 4, attn_bias=(1, 2), presents=False),
        _mha("attn_bias_full", 2, 3, 2, 8, 4, attn_bias=(2, 2), mask="2d", attrs={"mask_filter_value": -1e4},
             presents=False),
        _mha("bnsh_kv", 2, 3, 2, 8, 5, bnsh_kv=True, presents=False),
        _mha("scale", 1, 2, 2, 8, 3, attrs={"scale": 0.25}, presents=False),
        _mha("f16_past_bias", 2, 2, 2, 8, 2, past=3, bias=True, mask="2d", dtype=np.float16),
        _mha("long_kv", 1, 2, 2, 16, 150, presents=False),  # more keys than the shader's workgroup
    ]


def all_cases():
    return rotary_cases() + gqa_cases() + mha_cases()
