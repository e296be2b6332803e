#!/usr/bin/python3
"""Hostile input never crashes kiln: each case a mutation campaign found (a signal or a hang) as the smallest file
that shows it, run through the subcommands it broke. Valid files must run and exit 0; invalid ones exit 1 or 2 with
a message naming the problem; never a signal, never a hang (20 s per command), and `kiln: error:` is the last line
of stderr when a command fails.

Usage: hostile_inputs.py KILN_BINARY [CASE...]   (cases by name; all when none given; --list prints them)
Vulkan cases run on whatever `kiln devices` lists (lavapipe in CI); exit 77 when no Vulkan device and
KILN_REQUIRE_VULKAN is not 1.
"""
import json
import os
import signal
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "support"))
from kiln_requirements import failure, required  # noqa: E402

TIMEOUT_S = 20
failures = 0


def model(nodes, inputs, outputs, initializers=(), opset=17, name="g"):
    graph = helper.make_graph(nodes, name, inputs, outputs, initializer=list(initializers))
    m = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    m.ir_version = 8
    return m


def save(m, path):
    path.write_bytes(m.SerializeToString())
    return path


def vinfo(name, dims, dtype=TensorProto.FLOAT):
    return helper.make_tensor_value_info(name, dtype, dims)


# ---- the files ----

def output_is_input(d):
    # Valid ONNX: the graph output is the graph input (onnxruntime passes it through); the Relu is dead.
    return save(model([helper.make_node("Relu", ["x"], ["dead"], name="dead_relu")],
                      [vinfo("x", [1, 4])], [vinfo("x", [1, 4])]), d / "output_is_input.onnx")


def maxpool_stride0(d):
    return save(model([helper.make_node("MaxPool", ["x"], ["y"], name="pool", kernel_shape=[2, 2], strides=[0, 0])],
                      [vinfo("x", [1, 1, 4, 4])], [vinfo("y", None)]), d / "maxpool_stride0.onnx")


def conv_empty_weight(d):
    return save(model([helper.make_node("Conv", ["x", ""], ["y"], name="conv", kernel_shape=[3, 3])],
                      [vinfo("x", [1, 1, 8, 8])], [vinfo("y", None)]), d / "conv_empty_weight.onnx")


def relu_chain(d, length=20000):
    nodes = [helper.make_node("Relu", [f"v{i}"], [f"v{i + 1}"], name=f"relu{i}") for i in range(length)]
    nodes[0].input[0] = "x"
    nodes[-1].output[0] = "y"
    return save(model(nodes, [vinfo("x", [1, 16])], [vinfo("y", [1, 16])]), d / "relu_chain.onnx")


def huge_dim(d):
    return save(model([helper.make_node("Relu", ["x"], ["y"], name="relu")],
                      [vinfo("x", [1 << 40])], [vinfo("y", [1 << 40])]), d / "huge_dim.onnx")


def symbolic_relu(d):
    return save(model([helper.make_node("Relu", ["x"], ["y"], name="relu")],
                      [vinfo("x", ["n"])], [vinfo("y", ["n"])]), d / "symbolic_relu.onnx")


def self_loop(d):
    return save(model([helper.make_node("Add", ["x", "s"], ["s"], name="loop_add")],
                      [vinfo("x", [1, 4])], [vinfo("s", [1, 4])]), d / "self_loop.onnx")


def duplicate_output(d):
    return save(model([helper.make_node("Relu", ["x"], ["y"], name="first"),
                       helper.make_node("Neg", ["x"], ["y"], name="second")],
                      [vinfo("x", [1, 4])], [vinfo("y", [1, 4])]), d / "duplicate_output.onnx")


def nested_ifs(d, depth=60):
    out = vinfo("y", [1])
    leaf = helper.make_graph([helper.make_node("Identity", ["x"], ["y"], name="leaf")], "leaf", [], [out])
    body = leaf
    for level in range(depth):  # nested through then_branch only: the file stays small
        body = helper.make_graph(
            [helper.make_node("If", ["c"], ["y"], name=f"if{level}", then_branch=body, else_branch=leaf)],
            f"level{level}", [], [out])
    top = helper.make_graph(list(body.node), "top", [vinfo("c", [], TensorProto.BOOL), vinfo("x", [1])], [out])
    m = helper.make_model(top, opset_imports=[helper.make_opsetid("", 17)])
    m.ir_version = 8
    return save(m, d / "nested_ifs.onnx")


