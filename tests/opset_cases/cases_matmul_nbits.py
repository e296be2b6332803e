"""Cases for onnxruntime's com.microsoft MatMulNBits, the block-quantized weight MatMul of int4/int8 exported LLMs:
Y = A x dequant(B)^T (+ bias). B, scales and zero points are initializers as real models carry them (one case feeds
B as a graph input); block sizes 16-256, 2, 4 and 8 bits, uint8-packed, float and absent zero points, K with a
padded last block, decode (M = 1) and prefill (M > 4) shapes, 3-D A, float16, accuracy_level 0 and 4 (int8 A in
onnxruntime's CPU kernel), N = 1 and empty A. onnxruntime-node's CPU kernel gives the expected outputs."""
from __future__ import annotations

import numpy as np

from case_builder import Const, floats, rng, single

MS = "com.microsoft"
OPSET = 17  # the ai.onnx opset beside com.microsoft version 1, as exporters write it


def _pack(codes: np.ndarray, bits: int) -> np.ndarray:
    """Packs codes [..., count] (count a multiple of 8 / bits) low bits first: [..., count * bits / 8] bytes."""
    per_byte = 8 // bits
    grouped = codes.reshape(*codes.shape[:-1], -1, per_byte).astype(np.uint16)
    shifts = (np.arange(per_byte) * bits).astype(np.uint16)
    return (grouped << shifts).sum(axis=-1).astype(np.uint8)


