"""kiln.inspect / kiln.check / kiln.merge / kiln.devices: plain Python data."""

import numpy as np
import pytest

import kiln
from conftest import VULKAN, require_vulkan


def test_inspect_plain_model(models):
    info = kiln.inspect(models["tiny_cnn"])
    assert info["kind"] == "model" and info["producer_name"] == "kiln-tests"
    assert info["inputs"][0]["name"] == "image" and info["inputs"][0]["shape"][0] == "batch"
    assert info["nodes"] and {"name", "op_type", "attributes"} <= set(info["nodes"][0])
    with pytest.raises(kiln.NoSuchFile):
        kiln.inspect("/no/such/model.onnx")


def test_check_plain_model_is_not_compiled(models):
    assert kiln.check(models["tiny_cnn"])["compatibility"] == "not_compiled"


def test_devices_and_profile():
    require_vulkan()
    devices = kiln.devices()
    assert {"index", "name", "type", "used_by_default"} <= set(devices[0])
    assert isinstance(kiln.device_profile(devices[0]["index"]), dict)


def test_inspect_check_and_merge_ctx_models(models, tmp_path):
    require_vulkan()
    ctx = {}
    for name in ("first", "second"):
        ctx[name] = str(tmp_path / f"{name}_ctx.onnx")
        kiln.ModelCompiler(kiln.SessionOptions(), models["tiny_cnn"], providers=VULKAN,
                           node_name_prefix=f"{name}_").compile_to_file(ctx[name])
    info = kiln.inspect(ctx["first"])
    assert info["kind"] == "ctx_model" and info["nodes"][0]["vulkan"] and info["binaries"]
    binary = next(iter(info["binaries"]))
    assert kiln.inspect(binary)["kind"] == "binary"
    verdict = kiln.check(ctx["first"])
    assert verdict["compatibility"] in ("optimal", "compatible") and binary in verdict["binaries"]
    merged = kiln.merge([(ctx["first"], "a_"), (ctx["second"], "b_")], str(tmp_path / "merged_ctx.onnx"))
    assert merged["ep_context_nodes"] >= 2
    session = kiln.InferenceSession(merged["output_model_path"], providers=VULKAN)
    feeds = {i.name: np.zeros((1, 3, 32, 32), np.float32) for i in session.get_inputs()}
    assert len(session.run(None, feeds)) == 2
    with pytest.raises(kiln.InvalidArgument):
        kiln.merge([ctx["first"], ctx["first"]], str(tmp_path / "conflict_ctx.onnx"))