def npy_file(path, header_dict_text):
    header = header_dict_text.encode("latin1")
    pad = 64 - (10 + len(header) + 1) % 64
    header += b" " * pad + b"\n"
    path.write_bytes(b"\x93NUMPY\x01\x00" + len(header).to_bytes(2, "little") + header + b"\0" * 64)
    return path


def fifo(path):
    os.mkfifo(path)
    return path


# ---- running ----

def run(kiln, args, timeout=TIMEOUT_S, cwd=None):
    try:
        p = subprocess.run([kiln] + [str(a) for a in args], capture_output=True, text=True, timeout=timeout,
                           cwd=cwd, errors="replace")
        return p.returncode, p.stdout, p.stderr
    except subprocess.TimeoutExpired:
        return "timeout", "", ""


def check(case, kiln, args, expect_codes, needle=None, cwd=None):
    """Runs kiln with `args`; the exit code must be in expect_codes, stderr (or stdout) must contain `needle`."""
    global failures
    code, out, err = run(kiln, args, cwd=cwd)
    what = f"{case}: kiln {' '.join(str(a) for a in args)}"
    problems = []
    if code == "timeout":
        problems.append(f"no answer within {TIMEOUT_S} s")
    elif code < 0:
        problems.append(f"killed by {signal.Signals(-code).name}")
    elif code not in expect_codes:
        problems.append(f"exit {code}, expected {'/'.join(map(str, expect_codes))}")
    if code not in ("timeout",) and code != 0:
        last = [line for line in err.splitlines() if line.strip()][-1:] or [""]
        if not last[0].startswith("kiln: error:") and "--json" not in map(str, args):
            problems.append(f"stderr does not end with 'kiln: error:' but with {last[0]!r}")
        if "what():" in err or "terminate called" in err:
            problems.append("an uncaught exception reached the terminal")
    if needle and code not in ("timeout",) and needle.lower() not in (err + out).lower():
        problems.append(f"message does not mention {needle!r}")
    if problems:
        failures += 1
        print(f"FAIL {what}: {'; '.join(problems)}\n    stderr: {err.strip()[-400:]}", flush=True)
    else:
        print(f"ok   {what} (exit {code})", flush=True)


