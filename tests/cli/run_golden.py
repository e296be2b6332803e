#!/usr/bin/python3
"""Golden-file tests of kiln's CLI output.

Each case in cases.txt is `name: arguments` (shell-quoted). The runner executes `kiln <arguments>` from the
source folder and compares exit code, stdout and stderr with golden/<name>.txt after masking what legitimately
varies: timing fields (JSON keys ending in `_ms`, `ms`, and `min/median/max` of run_ms; `key=1.234` pairs and
`min 1.2, median ...` in text) and float noise (numbers rounded to 4 significant digits).
Usage: run_golden.py KILN_BINARY SOURCE_DIR [--update]
"""
import json
import re
import shlex
import subprocess
import sys
from pathlib import Path


def round_float(value):
    return float(f"{value:.4g}") if isinstance(value, float) else value


def mask_json(node, key=""):
    if isinstance(node, dict):
        return {k: mask_json(v, k) for k, v in node.items()}
    if isinstance(node, list):
        return [mask_json(v, key) for v in node]
    if key.endswith("_ms") or key == "ms":
        return "<ms>" if not isinstance(node, dict) else node
    return round_float(node)


def mask_text(text):
    text = re.sub(r"(_ms=)[0-9.]+", r"\1<ms>", text)
    text = "\n".join(re.sub(r"\b(min|median|max) [0-9.]+", r"\1 <ms>", line) if line.startswith("run (ms)") else line
                     for line in text.split("\n"))
    return re.sub(r"-?\d+\.\d+(e[-+]\d+)?", lambda m: f"{float(m.group(0)):.4g}", text)


def mask(stream):
    try:
        document = json.loads(stream)
    except ValueError:
        return mask_text(stream)
    if isinstance(document, dict) and "run_ms" in document:
        document["run_ms"] = {k: ("<ms>" if k != "runs" else v) for k, v in document["run_ms"].items()}
    return json.dumps(mask_json(document), indent=2, sort_keys=True) + "\n"


def main():
    kiln, source = sys.argv[1], Path(sys.argv[2])
    update = "--update" in sys.argv
    here = Path(__file__).resolve().parent
    failures = 0
    for line in (here / "cases.txt").read_text().splitlines():
        if not line.strip() or line.startswith("#"):
            continue
        name, args = line.split(":", 1)
        result = subprocess.run([kiln] + shlex.split(args), cwd=source, capture_output=True, text=True, timeout=600)
        actual = f"$ kiln{args}\nexit: {result.returncode}\n--- stdout\n{mask(result.stdout)}--- stderr\n" \
                 f"{mask_text(result.stderr)}"
        golden = here / "golden" / f"{name.strip()}.txt"
        if update:
            golden.write_text(actual)
            continue
        expected = golden.read_text() if golden.exists() else "<no golden file>"
        if actual != expected:
            failures += 1
            print(f"MISMATCH {name.strip()} (regenerate with --update after checking the change)")
            import difflib
            sys.stdout.writelines(difflib.unified_diff(expected.splitlines(True), actual.splitlines(True),
                                                       "golden", "actual"))
    print(f"{failures} golden mismatches")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
