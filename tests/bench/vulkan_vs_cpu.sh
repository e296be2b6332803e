#!/usr/bin/env bash
# PP-OCRv4 det (1x3x640x640) on Kiln's Vulkan EP against Kiln's CPU EP and onnxruntime-node, in one run, as
# ratios; then cold Vulkan session creation by stage. Not a test. On CI machines the Vulkan device is lavapipe
# (Mesa's CPU driver), so "Vulkan" here measures Kiln's shaders compiled by LLVM for the same 2 cores.
#
# Usage: tests/bench/vulkan_vs_cpu.sh [--build DIR] [--cache DIR] [--runs N] [--warmup W] [--threads T] [--rounds R]
#   --build    build folder holding tests/bench/kiln_bench (default ${KILN_BUILD_DIR:-build/release})
#   --cache    model cache (default ${KILN_CACHE_DIR:-$HOME/.cache/kiln}/models); filled by fetch_models.sh
#   --runs     timed runs per round (default 10); --warmup: untimed runs after the first (default 2)
#   --threads  CPU threads for Kiln's CPU EP and onnxruntime (default 2)
#   --rounds   the three sides alternate R times; each column is the median of the round medians (default 3)
# Cold creation: every measurement of the Vulkan side starts with an empty Mesa shader cache
# (MESA_SHADER_CACHE_DIR is a fresh folder), so first_run_ms includes lavapipe's LLVM compiles.
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
BUILD="${KILN_BUILD_DIR:-$ROOT/build/release}"
CACHE="${KILN_CACHE_DIR:-$HOME/.cache/kiln}/models"
RUNS=10 WARMUP=2 THREADS=2 ROUNDS=3
while [[ $# -gt 0 ]]; do
  case "$1" in
    --build) BUILD="$2"; shift 2 ;;
    --cache) CACHE="$2"; shift 2 ;;
    --runs) RUNS="$2"; shift 2 ;;
    --warmup) WARMUP="$2"; shift 2 ;;
    --threads) THREADS="$2"; shift 2 ;;
    --rounds) ROUNDS="$2"; shift 2 ;;
    -h|--help) sed -n '2,13p' "$0"; exit 0 ;;
    *) echo "vulkan_vs_cpu: unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
done

KILN_BENCH="$BUILD/tests/bench/kiln_bench"
[[ -x "$KILN_BENCH" ]] || { echo "vulkan_vs_cpu: $KILN_BENCH not found; build target kiln_bench" >&2; exit 1; }
"$ROOT/tests/tools/fetch_models.sh" --with-references "$CACHE" >/dev/null 2>&1 \
  || "$ROOT/tests/tools/fetch_models.sh" --with-references "$CACHE"
OCR_ARGS=("$CACHE/ch_PP-OCRv4_det_infer.onnx" --input "x=$CACHE/ref/ppocr_det/inputs/x.npy")

WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT
export XDG_RUNTIME_DIR="$WORK/runtime"; mkdir -p "$XDG_RUNTIME_DIR"; chmod 700 "$XDG_RUNTIME_DIR"
measure() {  # side
  local side="$1" json
  case "$side" in
    vulkan) json="$(MESA_SHADER_CACHE_DIR="$(mktemp -d "$WORK/mesa.XXXX")" \
                   "$KILN_BENCH" "${OCR_ARGS[@]}" --ep vulkan --runs "$RUNS" --warmup "$WARMUP" --threads "$THREADS")" ;;
    cpu) json="$("$KILN_BENCH" "${OCR_ARGS[@]}" --ep cpu --runs "$RUNS" --warmup "$WARMUP" --threads "$THREADS")" ;;
    ort) json="$(node "$ROOT/resources/bench/ort_bench.mjs" "$CACHE/ort" "${OCR_ARGS[@]}" --runs "$RUNS" --warmup "$WARMUP" \
                  --threads "$THREADS")" ;;
  esac
  echo "$side $json" >>"$WORK/results"
  echo "  $side: $json" >&2
}

echo "vulkan_vs_cpu: $ROUNDS rounds, $THREADS threads, $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg)" >&2
for ((round = 1; round <= ROUNDS; ++round)); do
  for side in vulkan cpu ort; do measure "$side"; done
done

node - "$WORK/results" <<'JS'
const fs = require('node:fs');
const sides = { vulkan: [], cpu: [], ort: [] };
for (const line of fs.readFileSync(process.argv[2], 'utf8').trim().split('\n')) {
  const space = line.indexOf(' ');
  sides[line.slice(0, space)].push(JSON.parse(line.slice(space + 1)));
}
const median = (xs) => { const s = [...xs].sort((a, b) => a - b); const m = s.length >> 1; return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2; };
const col = (side, key) => median(sides[side].map((r) => r[key]));
const f = (v) => v.toFixed(v >= 100 ? 1 : 2).padStart(10);
console.log('PP-OCRv4 det 1x3x640x640' + ['vulkan', 'kiln cpu', 'ort'].map((s) => s.padStart(10)).join(''));
for (const [key, label] of [['median_ms', 'inference ms'], ['session_create_ms', 'create ms'], ['first_run_ms', 'first run ms']]) {
  console.log(label.padEnd(24) + f(col('vulkan', key)) + f(col('cpu', key)) + f(col('ort', key)));
}
const v = col('vulkan', 'median_ms');
console.log(`ratios: vulkan/kiln-cpu ${(v / col('cpu', 'median_ms')).toFixed(2)}, vulkan/ort ${(v / col('ort', 'median_ms')).toFixed(2)}`);
console.log('cold Vulkan session creation by stage (median over rounds, ms, empty Mesa cache):');
const keys = new Set(sides.vulkan.flatMap((r) => Object.keys(r.stages)));
for (const key of keys) console.log(`  ${key.padEnd(22)}${f(median(sides.vulkan.map((r) => r.stages[key] ?? 0)))}`);
JS