def cases(kiln, d, vulkan):
    eps = ["cpu"] + (["vulkan"] if vulkan else [])
    yield "output_is_input", lambda: [
        check("output_is_input", kiln, ["run", output_is_input(d), "--ep", ep], [0]) for ep in eps] + [
        check("output_is_input", kiln, ["partition", d / "output_is_input.onnx"], [0])] + ([
        check("output_is_input", kiln, ["compile", d / "output_is_input.onnx", "-o", d / "oi_ctx.onnx"], [0])]
        if vulkan else [])
    yield "maxpool_stride0", lambda: [
        check("maxpool_stride0", kiln, [cmd, maxpool_stride0(d)] + extra, [1, 2], "strides")
        for cmd, extra in (("inspect", []), ("partition", []), ("run", ["--ep", "cpu"]))]
    yield "conv_empty_weight", lambda: [
        check("conv_empty_weight", kiln, args, [1, 2], "conv")
        for args in ([["run", conv_empty_weight(d), "--ep", ep] for ep in eps] +
                     ([["compile", d / "conv_empty_weight.onnx", "-o", d / "ce_ctx.onnx"]] if vulkan else []))]
    yield "relu_chain", lambda: [
        check("relu_chain", kiln, ["run", relu_chain(d), "--ep", ep], [0]) for ep in eps] + ([
        check("relu_chain", kiln, ["compile", d / "relu_chain.onnx", "-o", d / "rc_ctx.onnx"], [0])]
        if vulkan else [])
    yield "huge_dim", lambda: [
        check("huge_dim", kiln, ["run", huge_dim(d), "--ep", "cpu"], [1, 2], "1099511627776"),
        check("huge_dim", kiln, ["run", symbolic_relu(d), "--ep", "cpu", "--shape", "x=1099511627776"], [1, 2],
              "1099511627776"),
        check("huge_dim", kiln, ["run", symbolic_relu(d), "--ep", "cpu", "--shape", "x=99999999999999999999"], [2],
              "99999999999999999999")]
    yield "npy_huge_shape", lambda: [
        check("npy_huge_shape", kiln, ["run", symbolic_relu(d), "--ep", "cpu", "--input",
              "x=" + str(npy_file(d / "huge.npy", "{'descr': '<f4', 'fortran_order': False, 'shape': (1099511627776,), }"))],
              [1, 2], "huge.npy"),
        check("npy_huge_shape", kiln, ["run", d / "symbolic_relu.onnx", "--ep", "cpu", "--input",
              "x=" + str(npy_file(d / "long.npy", "{'descr': '<f4', 'fortran_order': False, 'shape': (123456789012345678901234567890,), }"))],
              [1, 2], "long.npy")]
    yield "self_loop", lambda: [
        check("self_loop", kiln, ["run", self_loop(d), "--ep", ep], [1, 2], "cycle") for ep in eps]
    yield "duplicate_output", lambda: [
        check("duplicate_output", kiln, ["run", duplicate_output(d), "--ep", "cpu"], [1, 2], "second")]
    yield "nested_ifs", lambda: [
        check("nested_ifs", kiln, ["inspect", nested_ifs(d)], [1, 2], "nest")]
    yield "fifo_model", lambda: [
        check("fifo_model", kiln, [cmd, fifo(d / f"fifo_{cmd}.onnx")], [1, 2], "regular file")
        for cmd in ("run", "partition", "inspect")]
    yield "folder_model", lambda: [
        check("folder_model", kiln, [cmd, d] + extra, [1, 2], "regular file")
        for cmd, extra in (("run", []), ("partition", []), ("inspect", []), ("compile", ["-o", d / "f_ctx.onnx"]))]
    if vulkan:
        yield "pipeline_cache_resealed", lambda: pipeline_cache_resealed(kiln, d)
    yield "batch_jobs", lambda: [
        check("batch_jobs", kiln, ["batch", p] + extra, [2], p.name)
        for extra in ([], ["--json"])
        for p in (write(d / "bad_utf8.json", b'{"jobs": [{"command": "devices", "args": ["\xff"]}]}'),
                  write(d / "huge_number.json", b'{"jobs": [{"command": "devices", "args": [], "timeout_s": 1e400}]}'),
                  write(d / "huge_number2.json", b'{"jobs": [{"command": "devices", "args": [], "x": 1e999999}]}'),
                  write(d / "huge_timeout.json", b'{"jobs": [{"command": "devices", "args": [], "timeout_s": 1e300}]}'))]


def reseal_corrupt_spirv(path, with_digests):
    """Overwrites every SPIR-V entry's body in a pipeline cache file with OpNop words (a module the driver refuses:
    lavapipe once crashed or returned VkResult -13 on such files) and recomputes the XXH3 checksums, so the file
    passes every file-level check. `with_digests` also recomputes each entry's digest (format 2), as a writer that
    knows the format would: then only SPIR-V validation can tell."""
    import ctypes
    import struct
    xxh = ctypes.CDLL("libxxhash.so.0")
    xxh.XXH3_64bits.restype = ctypes.c_uint64
    xxh.XXH3_64bits.argtypes = [ctypes.c_char_p, ctypes.c_size_t]
    xxh.XXH3_64bits_withSeed.restype = ctypes.c_uint64
    xxh.XXH3_64bits_withSeed.argtypes = [ctypes.c_char_p, ctypes.c_size_t, ctypes.c_uint64]
    digest = lambda b: xxh.XXH3_64bits(bytes(b), len(b))
    b = bytearray(path.read_bytes())
    count, spirv = struct.unpack_from("<I", b, 112)[0], struct.unpack_from("<Q", b, 120)[0]
    offset = 160
    for _ in range(count):
        key, words, _digest = struct.unpack_from("<QII", b, offset)
        for w in range(5, words):
            struct.pack_into("<I", b, offset + 16 + 4 * w, 0x00010000)
        if with_digests:
            body = bytes(b[offset + 16:offset + 16 + 4 * words])
            struct.pack_into("<I", b, offset + 12, xxh.XXH3_64bits_withSeed(body, len(body), key) & 0xffffffff)
        offset += 16 + 4 * words
    struct.pack_into("<Q", b, 128, digest(b[160:160 + spirv]))
    struct.pack_into("<Q", b, 144, digest(b[160 + spirv:]))
    struct.pack_into("<Q", b, 152, digest(b[:152]))
    path.write_bytes(b)
    return count


