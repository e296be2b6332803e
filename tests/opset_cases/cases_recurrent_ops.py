"""Cases for GRU (opset 14's form, which opsets 18-23 keep), the recurrent op of speech and small sequence models
that the Vulkan EP runs: forward, reverse and bidirectional; linear_before_reset 0 and 1; with and without bias and
initial_h; a hidden size and input size above the shader's 64-wide tiles; sequence_lens
covering the whole sequence and, for the CPU EP, shorter ones; only Y or only Y_h. Weights are initializers, as
exporters write them. onnxruntime-node gives the expected outputs; it refuses layout 1, which the node test
test_gru_batchwise covers."""
from __future__ import annotations

import numpy as np
from onnx import TensorProto

from case_builder import Const, floats, rng, single

OPSET = 18
F = TensorProto.FLOAT


def gru_case(variant: str, seq: int, batch: int, inputs: int, hidden: int, direction: str = "forward",
             linear_before_reset: int = 0, bias: bool = True, initial_h: bool = True,
             lengths: list | None = None, outputs=("y", "y_h")):
    r = rng(f"gru{variant}")
    dirs = 2 if direction == "bidirectional" else 1
    x = floats(r, seq, batch, inputs)
    w = floats(r, dirs, 3 * hidden, inputs, scale=0.4)
    rw = floats(r, dirs, 3 * hidden, hidden, scale=0.4)
    entries = [("x", x), Const("w", w), Const("r", rw)]
    entries.append(Const("b", floats(r, dirs, 6 * hidden, scale=0.3)) if bias else None)
    entries.append(Const("sequence_lens", np.array(lengths, np.int32)) if lengths is not None else None)
    if initial_h:
        entries.append(("initial_h", floats(r, dirs, batch, hidden)))
    while entries[-1] is None:
        entries.pop()
    attrs = {"hidden_size": hidden, "direction": direction, "linear_before_reset": linear_before_reset}
    present = [o for o in outputs if o]
    return single("GRU", OPSET, variant, entries, attrs, outputs=list(outputs), out_types=[F] * len(present))


def gru_cases():
    return [
        gru_case("forward", 5, 3, 4, 6),
        gru_case("forward_lbr", 5, 3, 4, 6, linear_before_reset=1),
        gru_case("reverse_plain", 4, 2, 3, 5, direction="reverse", bias=False, initial_h=False),
        gru_case("reverse_lbr", 4, 2, 3, 5, direction="reverse", linear_before_reset=1),
        gru_case("bidirectional", 6, 2, 5, 4, direction="bidirectional"),
        gru_case("bidirectional_lbr", 6, 2, 5, 4, direction="bidirectional", linear_before_reset=1),
        gru_case("wide", 3, 2, 80, 70, direction="bidirectional"),  # two 64-wide tiles of x and of h
        gru_case("wide_lbr", 3, 2, 80, 70, linear_before_reset=1),
        gru_case("full_lengths", 4, 2, 3, 5, lengths=[4, 4]),
        gru_case("short_lengths", 4, 3, 3, 5, direction="bidirectional", lengths=[4, 2, 1]),  # the CPU EP's
        gru_case("only_y_h", 5, 1, 4, 6, outputs=("", "y_h")),
        gru_case("only_y", 5, 1, 4, 6, linear_before_reset=1, outputs=("y",)),
        gru_case("single_step", 1, 4, 8, 8, direction="bidirectional"),
    ]


def all_cases():
    return gru_cases()
