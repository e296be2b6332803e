#!/usr/bin/python3
"""Generates tests/cli/data/partition_sample.onnx: the model of the `kiln partition` golden tests.

Small, but it exercises what the partition report shows: Constant nodes folded into initializers (in the main
graph and inside an If branch), a constant subexpression folded, a dead node removed, and an If whose branches
are partitioned on their own. Run with Debian's python3:
    /usr/bin/python3 tests/tools/make_partition_sample.py tests/cli/data/partition_sample.onnx
"""
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def constant(name, output, values):
    return helper.make_node("Constant", [], [output], name=name,
                            value=numpy_helper.from_array(np.array(values, dtype=np.float32)))


def main(path: str) -> None:
    then_branch = helper.make_graph(
        [constant("k_const", "k", [0.5, -1.0, 2.0, 1.5]),
         helper.make_node("Mul", ["shifted", "k"], ["then_out"], name="then_mul")],
        "then", [], [helper.make_tensor_value_info("then_out", TensorProto.FLOAT, [1, 4])])
    else_branch = helper.make_graph(
        [helper.make_node("Neg", ["shifted"], ["else_out"], name="else_neg")],
        "else", [], [helper.make_tensor_value_info("else_out", TensorProto.FLOAT, [1, 4])])
    nodes = [
        constant("scale_const", "scale", [1.0, 2.0, 3.0, 4.0]),
        constant("offset_const", "offset", [0.5, 0.5, -0.5, -0.5]),
        constant("zero_const", "zero", 0.0),
        helper.make_node("Add", ["scale", "offset"], ["bias"], name="fold_bias"),
        helper.make_node("Mul", ["x", "scale"], ["scaled"], name="mul"),
        helper.make_node("Add", ["scaled", "bias"], ["shifted"], name="add"),
        helper.make_node("ReduceSum", ["shifted"], ["total"], name="sum", keepdims=0),
        helper.make_node("Greater", ["total", "zero"], ["positive"], name="gt"),
        helper.make_node("If", ["positive"], ["y"], name="branch", then_branch=then_branch,
                         else_branch=else_branch),
        helper.make_node("Relu", ["x"], ["unused"], name="dead_relu"),
    ]
    graph = helper.make_graph(nodes, "partition_sample",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 4])])
    model = helper.make_model(graph, producer_name="kiln-tests", opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 8
    onnx.checker.check_model(model)
    onnx.save(model, path)


if __name__ == "__main__":
    main(sys.argv[1])
