"""InferenceSession with onnxruntime's API shape, on the _kiln extension (Session::create / runValues)."""

import json
import os
import time
from dataclasses import dataclass, field

from . import _kiln
from ._options import CPU_PROVIDER, PROVIDER_SHORT_NAMES, SessionOptions, providers_to_config

# ONNX TensorProto.DataType -> onnxruntime's element spelling in type strings ("tensor(float)").
ONNX_TYPE_NAMES = {1: "float", 2: "uint8", 3: "int8", 4: "uint16", 5: "int16", 6: "int32", 7: "int64", 8: "string",
                   9: "bool", 10: "float16", 11: "double", 12: "uint32", 13: "uint64", 14: "complex64",
                   15: "complex128", 16: "bfloat16"}


def type_string(meta):
    """onnxruntime's type string: tensor(float), seq(tensor(int64)), optional(tensor(float))."""
    tensor = f"tensor({ONNX_TYPE_NAMES.get(meta['dtype'], 'undefined')})"
    return {"sequence": f"seq({tensor})", "optional": f"optional({tensor})"}.get(meta["kind"], tensor)


@dataclass(frozen=True)
class NodeArg:
    """A graph input or output as onnxruntime's NodeArg: name, type string, shape (str for symbolic dims)."""

    name: str
    type: str
    shape: list


@dataclass(frozen=True)
class ModelMetadata:
    """onnxruntime's ModelMetadata (fields the engine's public API does not report are empty)."""

    producer_name: str = ""
    graph_name: str = ""
    domain: str = ""
    description: str = ""
    graph_description: str = ""
    version: int = 0
    custom_metadata_map: dict = field(default_factory=dict)


def _model_source(path_or_bytes):
    if isinstance(path_or_bytes, (bytes, bytearray, memoryview)):
        return bytes(path_or_bytes)
    if isinstance(path_or_bytes, (str, os.PathLike)):
        return os.fspath(path_or_bytes)
    raise TypeError(f"path_or_bytes must be a path or bytes, not {type(path_or_bytes).__name__}")


