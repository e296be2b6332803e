#!/usr/bin/env bash
# Session creation from a compiled model against the raw-Vulkan floor (kiln_vulkan_floor) and against a cold
# session from the plain .onnx, in fresh processes, as medians and ratios measured in one run. Not a test.
#
# Usage: tests/bench/epcontext_bench.sh MODEL [RUNS] [-- KILN RUN ARGS]
#   MODEL  an .onnx file (copied into a temporary folder and compiled there with `kiln compile`; models with
#          external data files are not supported)
#   RUNS   fresh processes per side (default 7); each figure is the median
#   after --, extra `kiln run` arguments for both kiln sides, e.g. -- --shape x=1x3x640x640
#   KILN_BUILD_DIR   build folder holding app/cli/kiln and tests/bench/kiln_vulkan_floor (default build/release)
#   KILN_BENCH_DEVICE  a Vulkan device index or name for every side (default: the engine's choice for --ep vulkan)
#
# Sides, alternating run by run:
#   cold   `kiln run MODEL --ep vulkan --json --no-pipeline-cache`: timings.session_total_ms
#   floor  `kiln_vulkan_floor <stem>_vulkan.bin --json`: total_ms (instance + device, file read, pipelines, uploads)
#   ctx    `kiln run <stem>_ctx.onnx --ep vulkan --json --no-pipeline-cache`: timings.session_total_ms, measured when
#          `kiln compile` wrote <stem>_ctx.onnx beside the binary (EPContext models); until then "ctx" is null
#   warm   informative: kiln_vulkan_floor_reference (when built) compiles MODEL in-process, then times the engine's
#          createSessionFromBinary of the same binary: the engine's binary load today, but with the Vulkan instance
#          already created, so its ratio is against the floor without instance creation
# Caches are controlled the same way for every side: each process gets a fresh, empty MESA_SHADER_CACHE_DIR (on
# lavapipe Mesa compiles at the first dispatch, so this matters for first_run_ms, not session creation; with Mesa's
# GPU drivers it keeps their disk cache from serving pipeline creation; NVIDIA's __GL_SHADER_DISK_CACHE_PATH gets
# the same fresh folder), and no Kiln pipeline cache file is read or written (--no-pipeline-cache; the floor uses
# one empty VkPipelineCache, as the engine does without a file). The file system cache is warm for every side (the
# model and the binary were just written).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
BUILD="${KILN_BUILD_DIR:-$ROOT/build/release}"
[[ $# -ge 1 && "$1" != -h && "$1" != --help ]] || { awk 'NR > 1 && !/^#/ { exit } NR > 1' "$0"; exit 2; }
MODEL="$1"; shift
RUNS=7
if [[ $# -gt 0 && "$1" != -- ]]; then RUNS="$1"; shift; fi
EXTRA=()
if [[ $# -gt 0 ]]; then
  [[ "$1" == -- ]] || { echo "epcontext_bench: expected -- before kiln run arguments, got '$1'" >&2; exit 2; }
  shift; EXTRA=("$@")
fi
[[ "$RUNS" =~ ^[1-9][0-9]*$ ]] || { echo "epcontext_bench: RUNS must be a positive number, got '$RUNS'" >&2; exit 2; }
KILN="$BUILD/app/cli/kiln" FLOOR="$BUILD/tests/bench/kiln_vulkan_floor"
REFERENCE="$BUILD/tests/bench/kiln_vulkan_floor_reference"
for tool in "$KILN" "$FLOOR"; do
  [[ -x "$tool" ]] || { echo "epcontext_bench: $tool not found; build targets kiln and kiln_vulkan_floor" >&2; exit 1; }
done
[[ -f "$MODEL" ]] || { echo "epcontext_bench: no model at $MODEL" >&2; exit 1; }

WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT
export XDG_RUNTIME_DIR="$WORK/runtime" XDG_CACHE_HOME="$WORK/xdg"
mkdir -p "$XDG_RUNTIME_DIR" && chmod 700 "$XDG_RUNTIME_DIR"
DEVICE=() KILN_DEVICE=()
if [[ -n "${KILN_BENCH_DEVICE:-}" ]]; then
  DEVICE=(--device "$KILN_BENCH_DEVICE") KILN_DEVICE=(--config "kiln.vulkan.device=$KILN_BENCH_DEVICE")
fi

STEM="$(basename "$MODEL" .onnx)"
SOURCE="$WORK/$STEM.onnx"
cp "$MODEL" "$SOURCE"
BINARY="$WORK/${STEM}_vulkan.bin"
# (c) the slot for session creation from the ctx model: the file `kiln compile` writes beside the binary once
# EPContext models land (override with KILN_CTX_MODEL to point at one made another way).
CTX_MODEL="${KILN_CTX_MODEL:-$WORK/${STEM}_ctx.onnx}"

# Runs "$@" with fresh, empty driver shader caches.
mesa() {
  local dir
  dir="$(mktemp -d "$WORK/mesa.XXXX")"
  MESA_SHADER_CACHE_DIR="$dir" __GL_SHADER_DISK_CACHE_PATH="$dir" "$@"
}
mesa "$KILN" compile "$SOURCE" ${KILN_DEVICE[@]+"${KILN_DEVICE[@]}"} --json >"$WORK/compile.json" 2>"$WORK/compile.err" \
  || { echo "epcontext_bench: kiln compile failed: $(cat "$WORK/compile.err")" >&2; exit 1; }
[[ -f "$BINARY" ]] || { echo "epcontext_bench: kiln compile wrote no $BINARY" >&2; exit 1; }
HAVE_CTX=0 HAVE_WARM=0
if [[ -f "$CTX_MODEL" ]]; then HAVE_CTX=1; fi
if [[ -x "$REFERENCE" ]]; then HAVE_WARM=1; fi
echo "epcontext_bench: $STEM, $RUNS runs per side, binary $(stat -c %s "$BINARY") bytes, ctx model:" \
     "$([[ $HAVE_CTX == 1 ]] && echo "$CTX_MODEL" || echo "none yet"), $(nproc) cores," \
     "load $(cut -d' ' -f1-3 /proc/loadavg)" >&2

# One fresh process; appends "SIDE JSON" (on one line) to the results.
measure() {
  local side="$1"; shift
  local json
  json="$(mesa "$@")" || { echo "epcontext_bench: $side side failed: $*" >&2; exit 1; }
  echo "$side $(tr -d '\n' <<<"$json")" >>"$WORK/results"
}
kiln_run() {
  measure "$1" "$KILN" run "$2" --ep vulkan --json --no-pipeline-cache ${KILN_DEVICE[@]+"${KILN_DEVICE[@]}"} \
    ${EXTRA[@]+"${EXTRA[@]}"}
}
for ((run = 1; run <= RUNS; ++run)); do
  echo "epcontext_bench: run $run of $RUNS" >&2
  kiln_run cold "$SOURCE"
  measure floor "$FLOOR" "$BINARY" --json ${DEVICE[@]+"${DEVICE[@]}"}
  if [[ $HAVE_CTX == 1 ]]; then kiln_run ctx "$CTX_MODEL"; fi
  if [[ $HAVE_WARM == 1 ]]; then measure warm "$REFERENCE" "$SOURCE" "$BINARY" ${DEVICE[@]+"${DEVICE[@]}"}; fi
done

/usr/bin/python3 - "$WORK/results" "$STEM" "$RUNS" <<'PY'
import json, statistics, sys
results = {"cold": [], "floor": [], "ctx": [], "warm": []}
for line in open(sys.argv[1]):
    side, text = line.split(" ", 1)
    results[side].append(json.loads(text))

def med(side, get):
    values = [get(r) for r in results[side]]
    return round(statistics.median(values), 2) if values else None

def ratio(a, b):
    return round(a / b, 2) if a is not None and b else None

cold = med("cold", lambda r: r["timings"]["session_total_ms"])
floor = med("floor", lambda r: r["total_ms"])
ctx = med("ctx", lambda r: r["timings"]["session_total_ms"])
warm = med("warm", lambda r: r["load_wall_ms"])
floor_no_instance = med("floor", lambda r: r["total_ms"] - r["instance_create_ms"])
stages = ["device_create_ms", "file_read_ms", "pipeline_create_ms", "weight_upload_ms"]
engine_stages = ["load_ms", "shape_inference_ms", "optimize_ms", "partition_ms", "device_create_ms",
                 "kernel_select_ms", "glslang_ms", "pipeline_create_ms", "weight_prepack_ms", "weight_upload_ms",
                 "binary_read_ms", "binary_validate_ms", "first_run_ms"]
f0 = results["floor"][0]
report = {
    "model": sys.argv[2],
    "runs": int(sys.argv[3]),
    "device": f0["device"],
    "driver_info": f0["driver_info"],
    "median_ms": {"cold_session_total": cold, "floor_total": floor, "ctx_session_total": ctx,
                  "warm_binary_load": warm, "floor_total_without_instance": floor_no_instance},
    "ratios": {"cold/floor": ratio(cold, floor), "ctx/floor": ratio(ctx, floor), "ctx/cold": ratio(ctx, cold),
               "warm/floor_without_instance": ratio(warm, floor_no_instance)},
    "ctx_within_1.5x_of_floor": None if ctx is None else ctx <= 1.5 * floor,
    "floor_stages_ms": {k: med("floor", lambda r, k=k: r[k]) for k in stages + ["instance_create_ms", "locate_ms"]},
    "cold_stages_ms": {k: med("cold", lambda r, k=k: r["timings"][k]) for k in engine_stages},
    "ctx_stages_ms": {k: med("ctx", lambda r, k=k: r["timings"][k]) for k in engine_stages} if results["ctx"] else None,
    "warm_stages_ms": {k: med("warm", lambda r, k=k: r["timings"][k]) for k in engine_stages + ["session_total_ms"]}
                      if results["warm"] else None,
    "pipelines": {"floor": f0["pipelines"], "cold": results["cold"][0]["counters"]["pipelines_created"],
                  "ctx": results["ctx"][0]["counters"]["pipelines_created"] if results["ctx"] else None,
                  "warm": results["warm"][0]["counters"]["pipelines_created"] if results["warm"] else None},
    "weight_bytes": f0["weight_bytes"],
}
print(json.dumps(report, indent=2))
PY
