"""kiln.InferenceSession, SessionOptions and RunOptions: onnxruntime's API shape on the tiny models."""

import json
import os
import threading
import warnings

import numpy as np
import pytest

import kiln
from conftest import CPU


def test_available_providers_lists_both():
    assert kiln.get_available_providers() == ["VulkanExecutionProvider", "CPUExecutionProvider"]
    assert kiln.get_all_providers() == kiln.get_available_providers()
    assert kiln.get_device() in ("CPU", "GPU")
    assert kiln.__version__ == kiln.get_version_string()


def test_inputs_outputs_are_node_args_with_symbolic_dims(models):
    session = kiln.InferenceSession(models["add_mul"], providers=CPU)
    inputs, outputs = session.get_inputs(), session.get_outputs()
    assert [(i.name, i.type, i.shape) for i in inputs] == [("a", "tensor(float)", [2, "n"]),
                                                           ("b", "tensor(float)", [2, "n"])]
    assert [o.name for o in outputs] == ["sum", "product"]
    assert outputs[0].type == "tensor(float)"


def test_run_returns_every_output_or_the_ones_named(models):
    session = kiln.InferenceSession(models["add_mul"], providers=CPU)
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    b = np.full((2, 3), 2, dtype=np.float32)
    total, product = session.run(None, {"a": a, "b": b})
    np.testing.assert_array_equal(total, a + b)
    np.testing.assert_array_equal(product, a * b)
    (only,) = session.run(["product"], {"a": a, "b": b})
    np.testing.assert_array_equal(only, a * b)
    assert session.run([], {"a": a, "b": b})[0].shape == (2, 3)


def test_session_from_bytes_and_pathlike(models, tmp_path):
    data = open(models["add_mul"], "rb").read()
    for source in (data, bytearray(data), __import__("pathlib").Path(models["add_mul"])):
        session = kiln.InferenceSession(source, providers=CPU)
        assert [i.name for i in session.get_inputs()] == ["a", "b"]
    with pytest.raises(TypeError):
        kiln.InferenceSession(42)


def test_modelmeta(models):
    for source in (models["add_mul"], open(models["add_mul"], "rb").read()):
        meta = kiln.InferenceSession(source, providers=CPU).get_modelmeta()
        assert meta.producer_name == "kiln-tests"
        assert meta.custom_metadata_map == {"author": "kiln"}


def test_providers_and_session_options_are_reported(models):
    options = kiln.SessionOptions()
    options.intra_op_num_threads = 2
    session = kiln.InferenceSession(models["add_mul"], options, providers=[("CPUExecutionProvider", {})])
    assert session.get_providers() == ["CPUExecutionProvider"]
    assert session.get_session_options() is options
    assert all(p["execution_provider"] == "CPUExecutionProvider" for p in session.get_partitions())


def test_unknown_provider_warns_and_falls_back_to_cpu(models):
    with pytest.warns(RuntimeWarning, match="CUDAExecutionProvider"):
        session = kiln.InferenceSession(models["add_mul"], providers=["CUDAExecutionProvider"])
    assert session.get_providers() == ["CPUExecutionProvider"]


def test_config_entries():
    options = kiln.SessionOptions()
    options.add_session_config_entry("kiln.intra_op_num_threads", 1)
    assert options.get_session_config_entry("kiln.intra_op_num_threads") == "1"
    assert options.has_session_config_entry("kiln.intra_op_num_threads")
    with pytest.warns(RuntimeWarning, match="allow_spinning"):
        options.add_session_config_entry("session.intra_op.allow_spinning", "0")
    with pytest.raises(kiln.InvalidArgument):
        options.add_session_config_entry("kiln.no_such_key", "1")
    with pytest.raises(kiln.InvalidArgument):
        options.get_session_config_entry("session.unset")
    assert "kiln.execution_providers" in kiln.known_config_keys()


def test_graph_optimization_level_maps_onto_kiln_levels(models):
    options = kiln.SessionOptions()
    assert options.kiln_config()["kiln.graph_optimization_level"] == "all"
    options.graph_optimization_level = kiln.GraphOptimizationLevel.ORT_DISABLE_ALL
    assert options.kiln_config()["kiln.graph_optimization_level"] == "none"
    options.graph_optimization_level = kiln.GraphOptimizationLevel.ORT_ENABLE_BASIC
    assert options.kiln_config()["kiln.graph_optimization_level"] == "basic"
    session = kiln.InferenceSession(models["tiny_cnn"], options, providers=CPU)
    assert session.get_timings()["counters"]["optimizer_passes_run"] >= 0


def test_free_dimension_override_and_input_shape(models):
    options = kiln.SessionOptions()
    options.add_free_dimension_override_by_name("n", 4)
    session = kiln.InferenceSession(models["add_mul"], options, providers=CPU)
    assert session.get_inputs()[0].shape in ([2, 4], [2, "n"])
    bad = kiln.SessionOptions()
    bad.set_input_shape("a", [2, 3, 4])
    with pytest.raises(kiln.InvalidArgument):
        kiln.InferenceSession(models["add_mul"], bad, providers=CPU)


