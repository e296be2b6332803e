#!/usr/bin/python3
"""Golden-file tests of kiln's CLI output.

Each case in cases.txt is `name: [NAME=VALUE ...] arguments` (shell-quoted; leading NAME=VALUE words are
environment variables for that case). The runner executes `kiln <arguments>` from the source folder and compares
exit code, stdout and stderr with golden/<name>.txt after masking what legitimately varies: timing fields (JSON
keys ending in `_ms`, `ms`, and the statistics of run_ms; `key=1.234` pairs, `min 1.2, median ...` and
`123 ms` in text), float noise (numbers rounded to 4 significant digits), and what depends on the device, the
driver or the exact SPIR-V: device names, IDs and driver versions, pipeline-cache UUIDs, content hashes, binary
file sizes and section offsets (see DEVICE_KEYS, MASKED_KEYS and TEXT_MASKS).
`{tmp}` in arguments is one temporary folder shared by all cases of a run (cases run in file order, so a compile
case can feed later inspect/check/merge cases); in output it reads `{tmp}`, and the kiln binary's path reads
`<kiln>`. Nothing is written into the source tree.
Usage: run_golden.py KILN_BINARY SOURCE_DIR [--update]
"""
import difflib
import json
import os
import re
import shlex
import subprocess
import sys
import tempfile
from pathlib import Path

# Identity fields inside a "device" object or a "devices" list: they name the machine, not Kiln's behaviour.
DEVICE_KEYS = {"name", "vendor_id", "device_id", "driver_id", "driver_version", "driver_name", "driver_info",
               "api_version", "pipeline_cache_uuid", "device_local_bytes"}
# Anywhere: content hashes and byte layouts change with every shader edit or differ per device.
MASKED_KEYS = {"hash", "pipeline_cache_uuid", "file_size", "offset", "size", "hardware_architecture", "binary_bytes",
               "stages_ms",  # kiln bench lists only the stages that took time
               "source_model", "source_checked", "kiln.compile_record",  # paths relative to where {tmp} is
               # the compile identity hashes the source, glslang's version and the target: masked like other hashes
               "identity", "compile_identity", "toolchain", "target_device"}
# Anywhere, the whole value: what names the machine (kiln bench's provenance) and memory readings.
MASKED_SUBTREES = {"machine", "environment", "vulkan", "memory_mib"}
TEXT_MASKS = [
    (r"\b\d+(\.\d+)? ms\b", "<ms> ms"),
    (r"xxh3 [0-9a-f]{16}", "xxh3 <hash>"),
    (r"pipeline cache UUID [0-9a-f]{32}", "pipeline cache UUID <uuid>"),
    (r"offset +\d+  size +\d+", "offset <n>  size <n>"),
    (r"(Kiln context binary, format [\d.]+, )\d+ bytes", r"\1<n> bytes"),
    (r"(SPIR-V: \d+ modules, )\d+ bytes", r"\1<n> bytes"),
    (r"(_vulkan\.bin \()\d+ bytes", r"\1<n> bytes"),
    (r"\(source compared: .*\)", "(source compared: <path>)"),  # where the compile record's source is found
    # kiln devices
    (r"(?m)^(\d+): .* \(([a-z-]+)(, used only with --ep vulkan or kiln\.vulkan\.device)?\)$", r"\1: <device> (\2\3)"),
    (r"(?m)^   vendor 0x[0-9a-f]+ device 0x[0-9a-f]+, Vulkan [\d.]+, driver .*$",
     "   vendor <id> device <id>, Vulkan <version>, driver <driver>"),
    (r"\d+ MiB device-local", "<n> MiB device-local"),
    # kiln bench: every figure is a timing or a ratio of timings
    (r"(?m)^(kiln bench: .*) on .*$", r"\1 on <device>"),
    (r"(?m)^((cold|pipeline-cache|epctx-embed|epctx-file|in-process|onnxruntime-node) +(cold|warm|n/a) ).*$",
     r"\1<timings>"),
    (r"(?m)^(  [a-z-]+/(cold|warm|n/a):).*$", r"\1 <stages>"),
    (r"(?m)^((cold|pipeline-cache|epctx-embed|epctx-file|in-process|onnxruntime-node) (cold|warm|n/a): ).*$",
     r"\1<ratios>"),
    (r"(?m)^(  (session create|first inference|first result|steady) +\d+ ).*$", r"\1<statistics>"),
    (r"(?m)^(  memory \(MiB, median\):).*$", r"\1 <memory>"),
    (r"(?m)^(epctx session creation vs cold:).*$", r"\1 <ratios>"),
]


