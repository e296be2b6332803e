#!/usr/bin/env bash
# README's main command, after the build: opens kiln-studio on the bundled sample model. On a machine with no display
# (no DISPLAY or WAYLAND_DISPLAY, e.g. over ssh or in a container) it says so and runs the headless demo instead:
# compile the sample into an EPContext model + context binary, inspect what was written, then `kiln bench` on it.
#
#   installer/demo.sh [BUILD_DIR]     (default build/release)
set -euo pipefail
cd "$(dirname "$0")/.."
build="${1:-build/release}"
sample="resources/models/tiny_cnn.onnx"
studio="$build/app/studio/kiln-studio"
kiln="$build/app/cli/kiln"

if [[ -n "${DISPLAY:-}" || -n "${WAYLAND_DISPLAY:-}" ]] && [[ -x "$studio" ]]; then
  # Launched as a user would: it finds this build's kiln and the resources through kiln-build-tree.conf beside it.
  exec "$studio" "$sample"
fi
if [[ ! -x "$kiln" ]]; then
  echo "demo: $kiln not found: build first (cmake --preset release && cmake --build --preset release)" >&2
  exit 1
fi
if [[ -x "$studio" ]]; then
  echo "demo: no display (DISPLAY and WAYLAND_DISPLAY are unset), so kiln-studio cannot open a window;" \
       "running the headless demo instead (xvfb-run $0 shows the studio on a virtual display)" >&2
else
  echo "demo: kiln-studio was not built (KILN_BUILD_STUDIO=OFF); running the headless demo" >&2
fi

out="$(mktemp -d -t kiln-demo.XXXXXX)"
echo "== kiln compile: the sample for the default Vulkan device, into $out" >&2
"$kiln" compile "$sample" -o "$out/tiny_cnn_ctx.onnx"
echo "== kiln inspect: the EPContext model and the context binary it points at" >&2
"$kiln" inspect "$out/tiny_cnn_ctx.onnx"
echo "== kiln bench: cold versus cached session creation, each run in a fresh process" >&2
"$kiln" bench "$sample" --runs 5 --work-dir "$out/bench"
echo "demo: the compiled files stay in $out" >&2
