"""Kiln's own tools as plain Python data: inspect, check, merge, devices."""

import json
import os

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
    """What a file holds, as a dict with "kind": "binary" (a context binary: header, sections, graphs),
    "ctx_model" (EPContext nodes followed to their binaries) or "model" (a plain ONNX model: nodes, values)."""
    source = _source(path_or_bytes)
    if not isinstance(source, bytes) and not os.path.isfile(source):
        from ._errors import NoSuchFile
        raise NoSuchFile(f"'{source}' is not a file")
    if _read_head(source) == _BINARY_MAGIC:
        return _kiln.inspect_binary(source)
    if isinstance(source, bytes):
        return _kiln.inspect_ctx_model(source)
    try:
        ctx = _kiln.inspect_ctx_model(source)
        if ctx["nodes"]:
            return ctx
    except KilnError:
        pass
    return _kiln.inspect_model(source)


def check(path_or_bytes, profile=None, device=None):
    """Whether a context binary, or every binary of a ctx model, fits a device: {"compatibility": "optimal" |
    "compatible" | "unsupported" | "not_compiled", "reasons": [...], "binaries": {name: verdict}} against
    `profile` (a device profile JSON) when given, else live device `device` (index or name; None: the default)."""
    source = _source(path_or_bytes)
    profile = os.fspath(profile) if profile else ""
    device = str(device) if device is not None else ""
    if _read_head(source) == _BINARY_MAGIC:
        verdict = _kiln.check_binary(source, device=device, profile=profile)
        return dict(verdict, binaries={_name(source): verdict})
    ctx = _kiln.inspect_ctx_model(source)
    verdicts = {}
    for node in ctx["nodes"]:
        if not node["vulkan"] or node["main_context"] != 1:
            continue
        if node["embedded"]:
            data = source if isinstance(source, bytes) else open(source, "rb").read()
            payload = data[node["payload_offset"]:node["payload_offset"] + node["payload_size"]]
            verdicts[f"embedded in '{node['name']}'"] = _kiln.check_binary(payload, f"embedded in '{node['name']}'",
                                                                          device, profile)
        elif node["binary"]:
            verdicts[node["binary"]] = _kiln.check_binary(node["binary"], device=device, profile=profile)
    if not verdicts:
        return {"compatibility": "not_compiled", "reasons": ["the model holds no Kiln EPContext node"],
                "against": "", "binaries": {}}
    order = ["optimal", "compatible", "unsupported"]
    worst = max(verdicts.values(), key=lambda v: order.index(v["compatibility"]))
    reasons = [reason for v in verdicts.values() for reason in v["reasons"]]
    return {"compatibility": worst["compatibility"], "reasons": reasons, "against": worst["against"],
            "binaries": verdicts}


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


def _name(source):
    return "<bytes>" if isinstance(source, bytes) else source
