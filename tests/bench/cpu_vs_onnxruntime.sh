#!/usr/bin/env bash
# Kiln's CPU EP against onnxruntime-node on the real models, a generated dynamically quantized U-Net
# (tests/tools/make_quant_unet.py: DynamicQuantizeLinear + ConvInteger with uint8 weights) and a generated QDQ conv net
# (tests/tools/make_qdq_net.py: onnxruntime's static quantizer style), in one run, same inputs, same thread count.
# Not a test: prints a table with the ratio kiln/ort of median inference times (lower is better for Kiln), and the
# kernels each side runs: oneDNN's ISA line and int8 implementations (ONEDNN_VERBOSE=1 on one Kiln run
# of the quantized net), OpenBLAS's core type, the CPU's vector extensions (onnxruntime's MLAS dispatches on them).
#
# Usage: tests/bench/cpu_vs_onnxruntime.sh [--build DIR] [--cache DIR] [--runs N] [--vad-runs M] [--warmup W]
#                                           [--threads T] [--rounds R] [--quant-size N] [--isnet MODEL]
#                                           [--isnet-fp16 MODEL] [--onednn] [--avx2] [--level L]
#   --build    build folder holding tests/bench/kiln_bench (default ${KILN_BUILD_DIR:-build/release})
#   --cache    model cache (default ${KILN_CACHE_DIR:-$HOME/.cache/kiln}/models); filled by fetch_models.sh if needed
#   --runs     timed PP-OCRv4 det runs per round (default 20); --vad-runs: Silero VAD runs (default 500)
#   --warmup   untimed runs after the first (default 3; Silero VAD uses at least 20)
#   --rounds   kiln and ort alternate R times per model and each column reports the median of the round
#              medians, so load from other processes hits both sides alike (default 3)
#   --quant-size  side of the generated quantized U-Net's and QDQ net's 1x3xNxN input (default 256)
#   --isnet    also time this real dynamically quantized U-Net (1x3x1024x1024 input named `input`, e.g.
#              isnet_quint8.onnx from tests/tools/fetch_isnet.sh; not in the repository), 2 timed runs per round
#   --isnet-fp16  the same for its float16 sibling (isnet_fp16.onnx)
#   --onednn   also time Kiln with kiln.cpu.float_kernels=onednn (float Conv on oneDNN's primitive instead of the default
#              im2col + sgemm path) in the same rounds: columns "onednn ms" and "onednn/ort"
#   --avx2     also time Kiln with its AVX-512 twins off (KILN_CPU_DISABLE_AVX512=1: the AVX2 loops, as before the
#              twins) in the same rounds: columns "avx2 ms" and "avx2/ort"
#   --level    Kiln's kiln.graph_optimization_level (default all, onnxruntime's side runs 'all' too; basic leaves
#              out the exact QDQ drops)
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
BUILD="${KILN_BUILD_DIR:-$ROOT/build/release}"
CACHE="${KILN_CACHE_DIR:-$HOME/.cache/kiln}/models"
RUNS=20 VAD_RUNS=500 WARMUP=3 THREADS=2 ROUNDS=3 QUANT_SIZE=256 ISNET="" ISNET_FP16="" EXTRA_SIDES=() LEVEL=all
while [[ $# -gt 0 ]]; do
  case "$1" in
    --build) BUILD="$2"; shift 2 ;;
    --cache) CACHE="$2"; shift 2 ;;
    --runs) RUNS="$2"; shift 2 ;;
    --vad-runs) VAD_RUNS="$2"; shift 2 ;;
    --warmup) WARMUP="$2"; shift 2 ;;
    --threads) THREADS="$2"; shift 2 ;;
    --rounds) ROUNDS="$2"; shift 2 ;;
    --quant-size) QUANT_SIZE="$2"; shift 2 ;;
    --isnet) ISNET="$2"; shift 2 ;;
    --isnet-fp16) ISNET_FP16="$2"; shift 2 ;;
    --onednn) EXTRA_SIDES+=(onednn); shift ;;
    --avx2) EXTRA_SIDES+=(avx2); shift ;;
    --level) LEVEL="$2"; shift 2 ;;
    -h|--help) sed -n '2,27p' "$0"; exit 0 ;;
    *) echo "cpu_vs_onnxruntime: unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
done

SIDES=(kiln "${EXTRA_SIDES[@]}" ort)

KILN_BENCH="$BUILD/tests/bench/kiln_bench"
[[ -x "$KILN_BENCH" ]] || { echo "cpu_vs_onnxruntime: $KILN_BENCH not found; build target kiln_bench" >&2; exit 1; }
"$ROOT/tests/tools/fetch_models.sh" --with-references "$CACHE" >/dev/null 2>&1 \
  || "$ROOT/tests/tools/fetch_models.sh" --with-references "$CACHE"

