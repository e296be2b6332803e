"""The Python API returns exactly what the C++ API returns: `kiln run --output-dir` on the same inputs."""

import os
import subprocess

import numpy as np
import pytest

import kiln
from conftest import CPU, VULKAN, require_vulkan


@pytest.mark.parametrize("ep", ["cpu", "vulkan"])
def test_outputs_equal_kiln_run(models, tiny_input, tmp_path, ep):
    cli = os.environ.get("KILN_CLI")
    if not cli:
        pytest.skip("KILN_CLI is not set (ctest sets it)")
    if ep == "vulkan":
        require_vulkan()
    np.save(tmp_path / "image.npy", tiny_input)
    out = tmp_path / "out"
    subprocess.run([cli, "run", models["tiny_cnn"], "--ep", ep, "--input", f"image={tmp_path / 'image.npy'}",
                    "--output-dir", str(out)], check=True, capture_output=True)
    session = kiln.InferenceSession(models["tiny_cnn"], providers=CPU if ep == "cpu" else VULKAN)
    for meta, result in zip(session.get_outputs(), session.run(None, {"image": tiny_input})):
        expected = np.load(out / f"{meta.name}.npy")
        assert result.dtype == expected.dtype
        np.testing.assert_array_equal(result, expected)
