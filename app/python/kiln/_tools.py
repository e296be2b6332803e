"""Kiln's own tools as plain Python data: inspect, check, merge, devices."""

import json
import os
import tempfile

from . import _kiln
from ._errors import KilnError

_BINARY_MAGIC = b"KILNVKCB"


def _read_head(path_or_bytes):
    if isinstance(path_or_bytes, (bytes, bytearray, memoryview)):
        return bytes(path_or_bytes[:8])
    with open(os.fspath(path_or_bytes), "rb") as file:
        return file.read(8)


def _source(path_or_bytes):
    if isinstance(path_or_bytes, (bytes, bytearray, memoryview)):
        return bytes(path_or_bytes)
    return os.fspath(path_or_bytes)


def inspect(path_or_bytes):
    """What a file holds, as a dict with "file_kind": "context_binary" (header, sections, graphs),
    "ctx_model" (EPContext nodes followed to their binaries) or "model" (a plain ONNX model: nodes, values)."""
    source = _source(path_or_bytes)
    if not isinstance(source, bytes) and not os.path.isfile(source):
        from ._errors import NoSuchFile
        raise NoSuchFile(f"'{source}' is not a file")
    if _read_head(source) == _BINARY_MAGIC:
        return _kiln.inspect_binary(source)
    if isinstance(source, bytes):
        ctx = _kiln.inspect_ctx_model(source)
        if ctx["nodes"]:
            return ctx
        return describe_model(source)
    try:
        ctx = _kiln.inspect_ctx_model(source)
        if ctx["nodes"]:
            return ctx
    except KilnError:
        pass
    return _kiln.inspect_model(source)


def describe_model(source):
    """kiln::inspectModel for a path or bytes (written to a temporary file: the engine reads plain models from
    files only)."""
    if not isinstance(source, bytes):
        return _kiln.inspect_model(source)
    with tempfile.TemporaryDirectory() as folder:
        path = os.path.join(folder, "model.onnx")
        with open(path, "wb") as file:
            file.write(source)
        return dict(_kiln.inspect_model(path), path="")


def check(path_or_bytes, profile=None, device=None, source=None, base_folder=""):
    """Can this compiled model (a ctx model, a context binary or a plain model) run here, and should it be
    recompiled? onnxruntime's four states, without creating a session:
    {"compatibility": "NOT_APPLICABLE" | "SUPPORTED_OPTIMAL" | "SUPPORTED_PREFER_RECOMPILATION" | "UNSUPPORTED",
     "verdict": "optimal" | "compatible" | "unsupported" | None, "file_kind": "ctx_model" | "context_binary" |
     "model", "against", "reasons", "answered_from", "compile_record" (a dict, or None), "source_checked",
     "compatibility_info"}: the fields of `kiln check --json`. Judged against `profile` (a device profile JSON) when given, else live device `device`
    (index or name; None: the one a compile would pick); `source` is the source model to check staleness against;
    `base_folder` resolves a ctx model's file references when it is given as bytes."""
    source_model = os.fspath(source) if source else ""
    result = _kiln.model_compatibility(_source(path_or_bytes), base_folder=os.fspath(base_folder),
                                       device="" if device is None else str(device),
                                       profile=os.fspath(profile) if profile else "", source=source_model)
    result["compile_record"] = json.loads(result["compile_record"]) if result["compile_record"] else None
    return result


def get_compatibility_info_from_model(path_or_bytes):
    """The model's ep_compatibility_info.VulkanExecutionProvider metadata ("" when it has none)."""
    return _kiln.compatibility_info(_source(path_or_bytes))


def merge(inputs, output_path, connections=None):
    """Merges ctx models into one (kiln merge): inputs are paths or (path, prefix) pairs; connections are
    (output name, input name) pairs of prefixed names. Returns {"output_model_path", "binary_path", ...}."""
    pairs = [(os.fspath(i), "") if isinstance(i, (str, os.PathLike)) else (os.fspath(i[0]), str(i[1]))
             for i in inputs]
    return _kiln.merge(pairs, os.fspath(output_path), [tuple(c) for c in (connections or [])])