def quantized_weights(r, n: int, k: int, bits: int, block: int, zero_points: str, dtype=np.float32,
                      two_d: bool = False):
    """B [n, k_blocks, blob], scales and zero points ('uint8', 'float' or 'none') for random codes. Codes in the
    padding of the last block are random too: both runtimes must leave them out."""
    k_blocks = (k + block - 1) // block
    codes = r.integers(0, 1 << bits, size=(n, k_blocks * block), dtype=np.uint8)
    b = _pack(codes, bits).reshape(n, k_blocks, block * bits // 8)
    scales = (r.uniform(0.01, 0.1, size=(n, k_blocks))).astype(dtype)
    zp = None
    if zero_points == "uint8":
        zp_blocks = (k_blocks * bits + 7) // 8 * (8 // bits)
        zp_codes = r.integers(0, 1 << bits, size=(n, zp_blocks), dtype=np.uint8)
        zp = _pack(zp_codes, bits)
    elif zero_points == "float":
        zp = (r.uniform(0, (1 << bits) - 1, size=(n, k_blocks))).astype(dtype)
    if not two_d:
        scales = scales.reshape(-1)
        zp = None if zp is None else zp.reshape(-1)
    return b, scales, zp


def nbits_case(variant: str, a_shape, n: int, bits: int, block: int, zero_points: str = "uint8",
               dtype=np.float32, bias: bool = False, accuracy: int = 0, b_input: bool = False, two_d: bool = False):
    r = rng(f"nbits_{variant}")
    k = a_shape[-1]
    a = floats(r, *a_shape, dtype=dtype)
    b, scales, zp = quantized_weights(r, n, k, bits, block, zero_points, dtype, two_d)
    inputs = [("a", a), ("b", b) if b_input else Const("b", b), Const("scales", scales)]
    inputs.append(Const("zero_points", zp) if zp is not None else None)
    if bias:
        inputs += [None, Const("bias", floats(r, n, dtype=dtype))]
    while inputs[-1] is None:
        inputs.pop()
    attrs = {"K": k, "N": n, "bits": bits, "block_size": block, "accuracy_level": accuracy}
    return single("MatMulNBits", OPSET, variant, inputs, attrs, domain=MS)


def block_size_cases():
    out = []
    for block in (16, 32, 64, 128, 256):
        out.append(nbits_case(f"b4_bs{block}", (1, 2 * block), 8, 4, block))
        out.append(nbits_case(f"b8_bs{block}", (1, 2 * block), 8, 8, block))
        out.append(nbits_case(f"b4_bs{block}_prefill", (6, 2 * block), 8, 4, block))
        out.append(nbits_case(f"b4_bs{block}_int8a", (1, 2 * block), 8, 4, block, accuracy=4))
    for block in (16, 32, 64):
        out.append(nbits_case(f"b2_bs{block}", (1, 2 * block), 8, 2, block))
    return out


def zero_point_cases():
    return [
        nbits_case("b4_no_zp", (2, 64), 16, 4, 32, "none"),
        nbits_case("b8_no_zp", (2, 64), 16, 8, 32, "none"),
        nbits_case("b4_float_zp", (1, 64), 16, 4, 32, "float"),
        nbits_case("b4_float_zp_prefill", (7, 96), 16, 4, 32, "float"),
        nbits_case("b4_float_zp_f16", (2, 64), 16, 4, 32, "float", dtype=np.float16),
        nbits_case("b4_zp_odd_blocks", (1, 96), 5, 4, 32),  # 3 blocks: the last zero-point byte is half used
        nbits_case("b4_2d_scales_zp", (1, 64), 8, 4, 16, two_d=True),
    ]


def shape_cases():
    return [
        nbits_case("b4_bias", (1, 64), 24, 4, 32, bias=True),
        nbits_case("b8_bias_prefill", (9, 64), 24, 8, 32, bias=True),
        nbits_case("b4_k_padded", (1, 100), 12, 4, 32),
        nbits_case("b4_k_padded_prefill", (5, 100), 12, 4, 32),
        nbits_case("b8_k_padded", (2, 40), 12, 8, 16),
        nbits_case("b4_k_below_block", (1, 20), 6, 4, 64),
        nbits_case("b4_m3", (3, 64), 20, 4, 32),
        nbits_case("b4_3d", (2, 3, 64), 20, 4, 32, bias=True),
        nbits_case("b4_3d_decode", (1, 1, 128), 33, 4, 32),
        nbits_case("b4_n1", (1, 64), 1, 4, 32),
        nbits_case("b4_n1_prefill", (8, 64), 1, 4, 32),
        nbits_case("b4_empty_m", (0, 64), 8, 4, 32),
        nbits_case("b4_1d_a", (64,), 8, 4, 32),
        nbits_case("b4_b_input", (2, 64), 8, 4, 32, b_input=True),
        nbits_case("b4_wide", (1, 1024), 96, 4, 32, bias=True),
        nbits_case("b4_wide_prefill", (16, 512), 130, 4, 64),
    ]


def float16_cases():
    f16 = np.float16
    return [
        nbits_case("b4_f16", (1, 64), 16, 4, 32, dtype=f16),
        nbits_case("b4_f16_bias_prefill", (6, 64), 16, 4, 32, dtype=f16, bias=True),
        nbits_case("b8_f16", (2, 128), 16, 8, 64, dtype=f16),
        nbits_case("b4_f16_no_zp_3d", (2, 2, 64), 16, 4, 16, "none", dtype=f16),
    ]


def accuracy_level_cases():
    """accuracy_level 4: onnxruntime's CPU kernel rounds A to int8 per block when B is a constant."""
    return [
        nbits_case("b4_int8a_no_zp", (1, 128), 16, 4, 32, "none", accuracy=4),
        nbits_case("b4_int8a_prefill", (7, 128), 16, 4, 32, accuracy=4, bias=True),
        nbits_case("b4_int8a_m40", (40, 128), 24, 4, 32, accuracy=4),  # past the int8 dot: int8-rounded A, GEMM
        nbits_case("b4_int8a_k_padded", (2, 100), 16, 4, 32, accuracy=4),
        nbits_case("b8_int8a", (1, 128), 16, 8, 32, accuracy=4),
        nbits_case("b8_int8a_prefill", (6, 256), 16, 8, 128, accuracy=4),
        nbits_case("b4_int8a_f16", (2, 128), 16, 4, 64, dtype=np.float16, accuracy=4),
        nbits_case("b4_int8a_float_zp", (1, 64), 16, 4, 32, "float", accuracy=4),  # float zero points: float A
        nbits_case("b4_int8a_b_input", (1, 64), 16, 4, 32, accuracy=4, b_input=True),  # B not constant: float A
        nbits_case("b4_int8a_wide", (1, 1024), 64, 4, 32, accuracy=4),
        nbits_case("b4_int8a_odd_blocks", (3, 160), 30, 4, 32, accuracy=4),  # 5 blocks of 32: the last one alone
        nbits_case("b4_int8a_bs256", (2, 600), 7, 4, 256, accuracy=4, bias=True),
        nbits_case("b4_accuracy1", (1, 64), 16, 4, 32, accuracy=1),
    ]


def all_cases():
    return block_size_cases() + zero_point_cases() + shape_cases() + float16_cases() + accuracy_level_cases()