def test_timings_and_counters(models, tiny_input):
    session = kiln.InferenceSession(models["tiny_cnn"], providers=CPU)
    session.run(None, {"image": tiny_input})
    timings = session.get_timings()
    assert timings["timings"]["session_total_ms"] > 0
    assert set(timings["counters"]) >= {"glslang_compiles", "pipelines_created", "weights_prepacked"}


def test_run_profile_and_end_profiling(models, tiny_input, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    run_options = kiln.RunOptions()
    run_options.profiling = True
    session = kiln.InferenceSession(models["tiny_cnn"], providers=CPU)
    session.run(None, {"image": tiny_input}, run_options)
    profile = session.get_run_profile()
    assert profile["run_ms"] > 0 and profile["nodes"]
    assert {"node", "op_type", "execution_provider", "total_ms", "calls"} <= set(profile["nodes"][0])

    options = kiln.SessionOptions()
    options.enable_profiling = True
    options.profile_file_prefix = "tiny"
    profiled = kiln.InferenceSession(models["tiny_cnn"], options, providers=CPU)
    profiled.run(None, {"image": tiny_input})
    name = profiled.end_profiling()
    assert name.startswith("tiny_") and os.path.isfile(name)
    events = json.load(open(name))
    assert any(e["cat"] == "Node" for e in events) and any(e["cat"] == "Session" for e in events)
    assert session.end_profiling() == ""


def test_run_options_terminate_and_tag(models):
    session = kiln.InferenceSession(models["add_mul"], providers=CPU)
    feeds = {"a": np.ones((2, 2), np.float32), "b": np.ones((2, 2), np.float32)}
    run_options = kiln.RunOptions()
    run_options.logid = "tagged"
    assert run_options.tag == "tagged"
    run_options.terminate = True
    assert run_options.terminate
    with pytest.raises(kiln.Cancelled) as error:
        session.run(None, feeds, run_options)
    assert error.value.code == 12
    run_options.terminate = False
    assert session.run(["sum"], feeds, run_options)[0][0, 0] == 2
    with pytest.warns(RuntimeWarning):
        run_options.add_run_config_entry("memory.enable_memory_arena_shrinkage", "cpu:0")


def test_terminate_from_another_thread_stops_runs(models, tiny_input):
    session = kiln.InferenceSession(models["tiny_cnn"], providers=CPU)
    run_options = kiln.RunOptions()
    stopper = threading.Timer(0.2, lambda: setattr(run_options, "terminate", True))
    stopper.start()
    with pytest.raises(kiln.Cancelled):
        for _ in range(100000):  # ends when the flag is seen at a node boundary
            session.run(None, {"image": tiny_input}, run_options)
    stopper.join()
    run_options.terminate = False
    assert session.run(None, {"image": tiny_input}, run_options)[0].shape[0] == 1


def test_progress_callback_during_session_creation(models):
    events = []
    options = kiln.SessionOptions()
    options.progress = lambda stage, done, total: events.append((stage, done, total))
    kiln.InferenceSession(models["tiny_cnn"], options, providers=CPU)
    assert events and all(isinstance(stage, str) for stage, _, _ in events)


def test_session_options_warn_only_for_onnxruntime_keys():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        kiln.SessionOptions().add_session_config_entry("session.disable_cpu_ep_fallback", "0")


def test_type_stubs_cover_the_public_api():
    import ast
    import pathlib
    stub = ast.parse((pathlib.Path(kiln.__file__).parent / "__init__.pyi").read_text())
    declared = {node.name for node in stub.body if isinstance(node, (ast.ClassDef, ast.FunctionDef))}
    declared |= {t.id for node in stub.body if isinstance(node, ast.AnnAssign) for t in [node.target]}
    assert set(kiln.__all__) <= declared, set(kiln.__all__) - declared
    classes = {node.name: node for node in stub.body if isinstance(node, ast.ClassDef)}
    for name in ("InferenceSession", "SessionOptions", "ModelCompiler"):
        methods = {f.name for f in classes[name].body if isinstance(f, ast.FunctionDef)}
        public = {m for m in vars(getattr(kiln, name)) if not m.startswith("_") and callable(getattr(kiln, name).__dict__[m])}
        assert public <= methods, (name, public - methods)


def test_vulkan_named_explicitly_uses_a_cpu_vulkan_device_the_default_does_not(models, tiny_input):
    from conftest import VULKAN, require_vulkan
    require_vulkan()
    explicit = kiln.InferenceSession(models["tiny_cnn"], providers=VULKAN)
    assert explicit.get_providers()[0] == "VulkanExecutionProvider"
    default = kiln.InferenceSession(models["tiny_cnn"])
    if not any(device["used_by_default"] for device in kiln.devices()):  # lavapipe only: the default stays on the CPU
        assert default.get_providers() == ["CPUExecutionProvider"]
    np.testing.assert_allclose(explicit.run(None, {"image": tiny_input})[0],
                               default.run(None, {"image": tiny_input})[0], atol=1e-4)