def devices():
    """The Vulkan devices Kiln can use: one dict each (index, name, type, driver, used_by_default, ...)."""
    return _kiln.devices()


def device_profile(index=0):
    """The device profile of live device `index` as a dict (what kiln devices --profile writes)."""
    return json.loads(_kiln.device_profile(int(index)))



def compare(model, input_feed, providers=None, sess_options=None, reference_model=None, reference_providers=None,
            reference_sess_options=None, atol=1e-4, rtol=1e-3, max_fraction_beyond=0.0, bisect=False):
    """Runs `model` under two configurations on the same inputs (NumPy arrays by input name) and compares every
    output element by element (kiln compare): an element passes when |x - ref| <= atol + rtol * |ref|, an output
    when at most `max_fraction_beyond` (0 <= F < 1, as kiln compare --max-fraction-beyond) of its elements fail and no
    NaN/Inf mismatches.
    The first side is `providers` / `sess_options` (as InferenceSession takes them); the reference is
    `reference_model` (default: the same model) under `reference_providers` / `reference_sess_options` (default: the
    CPU provider). Returns {"passed", "outputs": [{"name", "max_abs_error", "max_rel_error", "mean_abs_error",
    "cosine_similarity", "fraction_beyond_tolerance", "allowed_beyond", "worst", "nan_mismatches", "inf_mismatches", "shape_mismatch",
    "dtype_mismatch", "abs_error_histogram" (14 decade bins of |x - ref|), ...}], "first_divergence"}; with
    bisect=True, first_divergence is the first node whose outputs diverge while its inputs agree ({"node", "op_type",
    "inputs", "outputs"}), or None."""
    from ._options import SessionOptions, providers_to_config

    def config_of(options, chosen):
        options = options if options is not None else SessionOptions()
        config = options.kiln_config()
        config.update(providers_to_config(chosen if chosen is not None else options.providers() or None, None))
        return config

    reference_default = reference_providers if reference_providers is not None else [_kiln.CPU_EXECUTION_PROVIDER]
    return _kiln.compare(os.fspath(model), dict(input_feed), config_of(sess_options, providers),
                         os.fspath(reference_model) if reference_model else "",
                         config_of(reference_sess_options, reference_default), float(atol), float(rtol),
                         float(max_fraction_beyond), bool(bisect))



def package_model(source, output, profiles=None, variants=("fp32",), overwrite=False, config=None):
    """Compiles `source` once per device profile (JSON paths; None: the live device) and precision ("fp32",
    "fp16", "autotune") into one model package folder `output` (kiln package): onnxruntime's package layout,
    SHA-256 file digests, the weights stored once. Returns the package as a dict (path, component, source_model,
    total_bytes, shared_bytes, variants: name, device, profile, precision, ctx_model, compile_identity, files)."""
    return _kiln.package_model(os.fspath(source), os.fspath(output), [os.fspath(p) for p in (profiles or [])],
                               list(variants), bool(overwrite), {str(k): str(v) for k, v in (config or {}).items()})


def read_package(path):
    """A model package's descriptors as a dict (the shape package_model returns); raises InvalidArgument for a
    hostile or malformed package."""
    return _kiln.read_package(os.fspath(path))


def choose_package_variant(path, config=None):
    """The variant of the package at `path` a session here would load with `config` (kiln.vulkan.fp16=1 asks for
    fp16, kiln.vulkan.device picks the device): {"variant" (None: the packaged source is compiled), "model",
    "against", "summary", "judged": [{"variant", "compatibility", "precision_matches", "reasons"}]}.
    InferenceSession(path) makes the same choice."""
    return _kiln.choose_package_variant(os.fspath(path), {str(k): str(v) for k, v in (config or {}).items()})
