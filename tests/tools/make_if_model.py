#!/usr/bin/python3
"""Generates a small model with control flow for the studio's subgraph tests and screenshot tour.

main: Conv -> Relu -> ReduceMean -> Greater(Constant 0) -> If 'branch'
  then_branch: Mul(relu, Constant scale) -> Conv(outer-scope weight w2) -> Sigmoid
  else_branch: Add(relu, bias) -> Relu -> If 'inner' (cond again, an outer-scope value two levels up)
      then_branch: Neg ; else_branch: Shrink (no Vulkan kernel: a CPU fallback inside a body)
The bodies read `relu`, `cond` and `w2` from the enclosing graphs (outer-scope values). With --bodies-only the main
graph is the If alone, `relu` and `cond` its inputs: a compile puts EPContext nodes in the bodies only.
Run with Debian's python3:
    /usr/bin/python3 tests/tools/make_if_model.py [--bodies-only] out.onnx
"""
import argparse

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("output")
    parser.add_argument("--bodies-only", action="store_true", help="main graph: the If alone")
    args = parser.parse_args()

    rng = np.random.default_rng(3)
    shape = [1, 4, 8, 8]
    f = TensorProto.FLOAT

    def out(name):
        return helper.make_tensor_value_info(name, f, shape)

    inner_then = helper.make_graph(
        [helper.make_node("Neg", ["e_relu"], ["it_out"], name="inner_neg")], "inner_then", [], [out("it_out")])
    inner_else = helper.make_graph(
        [helper.make_node("Shrink", ["e_relu"], ["ie_out"], name="inner_shrink", lambd=0.1)], "inner_else", [],
        [out("ie_out")])
    then_branch = helper.make_graph(
        [
            helper.make_node("Constant", [], ["scale"], name="scale_const",
                             value=numpy_helper.from_array(np.array([0.5], dtype=np.float32), "scale")),
            helper.make_node("Mul", ["relu", "scale"], ["t_mul"], name="then_mul"),
            helper.make_node("Conv", ["t_mul", "w2"], ["t_conv"], name="then_conv", pads=[1, 1, 1, 1]),
            helper.make_node("Sigmoid", ["t_conv"], ["t_out"], name="then_sigmoid"),
        ],
        "then_body", [], [out("t_out")])
    else_branch = helper.make_graph(
        [
            helper.make_node("Add", ["relu", "bias"], ["e_add"], name="else_add"),
            helper.make_node("Relu", ["e_add"], ["e_relu"], name="else_relu"),
            helper.make_node("If", ["cond"], ["e_out"], name="inner", then_branch=inner_then, else_branch=inner_else),
        ],
        "else_body", [], [out("e_out")],
        initializer=[numpy_helper.from_array(np.full([1, 4, 1, 1], 0.25, dtype=np.float32), "bias")])
    if args.bodies_only:
        graph = helper.make_graph(
            [helper.make_node("If", ["cond"], ["y"], name="branch", then_branch=then_branch, else_branch=else_branch)],
            "if_bodies_only",
            [helper.make_tensor_value_info("relu", f, shape), helper.make_tensor_value_info("cond", TensorProto.BOOL, [])],
            [out("y")],
            initializer=[numpy_helper.from_array((rng.standard_normal([4, 4, 3, 3]) * 0.3).astype(np.float32), "w2")])
        save(graph, args.output)
        return
    graph = helper.make_graph(
        [
            helper.make_node("Conv", ["x", "w1"], ["conv"], name="stem_conv", pads=[1, 1, 1, 1]),
            helper.make_node("Relu", ["conv"], ["relu"], name="stem_relu"),
            helper.make_node("ReduceMean", ["relu"], ["mean"], name="mean", keepdims=0),
            helper.make_node("Constant", [], ["zero"], name="zero_const",
                             value=numpy_helper.from_array(np.array(0.1, dtype=np.float32), "zero")),
            helper.make_node("Greater", ["mean", "zero"], ["cond"], name="gate"),
            helper.make_node("If", ["cond"], ["y"], name="branch", then_branch=then_branch, else_branch=else_branch),
        ],
        "if_model",
        [helper.make_tensor_value_info("x", f, shape)],
        [out("y")],
        initializer=[
            numpy_helper.from_array((rng.standard_normal([4, 4, 3, 3]) * 0.3).astype(np.float32), "w1"),
            numpy_helper.from_array((rng.standard_normal([4, 4, 3, 3]) * 0.3).astype(np.float32), "w2"),
        ])
    save(graph, args.output)


def save(graph, output) -> None:
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], producer_name="kiln-tests")
    model.ir_version = 8
    onnx.checker.check_model(model)
    onnx.save(model, output)


if __name__ == "__main__":
    main()
