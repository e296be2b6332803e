"""PP-OCRv4 det against onnxruntime-node's reference outputs (tests/tools/fetch_models.sh fills the cache)."""

import pathlib
import sys

import numpy as np
import pytest

import kiln
from conftest import CPU, MODEL_CACHE, VULKAN, require_vulkan

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "support"))
from kiln_requirements import skip_or_fail_pytest  # noqa: E402

MODEL = MODEL_CACHE / "ch_PP-OCRv4_det_infer.onnx"
REFERENCES = MODEL_CACHE / "ref"


def reference_case(case="ppocr_det_crop"):
    """The feeds and onnxruntime-node's outputs of ref/<case> (ppocr_det: 640x640, ppocr_det_crop: 256x416)."""
    REFERENCE = REFERENCES / case
    if not MODEL.is_file() or not (REFERENCE / "inputs").is_dir():
        skip_or_fail_pytest("MODELS", f"{MODEL} or {REFERENCE} is missing (tests/tools/fetch_models.sh "
                                      "--with-references fetches them)")
    feeds = {p.stem: np.load(p) for p in (REFERENCE / "inputs").glob("*.npy")}
    expected = {p.stem: np.load(p) for p in (REFERENCE / "outputs").glob("*.npy")}
    return feeds, expected


@pytest.mark.parametrize("case,providers", [("ppocr_det", CPU), ("ppocr_det_crop", CPU), ("ppocr_det_crop", VULKAN)],
                         ids=["640-cpu", "crop-cpu", "crop-vulkan"])
def test_ppocr_det_matches_onnxruntime(case, providers):
    feeds, expected = reference_case(case)
    if providers is VULKAN:
        require_vulkan()
    session = kiln.InferenceSession(str(MODEL), providers=providers)
    outputs = session.run(None, feeds)
    for meta, result in zip(session.get_outputs(), outputs):
        reference = expected[meta.name]
        assert result.shape == reference.shape
        error = float(np.max(np.abs(result.astype(np.float64) - reference)))
        assert error < 1e-3, f"{meta.name}: max abs error {error}"


def test_ppocr_det_compiled_loads_without_shader_compiles(tmp_path):
    feeds, expected = reference_case()
    require_vulkan()
    ctx = pathlib.Path(tmp_path) / "ppocr_ctx.onnx"
    kiln.ModelCompiler(kiln.SessionOptions(), str(MODEL), providers=VULKAN).compile_to_file(str(ctx))
    session = kiln.InferenceSession(str(ctx), providers=VULKAN)
    assert session.get_timings()["counters"]["glslang_compiles"] == 0
    (result,) = session.run(None, feeds)
    assert float(np.max(np.abs(result - next(iter(expected.values()))))) < 1e-3
