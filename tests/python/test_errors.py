"""Engine statuses raise the kiln.KilnError subclass named after onnxruntime's status name, carrying the code."""

import numpy as np
import pytest

import kiln
from conftest import CPU


def test_hierarchy_names_and_codes():
    expected = {"Fail": 1, "InvalidArgument": 2, "NoSuchFile": 3, "NoModel": 4, "EngineError": 5,
                "RuntimeException": 6, "InvalidProtobuf": 7, "ModelLoaded": 8, "NotImplemented": 9,
                "InvalidGraph": 10, "EPFail": 11, "Cancelled": 12, "ModelRequiresCompilation": 13}
    for name, code in expected.items():
        cls = getattr(kiln, name)
        assert issubclass(cls, kiln.KilnError) and cls.code == code
    assert issubclass(kiln.InvalidArgument, ValueError)
    assert issubclass(kiln.NoSuchFile, FileNotFoundError)


def test_missing_model_is_no_such_file(tmp_path):
    with pytest.raises(kiln.NoSuchFile) as error:
        kiln.InferenceSession(str(tmp_path / "missing.onnx"), providers=CPU)
    assert error.value.code == 3 and error.value.code_name == "NO_SUCHFILE"
    assert "missing.onnx" in str(error.value)


def test_garbage_bytes_are_not_a_model():
    with pytest.raises(kiln.KilnError) as error:
        kiln.InferenceSession(b"this is not an onnx model", providers=CPU)
    assert error.value.code_name in ("INVALID_PROTOBUF", "INVALID_GRAPH", "INVALID_ARGUMENT", "FAIL")


def test_bad_feeds_are_invalid_argument(models):
    session = kiln.InferenceSession(models["add_mul"], providers=CPU)
    a = np.ones((2, 3), np.float32)
    with pytest.raises(kiln.InvalidArgument):
        session.run(None, {"a": a})  # b missing
    with pytest.raises(kiln.InvalidArgument):
        session.run(None, {"a": a, "b": np.ones((2, 3), np.float64)})  # wrong element type
    with pytest.raises(kiln.InvalidArgument):
        session.run(["no_such_output"], {"a": a, "b": a})
    with pytest.raises(kiln.InvalidArgument, match="no input named 'zzz'"):
        session.run(None, {"a": a, "b": a, "zzz": a})
    with pytest.raises(kiln.InvalidArgument, match="expects shape"):
        session.run(None, {"a": a, "b": np.ones((3, 3), np.float32)})
    with pytest.raises(kiln.InvalidArgument):
        session.run(None, {"a": a, "b": np.ones((2, 3), np.complex64)})  # no ONNX tensor type Kiln runs


def test_unknown_kiln_key_is_invalid_argument():
    with pytest.raises(kiln.InvalidArgument) as error:
        kiln.SessionOptions().add_session_config_entry("kiln.vulkan.no_such_key", "1")
    assert error.value.code == 2


def test_bad_provider_option_is_invalid_argument(models):
    with pytest.raises(kiln.InvalidArgument):
        kiln.InferenceSession(models["add_mul"], providers=[("VulkanExecutionProvider", {"no_such_option": 1})])


def test_compiling_a_compiled_model_is_invalid_graph(models, tmp_path):
    pytest.importorskip("conftest").require_vulkan()
    ctx = tmp_path / "tiny_ctx.onnx"
    kiln.ModelCompiler(kiln.SessionOptions(), models["tiny_cnn"],
                       providers=["VulkanExecutionProvider"]).compile_to_file(str(ctx))
    with pytest.raises(kiln.InvalidGraph):
        kiln.ModelCompiler(kiln.SessionOptions(), str(ctx), providers=["VulkanExecutionProvider"]).compile_to_file(
            str(tmp_path / "again_ctx.onnx"))
