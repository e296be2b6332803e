#!/usr/bin/env bash
# Vulkan session creation with an empty pipeline cache file against a saved one, in fresh `kiln run` processes,
# as ratios measured in one run. Not a test. Mesa's own shader cache is controlled: every process gets a fresh,
# empty MESA_SHADER_CACHE_DIR (or, with --mesa off, MESA_SHADER_CACHE_DISABLE=true), so the only cache that
# differs between the two sides is Kiln's file. The sides alternate run by run.
#
# Usage: tests/bench/pipeline_cache_bench.sh [--build DIR] [--model PATH] [--runs N] [--mesa fresh|off] [-- KILN RUN ARGS]
#   --build  build folder holding app/cli/kiln (default ${KILN_BUILD_DIR:-build/release})
#   --model  ONNX model (default resources/models/tiny_cnn.onnx, the README's sample)
#   --runs   processes per side (default 5); each column is the median
#   --mesa   fresh: an empty Mesa shader cache folder per process (default); off: Mesa's cache disabled
#   after --, extra `kiln run` arguments, e.g. -- --input x=det_input.npy
# "empty": the cache path names no file (the process compiles everything and writes the file at the end of session
# creation, inside session_total_ms); "saved": a copy of a file written by one priming process.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
BUILD="${KILN_BUILD_DIR:-$ROOT/build/release}"
MODEL="$ROOT/resources/models/tiny_cnn.onnx"
RUNS=5 MESA=fresh
EXTRA=()
while [[ $# -gt 0 ]]; do
  case "$1" in
    --build) BUILD="$2"; shift 2 ;;
    --model) MODEL="$2"; shift 2 ;;
    --runs) RUNS="$2"; shift 2 ;;
    --mesa) MESA="$2"; shift 2 ;;
    --) shift; EXTRA=("$@"); break ;;
    -h|--help) sed -n '2,16p' "$0"; exit 0 ;;
    *) echo "pipeline_cache_bench: unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
done
[[ "$MESA" == fresh || "$MESA" == off ]] || { echo "pipeline_cache_bench: --mesa takes fresh or off" >&2; exit 2; }
KILN="$BUILD/app/cli/kiln"
[[ -x "$KILN" ]] || { echo "pipeline_cache_bench: $KILN not found; build target kiln" >&2; exit 1; }
[[ -f "$MODEL" ]] || { echo "pipeline_cache_bench: no model at $MODEL" >&2; exit 1; }

WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT
export XDG_RUNTIME_DIR="$WORK/runtime" XDG_CACHE_HOME="$WORK/xdg"
mkdir -p "$XDG_RUNTIME_DIR" && chmod 700 "$XDG_RUNTIME_DIR"

# One fresh process; appends "SIDE JSON" to the results. The cache file is $2 (absent for the empty side).
measure() {
  local side="$1" cache="$2" mesa=() json
  if [[ "$MESA" == off ]]; then mesa=(MESA_SHADER_CACHE_DISABLE=true); else mesa=(MESA_SHADER_CACHE_DIR="$(mktemp -d "$WORK/mesa.XXXX")"); fi
  json="$(env "${mesa[@]}" "$KILN" run "$MODEL" --ep vulkan --json \
            --config "kiln.vulkan.pipeline_cache_path=$cache" ${EXTRA[@]+"${EXTRA[@]}"})"
  echo "$side $(tr -d '\n ' <<<"$json")" >>"$WORK/results"
}

measure prime "$WORK/saved.vkcache"  # writes the file the saved side starts from
[[ -f "$WORK/saved.vkcache" ]] || { echo "pipeline_cache_bench: the priming run wrote no cache file" >&2; exit 1; }
echo "pipeline_cache_bench: $(basename "$MODEL"), $RUNS runs per side, Mesa cache $MESA," \
     "cache file $(stat -c %s "$WORK/saved.vkcache") bytes, $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)" >&2
for ((run = 1; run <= RUNS; ++run)); do
  measure empty "$WORK/empty.$run.vkcache"
  cp "$WORK/saved.vkcache" "$WORK/saved.$run.vkcache"
  measure saved "$WORK/saved.$run.vkcache"
done

/usr/bin/python3 - "$WORK/results" <<'PY'
import json, statistics, sys
sides = {"empty": [], "saved": []}
for line in open(sys.argv[1]):
    side, text = line.split(" ", 1)
    if side in sides:
        sides[side].append(json.loads(text))
def median(side, group, key):
    return statistics.median(r[group][key] for r in sides[side])
print(f"{'median over runs':<24}{'empty':>12}{'saved':>12}{'empty/saved':>14}")
for key in ["session_total_ms", "glslang_ms", "pipeline_create_ms", "device_create_ms", "first_run_ms"]:
    e, s = median("empty", "timings", key), median("saved", "timings", key)
    ratio = f"{e / s:.2f}" if s > 0 else "-"
    print(f"{key:<24}{e:>12.2f}{s:>12.2f}{ratio:>14}")
for key in ["glslang_compiles", "pipeline_cache_hits", "pipeline_cache_misses", "pipelines_created"]:
    print(f"{key:<24}{median('empty', 'counters', key):>12.0f}{median('saved', 'counters', key):>12.0f}")
e = median("empty", "timings", "session_total_ms") + median("empty", "timings", "first_run_ms")
s = median("saved", "timings", "session_total_ms") + median("saved", "timings", "first_run_ms")
print(f"{'creation + first run':<24}{e:>12.2f}{s:>12.2f}{e / s:>14.2f}")
PY
