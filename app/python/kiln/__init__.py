"""Kiln from Python, with onnxruntime's API shape: ``import kiln as ort`` runs scripts that use the shared subset.

    import kiln
    session = kiln.InferenceSession("model.onnx", providers=["VulkanExecutionProvider", "CPUExecutionProvider"])
    outputs = session.run(None, {"x": array})

Kiln's own: kiln.ModelCompiler extras, kiln.inspect / check / merge / devices, model packages (kiln.package_model,
kiln.choose_package_variant; InferenceSession opens a package folder), InferenceSession.get_timings().
"""

from . import _kiln
from ._compiler import ModelCompiler, OrtCompileApiFlags
from ._errors import (Cancelled, EngineError, EPFail, Fail, InvalidArgument, InvalidGraph, InvalidProtobuf,
                      KilnError, ModelLoaded, ModelRequiresCompilation, NoModel, NoSuchFile, NotImplemented,
                      RuntimeException)
from ._io_binding import IOBinding, OrtValue
from ._options import (CPU_PROVIDER, VULKAN_PROVIDER, ExecutionMode, GraphOptimizationLevel, RunOptions,
                       SessionOptions, known_config_keys)
from ._session import InferenceSession, ModelMetadata, NodeArg
from ._tools import (check, choose_package_variant, compare, device_profile, devices, get_compatibility_info_from_model,
                     inspect, merge, package_model, read_package)

__version__ = _kiln.engine_version()


def get_available_providers():
    """The execution providers Kiln has, in its default preference order."""
    return [VULKAN_PROVIDER, CPU_PROVIDER]


def get_all_providers():
    """Every provider Kiln knows: the same as get_available_providers()."""
    return get_available_providers()


def get_device():
    """onnxruntime prints "CPU" or "GPU"; Kiln says "GPU" when a Vulkan GPU would be used by default."""
    try:
        return "GPU" if any(d["used_by_default"] for d in devices()) else "CPU"
    except KilnError:
        return "CPU"


def get_version_string():
    """Kiln's engine version ("0.1.0")."""
    return __version__


def set_default_logger_severity(severity):
    """The engine's log level, process-wide, in onnxruntime's severities (0 verbose ... 3 error, 4 fatal/off)."""
    _kiln.set_log_severity(int(severity))


def set_default_logger_verbosity(verbosity):
    """Kept for onnxruntime scripts: Kiln has no verbose-log levels beyond set_default_logger_severity."""


__all__ = ["InferenceSession", "IOBinding", "OrtValue", "SessionOptions", "RunOptions", "ModelCompiler", "OrtCompileApiFlags",
           "GraphOptimizationLevel", "ExecutionMode", "NodeArg", "ModelMetadata", "get_available_providers",
           "get_all_providers", "get_device", "get_version_string", "set_default_logger_severity", "set_default_logger_verbosity", "inspect", "check", "compare", "merge", "devices",
           "device_profile", "get_compatibility_info_from_model", "known_config_keys", "KilnError", "Fail", "InvalidArgument", "NoSuchFile", "NoModel",
           "EngineError", "RuntimeException", "InvalidProtobuf", "ModelLoaded", "NotImplemented", "InvalidGraph",
           "EPFail", "Cancelled", "ModelRequiresCompilation"]
