"""kiln.ModelCompiler: compile_to_file / compile_to_bytes, the ctx model loading with no shader compile, progress,
cancel and Ctrl+C."""

import os
import subprocess
import sys
import textwrap
import threading

import numpy as np
import pytest

import kiln
from conftest import CPU, VULKAN, require_vulkan


@pytest.fixture(autouse=True)
def vulkan():
    require_vulkan()


def compiler(model, **kwargs):
    return kiln.ModelCompiler(kiln.SessionOptions(), model, providers=VULKAN, **kwargs)


def test_compile_to_file_then_load_without_shader_compiles(models, tiny_input, tmp_path):
    ctx = tmp_path / "tiny_ctx.onnx"
    result = compiler(models["tiny_cnn"]).compile_to_file(str(ctx))
    assert result["ep_context_nodes"] >= 1 and os.path.isfile(result["binary_path"])
    assert str(ctx) in result["files_written"]
    session = kiln.InferenceSession(str(ctx), providers=VULKAN)
    assert session.get_timings()["counters"]["glslang_compiles"] == 0
    assert "VulkanExecutionProvider" in session.get_providers()
    reference = kiln.InferenceSession(models["tiny_cnn"], providers=CPU).run(None, {"image": tiny_input})[0]
    np.testing.assert_allclose(session.run(None, {"image": tiny_input})[0], reference, atol=1e-4)


def test_compile_to_bytes_embedded(models, tiny_input):
    data = compiler(open(models["tiny_cnn"], "rb").read(), embed_compiled_data_into_model=True).compile_to_bytes()
    assert isinstance(data, bytes) and len(data) > 1000
    session = kiln.InferenceSession(data, providers=VULKAN)
    assert session.get_timings()["counters"]["glslang_compiles"] == 0
    assert session.run(None, {"image": tiny_input})[0].shape[0] == 1
    info = kiln.inspect(data)
    assert info["file_kind"] == "ctx_model" and info["nodes"][0]["embedded"]
    assert kiln.check(data)["compatibility"] in ("SUPPORTED_OPTIMAL", "SUPPORTED_PREFER_RECOMPILATION")
    chunks = []
    compiler(models["tiny_cnn"], embed_compiled_data_into_model=True).compile_to_stream(chunks.append)
    assert sum(len(c) for c in chunks) > 1000


def test_flags_and_default_output_name(models, tmp_path):
    source = tmp_path / "tiny.onnx"
    source.write_bytes(open(models["tiny_cnn"], "rb").read())
    result = compiler(str(source)).compile_to_file()
    assert result["output_model_path"].endswith("tiny_ctx.onnx")
    strict = compiler(str(source), flags=kiln.OrtCompileApiFlags.ERROR_IF_OUTPUT_FILE_EXISTS)
    with pytest.raises(kiln.Fail):
        strict.compile_to_file(result["output_model_path"])


def test_external_initializers_file(models, tiny_input, tmp_path):
    job = compiler(models["tiny_cnn"], external_initializers_file_path="weights.bin",
                   external_initializers_size_threshold=0)
    result = job.compile_to_file(str(tmp_path / "ext_ctx.onnx"))
    assert result["ep_context_nodes"] >= 1 and result["files_written"]
    session = kiln.InferenceSession(result["output_model_path"], providers=VULKAN)
    assert session.run(None, {"image": tiny_input})[0].shape[0] == 1
    with pytest.raises(kiln.NotImplemented):
        kiln.ModelCompiler(None, models["tiny_cnn"], get_initializer_location_func=lambda *a: None)


def test_progress_callback_cancel_and_errors(models, tmp_path):
    events = []
    compiler(models["tiny_cnn"], progress=lambda *event: events.append(event)).compile_to_file(str(tmp_path / "a.onnx"))
    assert events

    output = tmp_path / "cancelled_ctx.onnx"
    with pytest.raises(kiln.Cancelled):
        compiler(models["tiny_cnn"], progress=lambda *event: False).compile_to_file(str(output))
    assert not output.exists()

    def boom(*event):
        raise ZeroDivisionError("from the callback")
    with pytest.raises(ZeroDivisionError, match="from the callback"):
        compiler(models["tiny_cnn"], progress=boom).compile_to_file(str(output))
    assert not output.exists()

    cancellable = compiler(models["tiny_cnn"], progress=lambda *event: cancellable.cancel())
    with pytest.raises(kiln.Cancelled):
        cancellable.compile_to_file(str(output))
    assert not output.exists()


@pytest.mark.parametrize("work", ["compile", "session"])
def test_ctrl_c_cancels_cleanly(models, tmp_path, work):
    output = tmp_path / "interrupted_ctx.onnx"
    call = {"compile": f"kiln.ModelCompiler(options, {models['tiny_cnn']!r}, providers=vulkan)"
                       f".compile_to_file({str(output)!r})",
            "session": f"kiln.InferenceSession({models['tiny_cnn']!r}, options, providers=vulkan)"}[work]
    script = textwrap.dedent(f"""
        import os, signal, time, kiln
        def progress(stage, done, total):
            os.kill(os.getpid(), signal.SIGINT)
            time.sleep(0.3)  # the main thread notices the signal while the work still runs
        options = kiln.SessionOptions()
        options.progress = progress
        vulkan = ["VulkanExecutionProvider"]
        try:
            {call}
            print("finished")
        except KeyboardInterrupt:
            print("interrupted")
    """)
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120,
                            env=os.environ)
    assert result.stdout.strip() == "interrupted", result.stdout + result.stderr
    assert not output.exists()


def test_cancel_from_another_thread(models, tmp_path):
    started = threading.Event()
    job = compiler(models["tiny_cnn"], progress=lambda *event: (started.set(), __import__("time").sleep(0.05)))
    threading.Thread(target=lambda: (started.wait(30), job.cancel())).start()
    with pytest.raises(kiln.Cancelled):
        job.compile_to_file(str(tmp_path / "t_ctx.onnx"))


def test_target_profile_cross_compile(models, tmp_path):
    profile = tmp_path / "device.json"
    profile.write_text(__import__("json").dumps(kiln.device_profile(0)))
    result = compiler(models["tiny_cnn"], target_profile=str(profile)).compile_to_file(str(tmp_path / "p_ctx.onnx"))
    assert kiln.inspect(result["binary_path"])["target"] == "profile"
    verdict = kiln.check(result["binary_path"], profile=str(profile))
    assert verdict["file_kind"] == "context_binary" and verdict["verdict"] in ("optimal", "compatible")
