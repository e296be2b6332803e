#!/usr/bin/python3
"""Generates a small model that calls a model-local ONNX function, for the studio's function tests and tour.

main: Relu 'stem' -> custom:ScaleShift 'block' (alpha=0.5, bias initializer) -> Sigmoid 'head'
  custom:ScaleShift(X, B) -> Y, attribute alpha:
      Constant 'alpha_const' (value_float = @alpha) -> Mul 'scale_mul' -> Add 'shift_add' (B) -> Tanh 'squash'
The Constant's value is an attribute reference (ref_attr_name) to the call's `alpha`. With --self-call the body's
Tanh is replaced by a call of ScaleShift itself (bad input: a function that never ends). Run with Debian's python3:
    /usr/bin/python3 tests/tools/make_function_model.py out.onnx [--self-call]
"""
import argparse

import numpy as np
import onnx
from onnx import AttributeProto, TensorProto, helper, numpy_helper


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("output")
    parser.add_argument("--self-call", action="store_true")
    args = parser.parse_args()

    shape = [1, 4, 8, 8]
    f = TensorProto.FLOAT
    alpha_ref = AttributeProto()
    alpha_ref.name = "value_float"
    alpha_ref.ref_attr_name = "alpha"
    alpha_ref.type = AttributeProto.FLOAT
    alpha_const = helper.make_node("Constant", [], ["alpha"], name="alpha_const")
    alpha_const.attribute.append(alpha_ref)
    function = helper.make_function(
        "custom", "ScaleShift", ["X", "B"], ["Y"],
        [
            alpha_const,
            helper.make_node("Mul", ["X", "alpha"], ["scaled"], name="scale_mul"),
            helper.make_node("Add", ["scaled", "B"], ["shifted"], name="shift_add"),
            helper.make_node("ScaleShift", ["shifted", "B"], ["Y"], name="again", domain="custom", alpha=1.0)
            if args.self_call else helper.make_node("Tanh", ["shifted"], ["Y"], name="squash"),
        ],
        [helper.make_opsetid("", 17)], attributes=["alpha"])
    graph = helper.make_graph(
        [
            helper.make_node("Relu", ["x"], ["relu"], name="stem"),
            helper.make_node("ScaleShift", ["relu", "bias"], ["block_out"], name="block", domain="custom", alpha=0.5),
            helper.make_node("Sigmoid", ["block_out"], ["y"], name="head"),
        ],
        "function_model",
        [helper.make_tensor_value_info("x", f, shape)],
        [helper.make_tensor_value_info("y", f, shape)],
        initializer=[numpy_helper.from_array(np.full([1, 4, 1, 1], 0.25, dtype=np.float32), "bias")])
    model = helper.make_model(graph, functions=[function], producer_name="kiln-tests",
                              opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid("custom", 1)])
    model.ir_version = 8
    if not args.self_call:
        onnx.checker.check_model(model)
    onnx.save(model, args.output)


if __name__ == "__main__":
    main()
