"""SessionOptions and RunOptions with onnxruntime's names, and the mapping of providers onto kiln.* config keys."""

import enum
import warnings

from . import _kiln


class GraphOptimizationLevel(enum.IntEnum):
    """onnxruntime's levels; Kiln has three (none, basic, all): EXTENDED and LAYOUT run as ALL."""

    ORT_DISABLE_ALL = 0
    ORT_ENABLE_BASIC = 1
    ORT_ENABLE_EXTENDED = 2
    ORT_ENABLE_LAYOUT = 3
    ORT_ENABLE_ALL = 99


class ExecutionMode(enum.IntEnum):
    """Accepted for onnxruntime scripts; Kiln runs a graph's nodes in order (sequential)."""

    ORT_SEQUENTIAL = 0
    ORT_PARALLEL = 1


KILN_OPTIMIZATION_LEVELS = {0: "none", 1: "basic", 2: "all", 3: "all", 99: "all"}
CPU_PROVIDER = _kiln.CPU_EXECUTION_PROVIDER
VULKAN_PROVIDER = _kiln.VULKAN_EXECUTION_PROVIDER
PROVIDER_SHORT_NAMES = {VULKAN_PROVIDER: "vulkan", CPU_PROVIDER: "cpu"}


def known_config_keys():
    """Every config key Kiln knows: key -> (default, meaning)."""
    return _kiln.known_config_keys()


def _warn(message):
    warnings.warn(message, RuntimeWarning, stacklevel=3)


class SessionOptions:
    """onnxruntime.SessionOptions: config entries plus the attributes onnxruntime scripts set.

    Attributes Kiln has no use for (inter_op_num_threads, execution_mode, enable_mem_pattern, ...) are kept so
    scripts run; graph_optimization_level, intra_op_num_threads and enable_profiling take effect.
    """

    def __init__(self):
        self._entries = {}
        self._input_shapes = {}
        self.graph_optimization_level = GraphOptimizationLevel.ORT_ENABLE_ALL
        self.intra_op_num_threads = 0
        self.inter_op_num_threads = 0
        self.execution_mode = ExecutionMode.ORT_SEQUENTIAL
        self.enable_profiling = False
        self.profile_file_prefix = "kiln_profile"
        self.log_severity_level = 2
        self.log_verbosity_level = 0
        self.logid = ""
        self.enable_cpu_mem_arena = True
        self.enable_mem_pattern = True
        self.enable_mem_reuse = True
        self.use_deterministic_compute = False
        self.optimized_model_filepath = ""
        self.progress = None  # Kiln: called as progress(stage, done, total) while a session is created
        self._providers = []

    def add_session_config_entry(self, key, value):
        """Sets a config entry. Unknown kiln.* keys raise InvalidArgument; keys Kiln does not use warn."""
        key, value = str(key), str(value)
        if key.startswith("kiln.") or key in _kiln.known_config_keys():
            _kiln.check_config_entry(key, value)
        else:
            _warn(f"config entry '{key}' is not used by Kiln (accepted so onnxruntime scripts run; no effect)")
        self._entries[key] = value

    def get_session_config_entry(self, key):
        """The value set for `key` (onnxruntime raises for an unset key; Kiln does too)."""
        if key not in self._entries:
            from ._errors import InvalidArgument
            raise InvalidArgument(f"config entry '{key}' is not set")
        return self._entries[key]

    def has_session_config_entry(self, key):
        """True when `key` was set."""
        return key in self._entries

    def add_free_dimension_override_by_name(self, dim_name, dim_value):
        """Fixes the symbolic dimension `dim_name` (kiln.free_dim_override.<name>)."""
        self.add_session_config_entry("kiln.free_dim_override." + dim_name, int(dim_value))

    def add_provider(self, provider_name, provider_options=None):
        """Appends a provider (used when InferenceSession or ModelCompiler get no `providers`)."""
        self._providers.append((str(provider_name), dict(provider_options or {})))

    def providers(self):
        """The providers add_provider() appended, as (name, options) pairs."""
        return list(self._providers)

    def set_input_shape(self, name, shape):
        """Kiln: fixes every dimension of input `name` (checked when the session loads the model)."""
        self._input_shapes[str(name)] = [int(d) for d in shape]

    def kiln_config(self):
        """Every config entry the engine receives: the entries Kiln uses plus the attributes that map to keys."""
        config = {k: v for k, v in self._entries.items()
                  if k.startswith("kiln.") or k in _kiln.known_config_keys()}
        config.setdefault("kiln.graph_optimization_level",
                          KILN_OPTIMIZATION_LEVELS.get(int(self.graph_optimization_level), "all"))
        if self.intra_op_num_threads:
            config.setdefault("kiln.intra_op_num_threads", str(int(self.intra_op_num_threads)))
        return config

    def input_shapes(self):
        """The shapes set_input_shape() fixed, by input name."""
        return dict(self._input_shapes)


