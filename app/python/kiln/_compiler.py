"""ModelCompiler with onnxruntime's API shape (onnxruntime.ModelCompiler), plus Kiln's target profile, progress
callback and cancel. Ctrl+C during a compile cancels it cleanly (nothing is written) and raises KeyboardInterrupt."""

import enum
import os

from . import _kiln
from ._options import KILN_OPTIMIZATION_LEVELS, SessionOptions, providers_to_config
from ._session import _model_source


class OrtCompileApiFlags(enum.IntFlag):
    NONE = 0
    ERROR_IF_NO_NODES_COMPILED = 1
    ERROR_IF_OUTPUT_FILE_EXISTS = 2


class ModelCompiler:
    """Compiles a model into an EPContext model (<stem>_ctx.onnx + <stem>_vulkan.bin, or one embedded file).

    Kiln's extras (keyword-only): providers/provider_options as InferenceSession takes them, target_profile (a
    device profile JSON to cross-compile for), progress (called as progress(stage, done, total); returning False
    cancels), node_name_prefix. cancel() stops a compile running on another thread (kiln.Cancelled).
    """

    def __init__(self, sess_options, input_model_path_or_bytes, embed_compiled_data_into_model=False,
                 external_initializers_file_path=None, external_initializers_size_threshold=1024,
                 flags=OrtCompileApiFlags.NONE, graph_optimization_level=None, get_initializer_location_func=None,
                 *, providers=None, provider_options=None, target_profile=None, progress=None,
                 node_name_prefix=None):
        if get_initializer_location_func is not None:
            from ._errors import NotImplemented as KilnNotImplemented
            raise KilnNotImplemented("get_initializer_location_func is not supported by kiln.ModelCompiler")
        options = sess_options if sess_options is not None else SessionOptions()
        self._model = _model_source(input_model_path_or_bytes)
        if providers is None and options.providers():
            providers = options.providers()
        args = _kiln.CompileArgs()
        config = options.kiln_config()
        config.update(providers_to_config(providers, provider_options))
        args.config = config
        args.input_shapes = options.input_shapes()
        args.embed = bool(embed_compiled_data_into_model)
        if external_initializers_file_path:
            args.external_initializers_file = os.fspath(external_initializers_file_path)
            args.external_initializers_threshold = int(external_initializers_size_threshold)
        args.flags = int(flags)
        if graph_optimization_level is not None:
            args.optimization_level = KILN_OPTIMIZATION_LEVELS.get(int(graph_optimization_level), "all")
        if target_profile:
            args.target_profile = os.fspath(target_profile)
        if node_name_prefix:
            args.node_name_prefix = node_name_prefix
        self._args = args
        self._progress = progress if progress is not None else options.progress
        self._token = _kiln.CancellationToken()
        self.last_result = None

    def compile_to_file(self, output_model_path=None):
        """Writes the compiled model (default: <input stem>_ctx.onnx beside a path input) and its binary.
        Returns what was written: {"output_model_path", "binary_path", "ep_context_nodes", "files_written",
        "timings", "counters"}."""
        if output_model_path is None and not isinstance(self._model, str):
            from ._errors import InvalidArgument
            raise InvalidArgument("compile_to_file needs output_model_path when the input model is bytes")
        output = os.fspath(output_model_path) if output_model_path is not None else ""
        self.last_result, _ = self._compile(output)
        return self.last_result

    def compile_to_bytes(self):
        """The compiled model as bytes. With embed_compiled_data_into_model=True they hold everything; otherwise
        the context binary is written beside a path input (<stem>_vulkan.bin), as onnxruntime's compile API does."""
        self.last_result, data = self._compile(None)
        return data

    def compile_to_stream(self, write_function):
        """Passes the compiled model to write_function(bytes) in chunks."""
        data = self.compile_to_bytes()
        chunk = 1 << 20
        for offset in range(0, len(data), chunk):
            write_function(data[offset:offset + chunk])

    def cancel(self):
        """Cancels the compile running now (from another thread, or a progress callback)."""
        self._token.cancel()

    def _compile(self, output):
        self._token.reset()
        return _kiln.compile(self._model, output, self._args, self._progress, self._token)