def pipeline_cache_resealed(kiln, d):
    """A pipeline cache file with corrupt SPIR-V behind valid checksums (issue 31: it crashed kiln inside the driver)
    is a miss and a rebuild, never handed to the driver: exit 0, the same outputs, a warning naming the check that
    caught it: the entry digests, or SPIR-V validation where the digests were recomputed too."""
    global failures
    problems = []
    for with_digests, warning in ((False, "do not match its digest"), (True, "is not valid SPIR-V")):
        cache_home = d / ("xdg_cache_digests" if with_digests else "xdg_cache")
        env = dict(os.environ, XDG_CACHE_HOME=str(cache_home))
        m = save(model([helper.make_node("Relu", ["x"], ["r"], name="relu"),
                        helper.make_node("Sigmoid", ["r"], ["y"], name="sigmoid")],
                       [vinfo("x", [1, 16])], [vinfo("y", [1, 16])]), d / "pipeline_cache_model.onnx")
        args = [kiln, "run", str(m), "--ep", "vulkan", "--json"]
        first = subprocess.run(args, capture_output=True, text=True, timeout=TIMEOUT_S, env=env)
        files = list((cache_home / "kiln").glob("*.vkcache"))
        if first.returncode != 0 or len(files) != 1:
            problems.append(f"first run: exit {first.returncode}, {len(files)} cache files")
            continue
        if reseal_corrupt_spirv(files[0], with_digests) == 0:
            problems.append("the cache file holds no SPIR-V entry")
            continue
        second = subprocess.run(args, capture_output=True, text=True, timeout=TIMEOUT_S, env=env)
        if second.returncode != 0:
            problems.append(f"second run: exit {second.returncode}: {second.stderr.strip()[-300:]}")
        elif warning not in second.stderr:
            problems.append(f"no warning '{warning}': {second.stderr.strip()[-300:]}")
        elif json.loads(second.stdout).get("outputs") != json.loads(first.stdout).get("outputs"):
            problems.append("outputs differ from the first run's")
    what = "pipeline_cache_resealed: kiln run --ep vulkan with a resealed corrupt pipeline cache"
    if problems:
        failures += 1
        print(f"FAIL {what}: {'; '.join(problems)}", flush=True)
    else:
        print(f"ok   {what}", flush=True)


def write(path, data):
    path.write_bytes(data)
    return path


def vulkan_available(kiln):
    code, out, _ = run(kiln, ["devices", "--json"])
    try:
        return code == 0 and len(json.loads(out).get("devices", [])) > 0
    except json.JSONDecodeError:
        return False


def main():
    if len(sys.argv) < 2:
        print(__doc__)
        return 2
    kiln = sys.argv[1]
    wanted = set(sys.argv[2:])
    vulkan = vulkan_available(kiln)
    if not vulkan and required("VULKAN"):
        print(f"FAIL: {failure('VULKAN', 'kiln devices lists no Vulkan device')}")
        return 1
    with tempfile.TemporaryDirectory() as tmp:
        d = Path(tmp)
        for name, body in cases(kiln, d, vulkan):
            if "--list" in wanted:
                print(name)
            elif not wanted or name in wanted:
                body()
    if not vulkan:
        print("note: no Vulkan device, Vulkan variants not run")
    print(f"{failures} failure(s)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
