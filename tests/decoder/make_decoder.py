#!/usr/bin/env python3
"""Small deterministic llama-style decoders with onnxruntime-genai's interface, for Kiln's decode tests and bench.

Inputs:  input_ids int64 [batch, seq], attention_mask int64 [batch, total],
         past_key_values.{i}.key / .value float [batch, kv_heads, past, head]
Outputs: logits float [batch, seq, vocab], present.{i}.key / .value float [batch, kv_heads, total, head]

Two forms of the same math (same seed: same weights, logits equal up to float rounding):
  contrib   what onnxruntime-genai exports: SimplifiedLayerNormalization / com.microsoft
            SkipSimplifiedLayerNormalization, GroupQueryAttention (rotary inside, cos/sin caches as initializers,
            seqlens_k = ReduceSum(attention_mask) - 1, total_sequence_length = Shape(attention_mask)[1]), and the
            projections as MatMul, or com.microsoft MatMulNBits with --weights int4
  standard  ai.onnx opset 17 only: RMSNorm as Pow/ReduceMean/Sqrt/Div, rotary as Slice/Mul/Sub/Add/Concat, attention
            as MatMul/Softmax over Concat(past, new) with a causal + padding mask built from shapes

Every projection weight is drawn, then snapped to the int4 grid (block 32, per-block scale, zero point 8), so the
float MatMul of either form uses exactly the weights an int4 MatMulNBits dequantizes: --weights int4 changes the
operator, never the math. Weights are scaled so that logits spread by a few units (greedy argmax is stable under
float rounding); run_decoder_checks.py measures the top-1/top-2 margin.

Usage: make_decoder.py --form contrib|standard [--layers 4] [--hidden 64] [--heads 4] [--kv-heads 2] [--vocab 256]
                       [--intermediate 4*hidden] [--max-positions 512] [--seed 0] [--weights float|int4]
                       [--zero-points] --out model.onnx
No checker run: onnx 1.12 knows no schema past opset 17 and none of com.microsoft.
"""
from __future__ import annotations

import argparse
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

MS = "com.microsoft"
BLOCK = 32  # MatMulNBits block size (k elements per scale)
EPS = 1e-6


