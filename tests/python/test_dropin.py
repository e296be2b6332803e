"""An unchanged onnxruntime script (dropin/ort_script.py: `import onnxruntime as ort`) runs on kiln."""

import pathlib
import subprocess
import sys

SCRIPT = pathlib.Path(__file__).parent / "dropin" / "ort_script.py"


def test_onnxruntime_script_runs_unchanged_on_kiln(models, tmp_path):
    # `onnxruntime` resolves to kiln: a module of that name that is kiln itself, first on the path.
    shim = tmp_path / "shim"
    shim.mkdir()
    (shim / "onnxruntime.py").write_text("import sys, kiln\nsys.modules['onnxruntime'] = kiln\n")
    env = dict(__import__("os").environ)
    env["PYTHONPATH"] = f"{shim}:{env.get('PYTHONPATH', '')}"
    result = subprocess.run([sys.executable, str(SCRIPT), models["tiny_cnn"]], capture_output=True, text=True,
                            env=env, timeout=120)
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout.strip().endswith("OK")
    assert "bad feed: InvalidArgument" in result.stdout
