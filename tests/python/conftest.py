"""Shared fixtures: the models the kiln Python tests run (generated with python3-onnx where small) and paths from
the ctest environment (tests/python/CMakeLists.txt)."""

import os
import pathlib
import sys

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "support"))
from kiln_requirements import skip_or_fail_pytest  # noqa: E402

SOURCE_DIR = pathlib.Path(os.environ.get("KILN_SOURCE_DIR", pathlib.Path(__file__).resolve().parents[2]))
TINY_CNN = SOURCE_DIR / "resources" / "models" / "tiny_cnn.onnx"
MODEL_CACHE = pathlib.Path(os.environ.get("KILN_MODEL_CACHE", pathlib.Path.home() / ".cache" / "kiln" / "models"))
CPU = ["CPUExecutionProvider"]
VULKAN = ["VulkanExecutionProvider", "CPUExecutionProvider"]

# Element types the dtype round trip covers: ONNX type -> NumPy dtype.
ROUND_TRIP_TYPES = {
    TensorProto.FLOAT: np.float32, TensorProto.DOUBLE: np.float64, TensorProto.FLOAT16: np.float16,
    TensorProto.INT8: np.int8, TensorProto.INT16: np.int16, TensorProto.INT32: np.int32, TensorProto.INT64: np.int64,
    TensorProto.UINT8: np.uint8, TensorProto.UINT16: np.uint16, TensorProto.UINT32: np.uint32,
    TensorProto.UINT64: np.uint64, TensorProto.BOOL: np.bool_, TensorProto.STRING: np.object_,
}


def save(model, path):
    onnx.save(model, str(path))
    return str(path)


def identity_model(elem_type, dims=("n", 3)):
    """y = Identity(x) for one element type, with a symbolic first dimension."""
    x = helper.make_tensor_value_info("x", elem_type, list(dims))
    y = helper.make_tensor_value_info("y", elem_type, list(dims))
    graph = helper.make_graph([helper.make_node("Identity", ["x"], ["y"], name="id")], "identity", [x], [y])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], producer_name="kiln-tests")


def add_mul_model():
    """sum = a + b and product = a * b over float [2, "n"] (two outputs, for output_names)."""
    a = helper.make_tensor_value_info("a", TensorProto.FLOAT, [2, "n"])
    b = helper.make_tensor_value_info("b", TensorProto.FLOAT, [2, "n"])
    outputs = [helper.make_tensor_value_info(name, TensorProto.FLOAT, [2, "n"]) for name in ("sum", "product")]
    nodes = [helper.make_node("Add", ["a", "b"], ["sum"], name="add"),
             helper.make_node("Mul", ["a", "b"], ["product"], name="mul")]
    model = helper.make_model(helper.make_graph(nodes, "add_mul", [a, b], outputs),
                              opset_imports=[helper.make_opsetid("", 17)], producer_name="kiln-tests")
    helper.set_model_props(model, {"author": "kiln"})
    return model


@pytest.fixture(scope="session")
def models(tmp_path_factory):
    folder = tmp_path_factory.mktemp("models")
    paths = {"add_mul": save(add_mul_model(), folder / "add_mul.onnx"), "tiny_cnn": str(TINY_CNN)}
    for elem_type in ROUND_TRIP_TYPES:
        name = TensorProto.DataType.Name(elem_type).lower()
        paths[name] = save(identity_model(elem_type), folder / f"identity_{name}.onnx")
    return paths


@pytest.fixture(scope="session")
def tiny_input():
    return np.random.default_rng(7).standard_normal((1, 3, 32, 32)).astype(np.float32)


def require_vulkan():
    """Skips a Vulkan test where no device exists, unless KILN_REQUIRE_VULKAN=1 (CI) makes that a failure."""
    import kiln
    try:
        found = bool(kiln.devices())
    except kiln.KilnError:
        found = False
    if not found:
        skip_or_fail_pytest("VULKAN", "no Vulkan device")
