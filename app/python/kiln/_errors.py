"""Kiln's errors as exceptions named after onnxruntime's status names (onnxruntime.capi...pybind11_state).

Every engine failure raises a subclass of KilnError carrying the engine's status code (``code``, the number of
kiln::StatusCode, which follows OrtErrorCode) and its name (``code_name``, e.g. "INVALID_ARGUMENT").
"""


class KilnError(RuntimeError):
    """Base of every error the Kiln engine reports."""

    code = 1
    code_name = "FAIL"

    def __init__(self, message="", code=None, code_name=None):
        super().__init__(message)
        if code is not None:
            self.code = code
        if code_name is not None:
            self.code_name = code_name


class Fail(KilnError):
    code, code_name = 1, "FAIL"


class InvalidArgument(KilnError, ValueError):
    code, code_name = 2, "INVALID_ARGUMENT"


class NoSuchFile(KilnError, FileNotFoundError):
    code, code_name = 3, "NO_SUCHFILE"


class NoModel(KilnError):
    code, code_name = 4, "NO_MODEL"


class EngineError(KilnError):
    code, code_name = 5, "ENGINE_ERROR"


class RuntimeException(KilnError):
    code, code_name = 6, "RUNTIME_EXCEPTION"


class InvalidProtobuf(KilnError):
    code, code_name = 7, "INVALID_PROTOBUF"


class ModelLoaded(KilnError):
    code, code_name = 8, "MODEL_LOADED"


class NotImplemented(KilnError, NotImplementedError):  # noqa: A001 (onnxruntime's name)
    code, code_name = 9, "NOT_IMPLEMENTED"


class InvalidGraph(KilnError):
    code, code_name = 10, "INVALID_GRAPH"


class EPFail(KilnError):
    code, code_name = 11, "EP_FAIL"


class Cancelled(KilnError):
    code, code_name = 12, "CANCELLED"


class ModelRequiresCompilation(KilnError):
    code, code_name = 13, "MODEL_REQUIRES_COMPILATION"


ERROR_CLASSES = {cls.code: cls for cls in (Fail, InvalidArgument, NoSuchFile, NoModel, EngineError,
                                           RuntimeException, InvalidProtobuf, ModelLoaded, NotImplemented,
                                           InvalidGraph, EPFail, Cancelled, ModelRequiresCompilation)}

for _cls in (KilnError, *ERROR_CLASSES.values()):
    _cls.__module__ = "kiln"  # shown as kiln.InvalidArgument in tracebacks


def error_for(code, code_name, message):
    """The exception instance for an engine status (called by the _kiln extension)."""
    cls = ERROR_CLASSES.get(code, KilnError)
    error = cls(message, code, code_name)
    if cls is NoSuchFile:
        error.strerror = message  # FileNotFoundError's str() would otherwise ignore the message
    return error
