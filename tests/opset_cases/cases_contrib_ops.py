"""Cases for onnxruntime's com.microsoft contrib operators that exported transformers use: FastGelu, BiasGelu,
QuickGelu, Gelu, SkipLayerNormalization, SkipSimplifiedLayerNormalization and SimplifiedLayerNormalization (which
onnxruntime registers in the ai.onnx domain at version 1). Each op: its optional inputs and outputs, attributes,
float32 and float16, and edge shapes. onnxruntime-node's CPU kernels give the expected outputs."""
from __future__ import annotations

import numpy as np
from onnx import TensorProto

from case_builder import floats, rng, single

MS = "com.microsoft"
OPSET = 17  # the ai.onnx opset beside com.microsoft version 1, as exporters write it
F, F16 = TensorProto.FLOAT, TensorProto.FLOAT16


def gelu_family_cases():
    out = []
    for variant, shape, dtype in (("3d", (2, 3, 8), np.float32), ("f16", (3, 8), np.float16),
                                  ("empty", (0, 8), np.float32)):
        r = rng(f"ms_gelu{variant}")
        x, bias = floats(r, *shape, dtype=dtype, scale=2.0), floats(r, shape[-1], dtype=dtype)
        out.append(single("FastGelu", OPSET, variant, [("x", x)], domain=MS))
        out.append(single("FastGelu", OPSET, f"{variant}_bias", [("x", x), ("bias", bias)], domain=MS))
        out.append(single("BiasGelu", OPSET, variant, [("x", x), ("bias", bias)], domain=MS))
        out.append(single("Gelu", OPSET, variant, [("x", x)], domain=MS))
        out.append(single("QuickGelu", OPSET, variant, [("x", x)], domain=MS))
        out.append(single("QuickGelu", OPSET, f"{variant}_alpha", [("x", x)], {"alpha": 1.5}, domain=MS))
    return out


def skip_layer_norm_cases():
    """SkipLayerNormalization and SkipSimplifiedLayerNormalization: input + skip (+ bias), normalized over the last
    axis; the optional outputs mean, inv_std_var and input_skip_bias_sum."""
    out = []
    specs = (("3d", (2, 3, 8), (2, 3, 8), np.float32), ("skip_bcast_batch", (2, 3, 8), (1, 3, 8), np.float32),
             ("skip_2d", (2, 3, 8), (3, 8), np.float32), ("f16", (2, 4, 16), (2, 4, 16), np.float16),
             ("seq1", (1, 1, 32), (1, 1, 32), np.float32))
    for variant, shape, skip_shape, dtype in specs:
        r = rng(f"ms_sln{variant}")
        hidden = shape[-1]
        x, skip = floats(r, *shape, dtype=dtype), floats(r, *skip_shape, dtype=dtype)
        gamma, beta = floats(r, hidden, dtype=dtype), floats(r, hidden, dtype=dtype)
        bias = floats(r, hidden, dtype=dtype)
        eps = {"epsilon": 1e-5}
        out.append(single("SkipLayerNormalization", OPSET, variant, [("x", x), ("skip", skip), ("gamma", gamma),
                                                                 ("beta", beta), ("bias", bias)], eps, domain=MS))
        out.append(single("SkipSimplifiedLayerNormalization", OPSET, variant,
                          [("x", x), ("skip", skip), ("gamma", gamma), ("bias", bias)], eps, domain=MS))
    r = rng("ms_sln_outputs")
    x, skip, gamma = floats(r, 2, 3, 8), floats(r, 2, 3, 8), floats(r, 8)
    beta = floats(r, 8)
    # All four outputs; onnxruntime's CPU kernel fills mean and inv_std_var with [batch, seq, 1] values.
    out.append(single("SkipLayerNormalization", OPSET, "all_outputs", [("x", x), ("skip", skip), ("gamma", gamma),
                                                                   ("beta", beta)], {"epsilon": 1e-3},
                      outputs=["y", "mean", "inv_std", "sum"], out_types=[F, F, F, F], domain=MS))
    out.append(single("SkipLayerNormalization", OPSET, "sum_only", [("x", x), ("skip", skip), ("gamma", gamma)], {},
                      outputs=["y", "", "", "sum"], out_types=[F, F], domain=MS))
    out.append(single("SkipSimplifiedLayerNormalization", OPSET, "sum_output", [("x", x), ("skip", skip),
                                                                            ("gamma", gamma)], {},
                      outputs=["y", "", "", "sum"], out_types=[F, F], domain=MS))
    return out


def simplified_layer_norm_cases():
    out = []
    specs = (("last", (2, 3, 8), -1, np.float32), ("axis1", (2, 3, 4), 1, np.float32),
             ("f16", (2, 16), -1, np.float16), ("empty_batch", (0, 4), -1, np.float32))
    for variant, shape, axis, dtype in specs:
        r = rng(f"sln{variant}")
        x, scale = floats(r, *shape, dtype=dtype), floats(r, *shape[axis:], dtype=dtype)
        out.append(single("SimplifiedLayerNormalization", 17, variant, [("x", x), ("scale", scale)],
                          {"axis": axis, "epsilon": 1e-5}))
    r = rng("sln_inv_std")
    x, scale = floats(r, 2, 3, 8), floats(r, 8)
    out.append(single("SimplifiedLayerNormalization", 17, "inv_std", [("x", x), ("scale", scale)], {"axis": -1},
                      outputs=["y", "inv_std"], out_types=[F, F]))
    return out


def all_cases():
    return gelu_family_cases() + skip_layer_norm_cases() + simplified_layer_norm_cases()
