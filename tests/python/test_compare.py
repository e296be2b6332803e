"""kiln.compare (kiln/compare.h): Vulkan against CPU within tolerance, bisect naming a node whose inputs agree and
outputs do not at zero tolerance, another model as the reference failing, and bad input raising."""

import numpy as np
import onnx
import pytest
from onnx import numpy_helper

import kiln
from conftest import VULKAN, require_vulkan


def image():
    return {"image": np.random.default_rng(7).random((1, 3, 32, 32), dtype=np.float32)}


def test_vulkan_against_cpu_passes_at_the_default_tolerance(models):
    require_vulkan()
    result = kiln.compare(models["tiny_cnn"], image(), providers=VULKAN)
    assert result["passed"] is True and result["first_divergence"] is None
    out = result["outputs"][0]
    assert out["name"] == "probabilities" and out["shape"] == [1, 10] and out["elements"] == 10
    assert out["max_abs_error"] < 1e-4 and out["cosine_similarity"] > 0.9999
    assert {"max_rel_error", "mean_abs_error", "fraction_beyond_tolerance", "worst", "nan_mismatches",
            "inf_mismatches", "shape_mismatch", "dtype_mismatch"} <= set(out)
    assert len(out["abs_error_histogram"]) == 14 and sum(out["abs_error_histogram"]) == 10


def test_bisect_at_zero_tolerance_names_a_node_whose_inputs_agree(models):
    require_vulkan()
    result = kiln.compare(models["tiny_cnn"], image(), providers=VULKAN, atol=0, rtol=0, bisect=True)
    divergence = result["first_divergence"]
    if result["passed"]:
        assert divergence is None  # Vulkan and CPU may agree bit for bit on this small model
        return
    assert divergence is not None and divergence["node"]
    assert all(i["passed"] for i in divergence["inputs"])
    assert not all(o["passed"] for o in divergence["outputs"])
    names = {n.name or n.output[0] for n in onnx.load(models["tiny_cnn"]).graph.node}
    assert divergence["node"] in names


def test_another_model_as_reference_fails_and_bisect_finds_the_changed_node(models, tmp_path):
    model = onnx.load(models["tiny_cnn"])
    consumer = {i: n for n in model.graph.node for i in n.input}
    init = model.graph.initializer[0]
    array = numpy_helper.to_array(init).copy()
    array.flat[:] += 0.5
    init.CopyFrom(numpy_helper.from_array(array, init.name))
    changed = tmp_path / "changed.onnx"
    onnx.save(model, changed)
    result = kiln.compare(models["tiny_cnn"], image(), providers=["CPUExecutionProvider"], reference_model=changed,
                          bisect=True)
    assert result["passed"] is False
    expected = consumer[init.name]
    assert result["first_divergence"]["node"] == (expected.name or expected.output[0])


def test_bad_input_raises(models):
    with pytest.raises(kiln.KilnError):
        kiln.compare(models["tiny_cnn"], {"nope": np.zeros((1,), np.float32)})
    with pytest.raises(kiln.KilnError):
        kiln.compare("/no/such/model.onnx", image())


def test_max_fraction_beyond_lets_that_fraction_of_elements_fail(models, tmp_path):
    # y = x + offsets, the reference adds 0 everywhere: exactly 1 of the 1000 elements is off by 1.
    def offset_model(path, offsets):
        x = onnx.helper.make_tensor_value_info("x", onnx.TensorProto.FLOAT, [1000])
        y = onnx.helper.make_tensor_value_info("y", onnx.TensorProto.FLOAT, [1000])
        add = onnx.helper.make_node("Add", ["x", "offsets"], ["y"])
        graph = onnx.helper.make_graph([add], "offsets", [x], [y], [numpy_helper.from_array(offsets, "offsets")])
        onnx.save(onnx.helper.make_model(graph, opset_imports=[onnx.helper.make_opsetid("", 17)]), path)

    offsets = np.zeros(1000, np.float32)
    offset_model(tmp_path / "ref.onnx", offsets)
    offsets[123] = 1
    offset_model(tmp_path / "side.onnx", offsets)
    feed = {"x": np.zeros(1000, np.float32)}
    cpu = ["CPUExecutionProvider"]
    strict = kiln.compare(tmp_path / "side.onnx", feed, providers=cpu, reference_model=tmp_path / "ref.onnx")
    assert strict["passed"] is False and strict["outputs"][0]["allowed_beyond"] == 0
    loose = kiln.compare(tmp_path / "side.onnx", feed, providers=cpu, reference_model=tmp_path / "ref.onnx",
                         max_fraction_beyond=0.001)
    assert loose["passed"] is True
    assert loose["outputs"][0]["beyond_tolerance"] == 1 and loose["outputs"][0]["allowed_beyond"] == 1
    for bad in (-0.1, 1.0, float("nan")):
        with pytest.raises(kiln.KilnError):
            kiln.compare(tmp_path / "side.onnx", feed, providers=cpu, reference_model=tmp_path / "ref.onnx",
                         max_fraction_beyond=bad)