class RunOptions:
    """onnxruntime.RunOptions: `terminate = True` (from any thread) stops runs using these options with
    kiln.Cancelled; `logid`/`tag` names the run in log lines; Kiln's `profiling` times every node."""

    def __init__(self):
        self._native = _kiln.RunOptions()
        self._entries = {}
        self.log_severity_level = 2
        self.log_verbosity_level = 0
        self.only_execute_path_to_fetches = False

    @property
    def terminate(self):
        return self._native.terminate_requested

    @terminate.setter
    def terminate(self, value):
        if value:
            self._native.set_terminate()
        else:
            self._native.unset_terminate()

    @property
    def logid(self):
        return self._native.tag

    @logid.setter
    def logid(self, value):
        self._native.tag = str(value)

    tag = logid

    @property
    def profiling(self):
        return self._native.profiling

    @profiling.setter
    def profiling(self, value):
        self._native.profiling = bool(value)

    def add_run_config_entry(self, key, value):
        """Kept for onnxruntime scripts: Kiln has no run config keys (a warning says so)."""
        _warn(f"run config entry '{key}' is not used by Kiln")
        self._entries[str(key)] = str(value)

    def get_run_config_entry(self, key):
        """The value add_run_config_entry() stored for `key` (KeyError when unset)."""
        return self._entries[key]


def providers_to_config(providers, provider_options):
    """The kiln.* entries for onnxruntime's `providers` / `provider_options` arguments (None: Kiln's default)."""
    if providers is None:
        return {}
    names, options = [], []
    for index, provider in enumerate(providers):
        name, opts = (provider if isinstance(provider, (tuple, list)) else (provider, None))
        if opts is None and provider_options is not None and index < len(provider_options):
            opts = provider_options[index]
        if name not in PROVIDER_SHORT_NAMES:
            _warn(f"provider '{name}' is not available in Kiln (available: {list(PROVIDER_SHORT_NAMES)}); skipped")
            continue
        names.append(name)
        options.append((name, opts or {}))
    if CPU_PROVIDER not in names:
        names.append(CPU_PROVIDER)  # onnxruntime always falls back to its CPU provider
    config = {"kiln.execution_providers": ",".join(PROVIDER_SHORT_NAMES[n] for n in names)}
    for name, opts in options:
        config.update(_provider_option_entries(name, opts))
    return config


def _provider_option_entries(name, options):
    entries = {}
    for key, value in options.items():
        key, value = str(key), str(value)
        if key.startswith("kiln."):
            entries[key] = value
        elif name == VULKAN_PROVIDER:
            entries["kiln.vulkan." + ("device" if key == "device_id" else key)] = value
        elif key == "intra_op_num_threads":
            entries["kiln.intra_op_num_threads"] = value
        else:
            _warn(f"{name} option '{key}' is not used by Kiln")
    for key, value in entries.items():
        _kiln.check_config_entry(key, value)
    return entries