REF="$CACHE/ref"
OCR_ARGS=("$CACHE/ch_PP-OCRv4_det_infer.onnx" --input "x=$REF/ppocr_det/inputs/x.npy")
# A voiced chunk from a zero state: every timed run does the same work.
VAD_ARGS=("$CACHE/silero_vad_v5.onnx" --input "input=$REF/silero_vad/step1/inputs/input.npy"
          --input "state=$REF/silero_vad/step0/inputs/state.npy" --input "sr=$REF/silero_vad/step0/inputs/sr.npy")
VAD_WARMUP=$(( WARMUP > 20 ? WARMUP : 20 ))

RESULTS="$(mktemp)"
WORK="$(mktemp -d)"
trap 'rm -rf "$RESULTS" "$WORK"' EXIT
/usr/bin/python3 "$ROOT/tests/tools/make_quant_unet.py" "$WORK/quant" --size "$QUANT_SIZE" >/dev/null
QUANT_ARGS=("$WORK/quant/quant_unet.onnx" --input "input=$WORK/quant/input.npy")
/usr/bin/python3 "$ROOT/tests/tools/make_qdq_net.py" "$WORK/qdq" --size "$QUANT_SIZE" >/dev/null
QDQ_ARGS=("$WORK/qdq/qdq_net.onnx" --input "input=$WORK/qdq/input.npy")
if [[ -n "$ISNET$ISNET_FP16" ]]; then
  /usr/bin/python3 -c 'import numpy as np, sys; np.save(sys.argv[1], np.random.default_rng(0).random((1, 3, 1024, 1024), dtype=np.float32))' \
    "$WORK/isnet_input.npy"
  ISNET_ARGS=("$ISNET" --input "input=$WORK/isnet_input.npy")
  ISNET_FP16_ARGS=("$ISNET_FP16" --input "input=$WORK/isnet_input.npy")
fi
# Peak resident memory of each measured process (GNU time's %M, KiB), when /usr/bin/time is installed.
PEAK=()
[[ -x /usr/bin/time ]] && PEAK=(/usr/bin/time -f %M -o "$WORK/peak_kib")
measure() {  # label side runs warmup model-args...
  local label="$1" side="$2" runs="$3" warmup="$4"; shift 4
  local json
  echo 0 >"$WORK/peak_kib"
  if [[ "$side" == kiln ]]; then
    json="$("${PEAK[@]}" "$KILN_BENCH" "$@" --runs "$runs" --warmup "$warmup" --threads "$THREADS" \
              --config "kiln.graph_optimization_level=$LEVEL")"
  elif [[ "$side" == onednn ]]; then
    json="$("${PEAK[@]}" "$KILN_BENCH" "$@" --runs "$runs" --warmup "$warmup" --threads "$THREADS" \
              --config kiln.cpu.float_kernels=onednn --config "kiln.graph_optimization_level=$LEVEL")"
  elif [[ "$side" == avx2 ]]; then
    json="$(KILN_CPU_DISABLE_AVX512=1 "${PEAK[@]}" "$KILN_BENCH" "$@" --runs "$runs" --warmup "$warmup" \
              --threads "$THREADS" --config "kiln.graph_optimization_level=$LEVEL")"
  else
    json="$("${PEAK[@]}" node "$ROOT/resources/bench/ort_bench.mjs" "$CACHE/ort" "$@" --runs "$runs" --warmup "$warmup" \
              --threads "$THREADS")"
  fi
  json="${json%\}}, \"peak_mb\": $(( $(tail -n1 "$WORK/peak_kib") / 1024 ))}"
  echo "$label $side $json" >>"$RESULTS"
  echo "  $label $side: $json" >&2
}

echo "cpu_vs_onnxruntime: $ROUNDS rounds, $THREADS threads, $(nproc) cores, load average $(cut -d' ' -f1-3 /proc/loadavg)" >&2
# Which kernels each side runs. Kiln: oneDNN's ISA and the int8 convolution implementations it picked (one verbose run
# of the quantized net); float GEMMs run on oneDNN's sgemm too (OPENBLAS_CORETYPE no longer matters). onnxruntime: MLAS picks its
# kernels from the CPU's flags, listed here.
VERBOSE="$(ONEDNN_VERBOSE=1 "$KILN_BENCH" "${QUANT_ARGS[@]}" --runs 1 --warmup 0 --threads "$THREADS" 2>&1 || true)"
echo "kiln: $(grep -m1 -o 'oneDNN v[0-9.]*' <<<"$VERBOSE" || echo '(no verbose output)'), \
$(grep -m1 -o 'isa:[^,]*' <<<"$VERBOSE" || echo 'isa: unknown')" >&2
INT8_KERNELS="$( (grep ',exec,cpu,convolution,' <<<"$VERBOSE" || true) | cut -d, -f5 | sort | uniq -c | tr -s ' ' | paste -sd';' -)"
echo "kiln: int8 convolutions: ${INT8_KERNELS:-the reference integer loops of Kiln (no oneDNN primitive ran: no VNNI?)}" >&2
echo "kiln: float GEMMs on oneDNN's sgemm (its own ISA dispatch; OPENBLAS_CORETYPE=${OPENBLAS_CORETYPE:-unset} only" \
  "affects double) (--onednn: float Conv on oneDNN's convolution primitive)" >&2