def quantize_int4(w, zero_points=False):
    """w float [K, N] -> (B uint8 [N, K/32, 16], scales float [N*K/32], zp uint8 packed or None, dequantized [K, N]).

    MatMulNBits layout: row n of B holds column n of w, blocks of 32 k-values, two 4-bit values a byte (low nibble
    first); value = (q - zp) * scale. Symmetric (zp 8) unless zero_points, then per-block min/max."""
    k, n = w.shape
    assert k % BLOCK == 0, f"K={k} must be a multiple of {BLOCK}"
    blocks = w.T.reshape(n, k // BLOCK, BLOCK).astype(np.float64)
    if zero_points:
        lo, hi = np.minimum(blocks.min(-1), 0.0), np.maximum(blocks.max(-1), 0.0)
        scale = np.maximum(hi - lo, 1e-8) / 15.0
        zp = np.clip(np.round(-lo / scale), 0, 15)
    else:
        scale = np.maximum(np.abs(blocks).max(-1), 1e-8) / 7.0
        zp = np.full(scale.shape, 8.0)
    scale = scale.astype(np.float32)
    q = np.clip(np.round(blocks / scale[..., None] + zp[..., None]), 0, 15).astype(np.uint8)
    deq = ((q.astype(np.float32) - zp[..., None].astype(np.float32)) * scale[..., None]).astype(np.float32)
    packed = (q[..., 0::2] | (q[..., 1::2] << 4)).astype(np.uint8)  # [N, K/32, 16]
    zp_packed = None
    if zero_points:
        zpq = zp.astype(np.uint8)  # [N, blocks]; packed per row, two blocks a byte, a row padded to whole bytes
        if zpq.shape[1] % 2:
            zpq = np.concatenate([zpq, np.zeros((n, 1), np.uint8)], axis=1)
        zp_packed = (zpq[:, 0::2] | (zpq[:, 1::2] << 4)).reshape(-1).astype(np.uint8)
    return packed, scale.reshape(-1), zp_packed, deq.reshape(n, k).T.copy()


class Weights:
    """Seeded weights drawn in one fixed order, so both forms of one seed get identical tensors."""

    def __init__(self, cfg):
        self.zero_points = cfg.zero_points
        r = np.random.default_rng(cfg.seed)
        h, inter, hd = cfg.hidden, cfg.intermediate, cfg.hidden // cfg.heads
        self.embed = (r.standard_normal((cfg.vocab, h)) * 1.0).astype(np.float32)
        self.layers = []
        for _ in range(cfg.layers):
            lw = {
                "ln1": (1.0 + 0.1 * r.standard_normal(h)).astype(np.float32),
                "q": self._proj(r, h, cfg.heads * hd), "k": self._proj(r, h, cfg.kv_heads * hd),
                "v": self._proj(r, h, cfg.kv_heads * hd), "o": self._proj(r, cfg.heads * hd, h),
                "ln2": (1.0 + 0.1 * r.standard_normal(h)).astype(np.float32),
                "gate": self._proj(r, h, inter), "up": self._proj(r, h, inter), "down": self._proj(r, inter, h),
            }
            self.layers.append(lw)
        self.final_ln = (1.0 + 0.1 * r.standard_normal(h)).astype(np.float32)
        # Logits spread ~4 (RMS-normalized hidden, std 4/sqrt(h)): the top-2 gap is ~1, far above float rounding.
        self.lm_head = (r.standard_normal((h, cfg.vocab)) * 4.0 / np.sqrt(h)).astype(np.float32)
        inv = 1.0 / (cfg.rope_theta ** (np.arange(0, hd, 2, dtype=np.float64) / hd))
        angles = np.arange(cfg.max_positions, dtype=np.float64)[:, None] * inv[None, :]
        self.cos, self.sin = np.cos(angles).astype(np.float32), np.sin(angles).astype(np.float32)

    def _proj(self, r, k, n):
        w = (r.standard_normal((k, n)) / np.sqrt(k)).astype(np.float32)
        return quantize_int4(w, self.zero_points)


class Builder:
    """Nodes, initializers and unique names of one graph."""

    def __init__(self):
        self.nodes, self.inits, self.count = [], [], 0

    def name(self, base):
        self.count += 1
        return f"{base}_{self.count}"

    def init(self, name, array):
        self.inits.append(numpy_helper.from_array(np.asarray(array), name))
        return name

    def const(self, base, array):
        return self.init(self.name(base), array)

    def op(self, op_type, inputs, n_out=1, domain="", name=None, outputs=None, **attrs):
        node_name = name or self.name(op_type)
        outs = outputs or [f"{node_name}/out{i}" for i in range(n_out)]
        self.nodes.append(helper.make_node(op_type, inputs, outs, name=node_name, domain=domain or None, **attrs))
        return outs[0] if n_out == 1 and not outputs else outs


def linear(b, cfg, x, proj, prefix):
    """x @ W: MatMul with the dequantized weight, or MatMulNBits with its packed form."""
    packed, scales, zp, deq = proj
    if cfg.weights == "float":
        return b.op("MatMul", [x, b.init(f"{prefix}.weight", deq)], name=f"{prefix}/MatMul")
    k, n = deq.shape
    inputs = [x, b.init(f"{prefix}.qweight", packed), b.init(f"{prefix}.scales", scales)]
    if zp is not None:
        inputs.append(b.init(f"{prefix}.qzeros", zp))
    return b.op("MatMulNBits", inputs, domain=MS, name=f"{prefix}/MatMulNBits", K=k, N=n, bits=4, block_size=BLOCK)


def rms_norm_standard(b, x, gamma, prefix):
    """x / sqrt(mean(x^2) + eps) * gamma over the last axis, in opset-17 ops."""
    sq = b.op("Pow", [x, b.const("two", np.array(2.0, np.float32))])
    mean = b.op("ReduceMean", [sq], axes=[-1], keepdims=1)
    rms = b.op("Sqrt", [b.op("Add", [mean, b.const("eps", np.array(EPS, np.float32))])])
    return b.op("Mul", [b.op("Div", [x, rms]), b.init(f"{prefix}.weight", gamma)], name=f"{prefix}/Mul")


def rotate_standard(b, x, cos, sin, half):
    """Non-interleaved rotary on x [B, heads, S, head]: [x1*cos - x2*sin, x2*cos + x1*sin], cos/sin [S, half]."""
    axis = b.const("axis", np.array([-1], np.int64))
    x1 = b.op("Slice", [x, b.const("s", np.array([0], np.int64)), b.const("e", np.array([half], np.int64)), axis])
    x2 = b.op("Slice", [x, b.const("s", np.array([half], np.int64)),
                        b.const("e", np.array([2 * half], np.int64)), axis])
    r1 = b.op("Sub", [b.op("Mul", [x1, cos]), b.op("Mul", [x2, sin])])
    r2 = b.op("Add", [b.op("Mul", [x2, cos]), b.op("Mul", [x1, sin])])
    return b.op("Concat", [r1, r2], axis=-1)


def attention_standard(b, cfg, i, h, attn_mask_bias, cos, sin):
    hd = cfg.hidden // cfg.heads
    group = cfg.heads // cfg.kv_heads
    lw = cfg.w.layers[i]
    p = f"model.layers.{i}.attn"

    def heads(x, n):  # [B, S, n*hd] -> [B, n, S, hd]
        r = b.op("Reshape", [x, b.const("shape", np.array([0, 0, n, hd], np.int64))])
        return b.op("Transpose", [r], perm=[0, 2, 1, 3])

    q = rotate_standard(b, heads(linear(b, cfg, h, lw["q"], f"{p}.q_proj"), cfg.heads), cos, sin, hd // 2)
    k = rotate_standard(b, heads(linear(b, cfg, h, lw["k"], f"{p}.k_proj"), cfg.kv_heads), cos, sin, hd // 2)
    v = heads(linear(b, cfg, h, lw["v"], f"{p}.v_proj"), cfg.kv_heads)
    present_k = b.op("Concat", [f"past_key_values.{i}.key", k], axis=2, outputs=[f"present.{i}.key"])[0]
    present_v = b.op("Concat", [f"past_key_values.{i}.value", v], axis=2, outputs=[f"present.{i}.value"])[0]

    def repeat(kv):  # [B, kv, T, hd] -> [B, heads, T, hd]: query head n reads kv head n // group
        u = b.op("Unsqueeze", [kv, b.const("axes", np.array([2], np.int64))])
        e = b.op("Expand", [u, b.const("shape", np.array([1, 1, group, 1, 1], np.int64))])
        return b.op("Reshape", [e, b.const("shape", np.array([0, cfg.heads, -1, hd], np.int64))])

    kt = b.op("Transpose", [repeat(present_k)], perm=[0, 1, 3, 2])
    scores = b.op("Mul", [b.op("MatMul", [q, kt]), b.const("scale", np.array(1.0 / np.sqrt(hd), np.float32))])
    probs = b.op("Softmax", [b.op("Add", [scores, attn_mask_bias])], axis=-1)
    ctx = b.op("Transpose", [b.op("MatMul", [probs, repeat(present_v)])], perm=[0, 2, 1, 3])
    merged = b.op("Reshape", [ctx, b.const("shape", np.array([0, 0, cfg.heads * hd], np.int64))])
    return linear(b, cfg, merged, lw["o"], f"{p}.o_proj")


def attention_contrib(b, cfg, i, h, seqlens_k, total_len):
    lw = cfg.w.layers[i]
    p = f"model.layers.{i}.attn"
    q = linear(b, cfg, h, lw["q"], f"{p}.q_proj")
    k = linear(b, cfg, h, lw["k"], f"{p}.k_proj")
    v = linear(b, cfg, h, lw["v"], f"{p}.v_proj")
    out = b.op("GroupQueryAttention",
               [q, k, v, f"past_key_values.{i}.key", f"past_key_values.{i}.value", seqlens_k, total_len,
                "cos_cache", "sin_cache"],
               domain=MS, name=f"{p}/GroupQueryAttention",
               outputs=[f"{p}/GroupQueryAttention/out", f"present.{i}.key", f"present.{i}.value"],
               num_heads=cfg.heads, kv_num_heads=cfg.kv_heads, do_rotary=1, rotary_interleaved=0)[0]
    return linear(b, cfg, out, lw["o"], f"{p}.o_proj")


def mlp(b, cfg, i, h):
    lw = cfg.w.layers[i]
    p = f"model.layers.{i}.mlp"
    gate = linear(b, cfg, h, lw["gate"], f"{p}.gate_proj")
    up = linear(b, cfg, h, lw["up"], f"{p}.up_proj")
    act = b.op("Mul", [b.op("Mul", [gate, b.op("Sigmoid", [gate])]), up])  # SiLU(gate) * up
    return linear(b, cfg, act, lw["down"], f"{p}.down_proj")


def build_standard(b, cfg):
    w = cfg.w
    x = b.op("Gather", [b.init("model.embed_tokens.weight", w.embed), "input_ids"], axis=0)
    # Positions past .. past+S-1 (past = cached length), and the mask bias [B, 1, S, T]: -inf-like where a key is
    # in the future (causal) or attention_mask is 0 (padding).
    past = b.op("Squeeze", [b.op("Shape", ["past_key_values.0.key"], start=2, end=3),
                            b.const("axes", np.array([0], np.int64))])
    seq = b.op("Squeeze", [b.op("Shape", ["input_ids"], start=1, end=2), b.const("axes", np.array([0], np.int64))])
    total = b.op("Squeeze", [b.op("Shape", ["attention_mask"], start=1, end=2),
                             b.const("axes", np.array([0], np.int64))])
    one = b.const("one", np.array(1, np.int64))
    positions = b.op("Range", [past, b.op("Add", [past, seq]), one])
    cos = b.op("Gather", [b.init("cos_cache", w.cos), positions], axis=0)
    sin = b.op("Gather", [b.init("sin_cache", w.sin), positions], axis=0)
    keys = b.op("Range", [b.const("zero", np.array(0, np.int64)), total, one])
    future = b.op("Greater", [keys, b.op("Unsqueeze", [positions, b.const("axes", np.array([1], np.int64))])])
    padded = b.op("Equal", [b.op("Unsqueeze", ["attention_mask", b.const("axes", np.array([1, 2], np.int64))]),
                            b.const("zero", np.array(0, np.int64))])
    masked = b.op("Or", [future, padded])  # [B, 1, S, T]
    bias = b.op("Where", [masked, b.const("neg", np.array(-1e9, np.float32)), b.const("z", np.array(0, np.float32))])
    residual = x
    for i in range(cfg.layers):
        lw = w.layers[i]
        h = rms_norm_standard(b, residual, lw["ln1"], f"model.layers.{i}.input_layernorm")
        residual = b.op("Add", [residual, attention_standard(b, cfg, i, h, bias, cos, sin)])
        h = rms_norm_standard(b, residual, lw["ln2"], f"model.layers.{i}.post_attention_layernorm")
        residual = b.op("Add", [residual, mlp(b, cfg, i, h)])
    h = rms_norm_standard(b, residual, w.final_ln, "model.norm")
    b.op("MatMul", [h, b.init("lm_head.weight", w.lm_head)], name="lm_head/MatMul", outputs=["logits"])


def build_contrib(b, cfg):
    w = cfg.w
    b.init("cos_cache", w.cos)
    b.init("sin_cache", w.sin)
    x = b.op("Gather", [b.init("model.embed_tokens.weight", w.embed), "input_ids"], axis=0)
    lengths = b.op("ReduceSum", ["attention_mask", b.const("axes", np.array([1], np.int64))], keepdims=0)
    seqlens_k = b.op("Cast", [b.op("Sub", [lengths, b.const("one", np.array(1, np.int64))])], to=TensorProto.INT32)
    total_len = b.op("Cast", [b.op("Squeeze", [b.op("Shape", ["attention_mask"], start=1, end=2)])],
                     to=TensorProto.INT32)
    h = b.op("SimplifiedLayerNormalization", [x, b.init("model.layers.0.input_layernorm.weight", w.layers[0]["ln1"])],
             axis=-1, epsilon=EPS)
    residual = x
    for i in range(cfg.layers):
        attn = attention_contrib(b, cfg, i, h, seqlens_k, total_len)
        h, _, _, residual = b.op("SkipSimplifiedLayerNormalization",
                                 [attn, residual, b.init(f"model.layers.{i}.post_attention_layernorm.weight",
                                                         w.layers[i]["ln2"])],
                                 n_out=4, domain=MS, epsilon=EPS)
        out = mlp(b, cfg, i, h)
        gamma = w.layers[i + 1]["ln1"] if i + 1 < cfg.layers else w.final_ln
        gname = f"model.layers.{i + 1}.input_layernorm.weight" if i + 1 < cfg.layers else "model.norm.weight"
        h, _, _, residual = b.op("SkipSimplifiedLayerNormalization", [out, residual, b.init(gname, gamma)],
                                 n_out=4, domain=MS, epsilon=EPS)
    b.op("MatMul", [h, b.init("lm_head.weight", w.lm_head)], name="lm_head/MatMul", outputs=["logits"])


def make_model(cfg):
    cfg.w = Weights(cfg)
    b = Builder()
    (build_contrib if cfg.form == "contrib" else build_standard)(b, cfg)
    hd = cfg.hidden // cfg.heads
    inputs = [helper.make_tensor_value_info("input_ids", TensorProto.INT64, ["batch_size", "sequence_length"]),
              helper.make_tensor_value_info("attention_mask", TensorProto.INT64, ["batch_size", "total_sequence_length"])]
    outputs = [helper.make_tensor_value_info("logits", TensorProto.FLOAT, ["batch_size", "sequence_length", cfg.vocab])]
    for i in range(cfg.layers):
        for kind in ("key", "value"):
            inputs.append(helper.make_tensor_value_info(f"past_key_values.{i}.{kind}", TensorProto.FLOAT,
                                                        ["batch_size", cfg.kv_heads, "past_sequence_length", hd]))
            outputs.append(helper.make_tensor_value_info(f"present.{i}.{kind}", TensorProto.FLOAT,
                                                         ["batch_size", cfg.kv_heads, "total_sequence_length", hd]))
    graph = helper.make_graph(b.nodes, f"decoder_{cfg.form}", inputs, outputs, b.inits)
    imports = [helper.make_opsetid("", 17)]
    if cfg.form == "contrib":
        imports.append(helper.make_opsetid(MS, 1))
    model = helper.make_model(graph, opset_imports=imports, producer_name="kiln make_decoder.py")
    model.ir_version = 8
    return model


def parse_args(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--form", choices=("contrib", "standard"), required=True)
    p.add_argument("--layers", type=int, default=4)
    p.add_argument("--hidden", type=int, default=64)
    p.add_argument("--heads", type=int, default=4)
    p.add_argument("--kv-heads", type=int, default=2)
    p.add_argument("--vocab", type=int, default=256)
    p.add_argument("--intermediate", type=int, default=0, help="MLP width (default 4*hidden)")
    p.add_argument("--max-positions", type=int, default=512, help="rows of the cos/sin caches")
    p.add_argument("--rope-theta", type=float, default=10000.0)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--weights", choices=("float", "int4"), default="float")
    p.add_argument("--zero-points", action="store_true", help="int4 with per-block zero points (asymmetric)")
    p.add_argument("--out", required=True)
    cfg = p.parse_args(argv)
    cfg.intermediate = cfg.intermediate or 4 * cfg.hidden
    hd = cfg.hidden // max(cfg.heads, 1)
    problems = []
    if cfg.heads <= 0 or cfg.hidden % cfg.heads or hd % 2:
        problems.append("--hidden must split into --heads heads of an even size")
    if cfg.kv_heads <= 0 or cfg.heads % cfg.kv_heads:
        problems.append("--heads must be a multiple of --kv-heads")
    if cfg.hidden % BLOCK or cfg.intermediate % BLOCK:
        problems.append(f"--hidden and --intermediate must be multiples of {BLOCK} (the int4 block)")
    if cfg.weights == "int4" and cfg.form == "standard":
        problems.append("--weights int4 needs --form contrib (MatMulNBits is a com.microsoft operator)")
    if problems:
        p.error("; ".join(problems))
    return cfg


def main(argv=None):
    cfg = parse_args(argv)
    onnx.save(make_model(cfg), cfg.out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
