"""Model packages from Python: kiln.package_model, kiln.read_package, kiln.choose_package_variant, and
InferenceSession on a package folder choosing the variant for this device, bit for bit as that variant's ctx model."""

import json
import os

import numpy as np
import pytest

import kiln
from conftest import SOURCE_DIR, VULKAN, require_vulkan

PROFILES = [SOURCE_DIR / "resources" / "profiles" / "lavapipe.json",
            SOURCE_DIR / "resources" / "profiles" / "vulkan11_minimal.json"]


@pytest.fixture(autouse=True)
def vulkan():
    require_vulkan()


@pytest.fixture
def package(models, tmp_path):
    return kiln.package_model(models["tiny_cnn"], tmp_path / "tiny.kilnpkg", profiles=PROFILES, variants=("fp32", "fp16"))


def test_package_layout_follows_onnxruntime_and_reads_back(package):
    names = [v["name"] for v in package["variants"]]
    assert names == ["lavapipe-fp32", "lavapipe-fp16", "vulkan11_minimal-fp32", "vulkan11_minimal-fp16"]
    with open(os.path.join(package["path"], "manifest.json")) as f:
        manifest = json.load(f)
    assert manifest["schema_version"] == 1 and manifest["components"] == ["tiny_cnn"]
    assert all(f["digest"].startswith("sha256:") for v in package["variants"] for f in v["files"])
    read = kiln.read_package(package["path"])
    assert [v["compile_identity"] for v in read["variants"]] == [v["compile_identity"] for v in package["variants"]]


def test_session_on_a_package_runs_the_chosen_variant(package, tiny_input):
    for fp16, expected in (("0", "lavapipe-fp32"), ("1", "lavapipe-fp16")):
        choice = kiln.choose_package_variant(package["path"], {"kiln.vulkan.fp16": fp16})
        assert choice["variant"] == expected, choice["summary"]
        options = kiln.SessionOptions()
        options.add_session_config_entry("kiln.vulkan.fp16", fp16)
        via_package = kiln.InferenceSession(package["path"], options, providers=VULKAN)
        direct = kiln.InferenceSession(choice["model"], options, providers=VULKAN)
        got = via_package.run(None, {"image": tiny_input})[0]
        want = direct.run(None, {"image": tiny_input})[0]
        assert np.array_equal(got, want)


def test_a_tampered_variant_is_not_loaded(package):
    chosen = package["variants"][0]
    binary = next(f for f in chosen["files"] if f["path"].endswith(".bin"))
    path = os.path.join(package["path"], binary["path"])
    with open(path, "r+b") as f:
        f.seek(binary["size"] // 2)
        byte = f.read(1)
        f.seek(binary["size"] // 2)
        f.write(bytes([byte[0] ^ 0xFF]))
    choice = kiln.choose_package_variant(package["path"])
    assert choice["variant"] != chosen["name"]
    judged = choice["judged"][0]
    assert judged["compatibility"] == "UNSUPPORTED" and "does not match its digest" in judged["reasons"][0]


def test_bad_arguments_raise(models, tmp_path):
    with pytest.raises(kiln.InvalidArgument):
        kiln.package_model(models["tiny_cnn"], tmp_path / "x.kilnpkg", variants=("int3",))
    with pytest.raises(kiln.NoSuchFile):
        kiln.read_package(tmp_path)