class InferenceSession:
    """onnxruntime.InferenceSession on Kiln: loads, partitions and compiles the model, then runs it.

    providers: names or (name, options) tuples; naming VulkanExecutionProvider asks for Vulkan explicitly (a CPU
    Vulkan device such as lavapipe counts). None keeps Kiln's default (a Vulkan GPU if present, then the CPU).
    """

    def __init__(self, path_or_bytes, sess_options=None, providers=None, provider_options=None, **kwargs):
        self._model = _model_source(path_or_bytes)
        self._sess_options = sess_options if sess_options is not None else SessionOptions()
        self._profiles = []
        self._profiling_start_ns = time.time_ns()
        self._create(providers, provider_options)

    def _create(self, providers, provider_options):
        if providers is None and self._sess_options.providers():
            providers = self._sess_options.providers()
        config = self._sess_options.kiln_config()
        config.update(providers_to_config(providers, provider_options))
        self._native = _kiln.Session.create(self._model, config, self._sess_options.input_shapes(),
                                            self._sess_options.progress)
        self._config = config

    def set_providers(self, providers=None, provider_options=None):
        """Creates the session again with other providers (as onnxruntime does)."""
        self._create(providers, provider_options)

    def get_inputs(self):
        """The graph inputs a run feeds (initializers excluded), as NodeArgs in declaration order."""
        return [self._node_arg(meta) for meta in self._native.inputs()]

    def get_outputs(self):
        """The graph outputs, as NodeArgs in declaration order."""
        return [self._node_arg(meta) for meta in self._native.outputs()]

    def get_overridable_initializers(self):
        """Kiln does not override initializers at run time: always empty."""
        return []

    def get_modelmeta(self):
        """The model's producer and metadata_props (custom_metadata_map)."""
        from ._tools import describe_model
        ctx = _kiln.inspect_ctx_model(self._model)
        producer = describe_model(self._model)["producer_name"]
        return ModelMetadata(producer_name=producer, custom_metadata_map=dict(ctx["metadata"]))

    def get_providers(self):
        """The providers this session uses, in preference order (the CPU one always, as onnxruntime lists it)."""
        used = {p["execution_provider"] for p in self._native.partitions()}
        order = self._config.get("kiln.execution_providers", "vulkan,cpu").split(",")
        by_short = {short: name for name, short in PROVIDER_SHORT_NAMES.items()}
        names = [by_short[s] for s in order if s in by_short and (by_short[s] in used or by_short[s] == CPU_PROVIDER)]
        return names if CPU_PROVIDER in names else names + [CPU_PROVIDER]

    def get_provider_options(self):
        """Per provider, the kiln.<provider>.* entries the session was created with."""
        return {name: {k: v for k, v in self._config.items() if k.startswith(f"kiln.{PROVIDER_SHORT_NAMES[name]}.")}
                for name in self.get_providers()}

    def get_session_options(self):
        """The SessionOptions the session was created with."""
        return self._sess_options

    def run(self, output_names, input_feed, run_options=None):
        """Runs one inference: a list of NumPy arrays, one per name in output_names (None or []: every output)."""
        native = run_options._native if run_options is not None else None
        if self._sess_options.enable_profiling and not (native is not None and native.profiling):
            native = native.copy() if native is not None else _kiln.RunOptions()  # a copy shares the terminate flag
            native.profiling = True
        outputs = self._native.run(dict(input_feed), list(output_names or []), native)
        if native is not None and native.profiling:
            self._profiles.append(self._native.last_run_profile())
        return outputs

    def io_binding(self):
        """An IOBinding for run_with_iobinding (values that stay on the device between runs)."""
        from ._io_binding import IOBinding
        return IOBinding(self)

    def run_with_iobinding(self, iobinding, run_options=None):
        """Runs one inference on the binding's inputs; its outputs are then in iobinding.get_outputs()."""
        if iobinding._session is not self:
            raise ValueError("run_with_iobinding: the IOBinding was made by another session")
        native = run_options._native if run_options is not None else None
        self._native.run_with_binding(iobinding._native, native)

    def end_profiling(self):
        """Writes the node profiles of the runs since creation (chrome trace JSON, as onnxruntime) and returns
        the file name; "" when enable_profiling was off."""
        if not self._sess_options.enable_profiling:
            return ""
        name = f"{self._sess_options.profile_file_prefix}_{time.strftime('%Y-%m-%d_%H-%M-%S')}.json"
        with open(name, "w", encoding="utf-8") as out:
            json.dump(_chrome_trace(self.get_timings(), self._profiles), out, indent=1)
        self._profiles = []
        return name

    def get_profiling_start_time_ns(self):
        """When the session began (time.time_ns()), the origin onnxruntime's profiles count from."""
        return self._profiling_start_ns

    # Kiln's own.
    def get_timings(self):
        """The session's timing breakdown and work counters: {"timings": {..._ms}, "counters": {...}}."""
        return self._native.timings()

    def get_run_profile(self):
        """The node-by-node profile of the last run made with profiling on: {"run_ms", "nodes": [...]}."""
        return self._native.last_run_profile()

    def get_transfers(self):
        """Bytes this session's runs copied between host and device memory since creation:
        {"host_to_device_bytes", "device_to_host_bytes"}."""
        return self._native.transfers()

    def get_partitions(self):
        """Every partition: {"name", "execution_provider", "node_count"}."""
        return self._native.partitions()

    @staticmethod
    def _node_arg(meta):
        return NodeArg(meta["name"], type_string(meta), list(meta["shape"]) if meta["has_shape"] else [])


def _chrome_trace(timings, profiles):
    events = [{"cat": "Session", "name": key, "ph": "X", "ts": 0, "dur": int(value * 1000), "pid": 0, "tid": 0}
              for key, value in timings["timings"].items()]
    origin = 0  # each run's nodes follow the previous run's, at their measured starts
    for profile in profiles:
        for node in profile["nodes"]:
            duration = int(node["total_ms"] * 1000)
            events.append({"cat": "Node", "name": node["node"], "ph": "X", "ts": origin + int(node["start_ms"] * 1000),
                           "dur": duration, "pid": 0, "tid": 0,
                           "args": {"op_name": node["op_type"], "provider": node["execution_provider"],
                                    "calls": node["calls"], "graph": node["graph"]}})
        origin += int(profile["run_ms"] * 1000)
    return events