echo "ort: MLAS (cpuid dispatch); CPU: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), \
$(grep -m1 -o -w 'avx2\|avx512f\|avx512_vnni\|avx_vnni\|amx_int8' /proc/cpuinfo | sort -u | paste -sd' ' -)" >&2
for ((round = 1; round <= ROUNDS; ++round)); do
  for side in "${SIDES[@]}"; do
    measure "PP-OCRv4_det_1x3x640x640" "$side" "$RUNS" "$WARMUP" "${OCR_ARGS[@]}"
    measure "Silero_VAD_v5_1x512" "$side" "$VAD_RUNS" "$VAD_WARMUP" "${VAD_ARGS[@]}"
    measure "quant_unet_1x3x${QUANT_SIZE}x${QUANT_SIZE}" "$side" "$RUNS" "$WARMUP" "${QUANT_ARGS[@]}"
    measure "qdq_net_1x3x${QUANT_SIZE}x${QUANT_SIZE}" "$side" "$RUNS" "$WARMUP" "${QDQ_ARGS[@]}"
    if [[ -n "$ISNET" ]]; then measure "isnet_quint8_1x3x1024x1024" "$side" 2 0 "${ISNET_ARGS[@]}"; fi
    if [[ -n "$ISNET_FP16" ]]; then measure "isnet_fp16_1x3x1024x1024" "$side" 2 0 "${ISNET_FP16_ARGS[@]}"; fi
  done
done

# Median over rounds of each side's median, then the table.
node - "$RESULTS" <<'EOF'
const fs = require('node:fs');
const extras = ['onednn', 'avx2'];  // optional Kiln variants (--onednn, --avx2), each with its own two columns
const rows = new Map();
for (const line of fs.readFileSync(process.argv[2], 'utf8').trim().split('\n')) {
  const [label, side, ...json] = line.split(' ');
  const r = JSON.parse(json.join(' '));
  if (!rows.has(label)) rows.set(label, { kiln: [], ort: [], onednn: [], avx2: [] });
  rows.get(label)[side].push(r);
}
const median = (xs) => { const s = [...xs].sort((a, b) => a - b); const m = s.length >> 1; return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2; };
const fmt = (v) => (v >= 100 ? v.toFixed(1) : v >= 1 ? v.toFixed(2) : v.toFixed(3)).padStart(10);
const shown = extras.filter((e) => [...rows.values()].some((r) => r[e].length));
console.log(`${'model'.padEnd(26)}${'kiln ms'.padStart(10)}${'ort ms'.padStart(10)}${'kiln/ort'.padStart(10)}` +
            `${'kiln create'.padStart(13)}${'ort create'.padStart(12)}${'kiln 1st'.padStart(10)}${'ort 1st'.padStart(10)}` +
            `${'kiln MB'.padStart(10)}${'ort MB'.padStart(9)}` +
            shown.map((e) => `${(e + ' ms').padStart(13)}${(e + '/ort').padStart(13)}`).join(''));
for (const [label, row] of rows) {
  const { kiln, ort } = row;
  const k = median(kiln.map((r) => r.median_ms)), o = median(ort.map((r) => r.median_ms));
  console.log(`${label.padEnd(26)}${fmt(k)}${fmt(o)}${(k / o).toFixed(2).padStart(10)}` +
              `${fmt(median(kiln.map((r) => r.session_create_ms))).padStart(13)}` +
              `${fmt(median(ort.map((r) => r.session_create_ms))).padStart(12)}` +
              `${fmt(median(kiln.map((r) => r.first_run_ms)))}${fmt(median(ort.map((r) => r.first_run_ms)))}` +
              `${String(Math.max(...kiln.map((r) => r.peak_mb))).padStart(10)}` +
              `${String(Math.max(...ort.map((r) => r.peak_mb))).padStart(9)}` +
              shown.map((e) => {
                const d = median(row[e].map((r) => r.median_ms));
                return `${fmt(d).padStart(13)}${(d / o).toFixed(2).padStart(13)}`;
              }).join(''));
}
console.log('ms = median of per-round medians of single inferences; create = session creation; 1st = first inference;');
console.log('MB = the highest peak resident memory of a whole benchmark process over the rounds (0: /usr/bin/time missing)');
EOF