def round_float(value):
    return float(f"{value:.4g}") if isinstance(value, float) else value


def mask_json(node, key="", in_device=False):
    if key in MASKED_SUBTREES:
        return "<masked>"
    if key == "warnings" and isinstance(node, list):  # a CV warning comes and goes with the machine's noise
        return [w for w in node if not (isinstance(w, str) and " CV " in w)]
    if isinstance(node, dict) and key.endswith("_ms"):  # {"min", "median", "p90"} of a timing
        return {k: (v if k == "runs" else "<ms>") for k, v in node.items()}
    if isinstance(node, dict):
        masked = {k: mask_json(v, k, in_device or k in ("device", "devices")) for k, v in node.items()}
        if key == "spirv" and "bytes" in masked:  # the SPIR-V's size changes with every shader edit
            masked["bytes"] = "<masked>"
        return masked
    if isinstance(node, list):
        return [mask_json(v, key, in_device) for v in node]
    if key.endswith("_ms") or key == "ms":
        return "<ms>"
    if "speedup" in key or "_vs_" in key or (key == "device" and isinstance(node, str)):
        return "<masked>"
    if key in MASKED_KEYS or "hash" in key or key.startswith("ep_compatibility_info") or \
            (in_device and key in DEVICE_KEYS):
        return "<masked>"
    return round_float(node)


def mask_text(text):
    text = re.sub(r"(?m)^(kiln: )?warning: .*\bCV (above )?[0-9.]+%.*\n", "", text)  # noise-dependent, as above
    for pattern, replacement in TEXT_MASKS:
        text = re.sub(pattern, replacement, text)
    text = re.sub(r"(_ms=)[0-9.]+", r"\1<ms>", text)
    text = "\n".join(re.sub(r"\b(min|mean|median|p90|p95|p99|max|stddev|CV|CI) [0-9.]+%?( to [0-9.]+)?", r"\1 <ms>", line)
                     if line.startswith("run (ms)") else line for line in text.split("\n"))
    return re.sub(r"-?\d+\.\d+(e[-+]\d+)?", lambda m: f"{float(m.group(0)):.4g}", text)


def mask(stream):
    try:
        document = json.loads(stream)
    except ValueError:
        return mask_text(stream)
    if isinstance(document, dict) and "run_ms" in document:
        document["run_ms"] = {k: ("<ms>" if k != "runs" else v) for k, v in document["run_ms"].items()}
    return json.dumps(mask_json(document), indent=2, sort_keys=True) + "\n"


def run_case(kiln, source, tmp, args):
    words = shlex.split(args.replace("{tmp}", tmp))
    env = dict(os.environ)
    while words and re.fullmatch(r"[A-Z_][A-Z0-9_]*=.*", words[0]):
        key, value = words.pop(0).split("=", 1)
        env[key] = value
    result = subprocess.run([kiln] + words, cwd=source, capture_output=True, text=True, timeout=600, env=env)

    def unplace(text):
        return text.replace(tmp, "{tmp}").replace(kiln, "<kiln>")
    return result.returncode, mask(unplace(result.stdout)), mask_text(unplace(result.stderr))


def check_case(kiln, source, tmp, here, line, update):
    name, args = line.split(":", 1)
    code, stdout, stderr = run_case(kiln, source, tmp, args)
    actual = f"$ kiln{args}\nexit: {code}\n--- stdout\n{stdout}--- stderr\n{stderr}"
    golden = here / "golden" / f"{name.strip()}.txt"
    if update:
        golden.write_text(actual)
        return 0
    expected = golden.read_text() if golden.exists() else "<no golden file>"
    if actual == expected:
        return 0
    print(f"MISMATCH {name.strip()} (regenerate with --update after checking the change)")
    sys.stdout.writelines(difflib.unified_diff(expected.splitlines(True), actual.splitlines(True),
                                               "golden", "actual"))
    return 1


def main():
    kiln, source = os.path.abspath(sys.argv[1]), Path(sys.argv[2])
    update = "--update" in sys.argv
    here = Path(__file__).resolve().parent
    failures = 0
    with tempfile.TemporaryDirectory(prefix="kiln-golden-") as tmp:
        for line in (here / "cases.txt").read_text().splitlines():
            if not line.strip() or line.startswith("#"):
                continue
            failures += check_case(kiln, source, tmp, here, line, update)
    print(f"{failures} golden mismatches")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
