"""kiln.inspect / kiln.check / kiln.merge / kiln.devices: plain Python data."""

import numpy as np
import pytest

import kiln
from conftest import VULKAN, require_vulkan


def test_inspect_plain_model(models):
    info = kiln.inspect(models["tiny_cnn"])
    assert info["file_kind"] == "model" and info["producer_name"] == "kiln-tests"
    assert info["inputs"][0]["name"] == "image" and info["inputs"][0]["shape"][0] == "batch"
    assert info["nodes"] and {"name", "op_type", "attributes"} <= set(info["nodes"][0])
    from_bytes = kiln.inspect(open(models["tiny_cnn"], "rb").read())
    assert from_bytes["file_kind"] == "model" and len(from_bytes["nodes"]) == len(info["nodes"])
    with pytest.raises(kiln.NoSuchFile):
        kiln.inspect("/no/such/model.onnx")
    with pytest.raises(kiln.KilnError):
        kiln.inspect(b"not a model")


def test_check_plain_model_is_not_applicable(models):
    result = kiln.check(models["tiny_cnn"])
    assert result["compatibility"] == "NOT_APPLICABLE" and result["verdict"] is None and result["file_kind"] == "model"
    assert kiln.get_compatibility_info_from_model(models["tiny_cnn"]) == ""
    with pytest.raises(kiln.KilnError):
        kiln.check(b"not a model")


def test_check_reports_a_stale_ctx_model(models, tmp_path):
    require_vulkan()
    source = tmp_path / "model.onnx"
    source.write_bytes(open(models["add_mul"], "rb").read())
    ctx = str(tmp_path / "model_ctx.onnx")
    kiln.ModelCompiler(kiln.SessionOptions(), str(source), providers=VULKAN).compile_to_file(ctx)
    changed = tmp_path / "changed.onnx"
    changed.write_bytes(open(models["tiny_cnn"], "rb").read())
    result = kiln.check(ctx, source=str(changed))
    assert result["compatibility"] == "UNSUPPORTED"
    assert any("stale" in reason for reason in result["reasons"]), result["reasons"]


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
    assert info["file_kind"] == "ctx_model" and info["nodes"][0]["vulkan"] and info["binaries"]
    binary = next(iter(info["binaries"]))
    described = kiln.inspect(binary)
    assert described["file_kind"] == "context_binary"
    # kiln inspect --json's spirv.pipelines: every pipeline with the nodes that use it (format 1.2).
    assert described["pipeline_users_recorded"]
    assert len(described["spirv_pipelines"]) == len(described["spirv_modules"])
    assert all(p["nodes"] and p["bytes"] > 0 for p in described["spirv_pipelines"])
    # Every field kiln inspect --json gives a graph (app/common/engine_json.cpp), tuning and prepacked constants too.
    graph = described["graphs"][0]
    assert {"tuning", "tuning_note", "prepacked_constants", "value_types"} <= graph.keys()
    assert graph["prepacked_constants"] > 0 and graph["tuning"] == [] and graph["value_types"]
    verdict = kiln.check(ctx["first"])
    assert verdict["compatibility"] in ("SUPPORTED_OPTIMAL", "SUPPORTED_PREFER_RECOMPILATION")
    assert verdict["file_kind"] == "ctx_model" and isinstance(verdict["compile_record"], dict)
    assert kiln.get_compatibility_info_from_model(ctx["first"])
    assert kiln.check(binary)["file_kind"] == "context_binary"
    merged = kiln.merge([(ctx["first"], "a_"), (ctx["second"], "b_")], str(tmp_path / "merged_ctx.onnx"))
    assert merged["ep_context_nodes"] >= 2
    session = kiln.InferenceSession(merged["output_model_path"], providers=VULKAN)
    feeds = {i.name: np.zeros((1, 3, 32, 32), np.float32) for i in session.get_inputs()}
    assert len(session.run(None, feeds)) == 2
    with pytest.raises(kiln.InvalidArgument):
        kiln.merge([ctx["first"], ctx["first"]], str(tmp_path / "conflict_ctx.onnx"))
