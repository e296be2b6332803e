"""IOBinding and OrtValue with onnxruntime's API shape: a cache bound to the Vulkan device and fed back step after
step never crosses to host memory (get_transfers), gives the same values as plain runs, and reads back on demand."""

import numpy as np
import pytest
from onnx import TensorProto, helper

import kiln
from conftest import CPU, VULKAN, require_vulkan, save


def cache_model(path):
    """present = Concat(past, 2 * x) on axis 2, y = Relu(x) + 1; past [1, 2, T, 4], x [1, 2, 1, 4]."""
    past = helper.make_tensor_value_info("past", TensorProto.FLOAT, [1, 2, "T", 4])
    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 2, 1, 4])
    present = helper.make_tensor_value_info("present", TensorProto.FLOAT, [1, 2, "T1", 4])
    y = helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 2, 1, 4])
    nodes = [helper.make_node("Mul", ["x", "two"], ["x2"]),
             helper.make_node("Concat", ["past", "x2"], ["present"], axis=2),
             helper.make_node("Relu", ["x"], ["r"]),
             helper.make_node("Add", ["r", "one"], ["y"])]
    inits = [helper.make_tensor("two", TensorProto.FLOAT, [1], [2.0]),
             helper.make_tensor("one", TensorProto.FLOAT, [1], [1.0])]
    graph = helper.make_graph(nodes, "cache", [past, x], [present, y], inits)
    return save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), path)


def step_input(step):
    return (np.sin(np.arange(8, dtype=np.float32) + 8 * step) * 3).reshape(1, 2, 1, 4).astype(np.float32)


def reference(steps):
    past = np.zeros((1, 2, 0, 4), np.float32)
    presents = []
    for s in range(steps):
        past = np.concatenate([past, 2 * step_input(s)], axis=2)
        presents.append(past)
    return presents


def test_cpu_binding_returns_bound_outputs(tmp_path):
    session = kiln.InferenceSession(cache_model(tmp_path / "cache.onnx"), providers=CPU)
    binding = session.io_binding()
    binding.bind_cpu_input("past", np.zeros((1, 2, 0, 4), np.float32))
    binding.bind_cpu_input("x", step_input(0))
    binding.bind_output("y")
    binding.bind_output("present", "cpu")
    session.run_with_iobinding(binding)
    assert binding.get_output_names() == ["y", "present"]
    y, present = binding.copy_outputs_to_cpu()
    np.testing.assert_array_equal(y, np.maximum(step_input(0), 0) + 1)
    np.testing.assert_array_equal(present, reference(1)[0])
    values = binding.get_outputs()
    assert [v.device_name() for v in values] == ["cpu", "cpu"]
    assert values[0].data_type() == "tensor(float)" and values[0].shape() == [1, 2, 1, 4]
    assert session.get_transfers() == {"host_to_device_bytes": 0, "device_to_host_bytes": 0}


def test_bad_bindings_raise(tmp_path):
    session = kiln.InferenceSession(cache_model(tmp_path / "cache.onnx"), providers=CPU)
    binding = session.io_binding()
    binding.bind_cpu_input("x", step_input(0))
    with pytest.raises(kiln.InvalidArgument, match="past"):
        session.run_with_iobinding(binding)
    binding.bind_cpu_input("past", np.zeros((1, 2, 0, 4), np.float32))
    binding.bind_output("nope")
    with pytest.raises(kiln.InvalidArgument, match="nope"):
        session.run_with_iobinding(binding)
    with pytest.raises(NotImplementedError):
        binding.bind_output("y", "cpu", buffer_ptr=1234)
    with pytest.raises(ValueError):
        kiln.OrtValue.ortvalue_from_numpy(step_input(0), "vulkan")
    other = kiln.InferenceSession(cache_model(tmp_path / "other.onnx"), providers=CPU)
    with pytest.raises(ValueError, match="another session"):
        other.run_with_iobinding(binding)


def test_bound_input_is_a_copy(tmp_path):
    session = kiln.InferenceSession(cache_model(tmp_path / "cache.onnx"), providers=CPU)
    binding = session.io_binding()
    x = step_input(0)
    binding.bind_cpu_input("past", np.zeros((1, 2, 0, 4), np.float32))
    binding.bind_ortvalue_input("x", kiln.OrtValue.ortvalue_from_numpy(x))
    x[:] = 100  # changing the array after binding does not reach the run
    binding.bind_output("y", "cpu")
    session.run_with_iobinding(binding)
    np.testing.assert_array_equal(binding.copy_outputs_to_cpu()[0], np.maximum(step_input(0), 0) + 1)


def test_vulkan_cache_stays_on_the_device(tmp_path):
    require_vulkan()
    steps = 5
    session = kiln.InferenceSession(cache_model(tmp_path / "cache.onnx"), providers=VULKAN)
    binding = session.io_binding()
    binding.bind_output("present", "vulkan")
    binding.bind_output("y", "cpu")
    binding.bind_cpu_input("past", np.zeros((1, 2, 0, 4), np.float32))
    expected = reference(steps)
    for s in range(steps):
        before = session.get_transfers()
        binding.bind_cpu_input("x", step_input(s))
        session.run_with_iobinding(binding)
        after = session.get_transfers()
        present, y = binding.get_outputs()
        assert present.device_name() == "vulkan" and y.device_name() == "cpu"
        assert present.location().startswith("VulkanExecutionProvider:")
        assert after["host_to_device_bytes"] - before["host_to_device_bytes"] == 32  # x only
        assert after["device_to_host_bytes"] - before["device_to_host_bytes"] == 32  # y only
        np.testing.assert_array_equal(present.numpy(), expected[s])
        binding.bind_ortvalue_input("past", present)
    # The session's own counters: Session::run copies the cache both ways.
    before = session.get_transfers()
    session.run(None, {"past": expected[-1], "x": step_input(steps)})
    after = session.get_transfers()
    assert after["device_to_host_bytes"] - before["device_to_host_bytes"] == expected[-1].nbytes + 32 + 32
