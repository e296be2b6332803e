#!/usr/bin/env bash
# Screenshots of every kiln-studio panel on a real model, on a virtual X display (Xvfb), for the docs and for
# checking layouts by eye: graph, node details, nodes table, compile (finished), the compiled graph beside its source,
# binary inspector (a section's hex view; the SPIR-V tab with the nodes that use a pipeline), the merge wizard's
# merged graph, benchmark (3 runs, 4 modes: the box
# plots, then scrolled to the latency and stage charts), About, the compile panel after a second model (the bundled
# sample) was opened; then a model with If bodies (main graph, a body with a folded constant, compiled with its
# nested EPContext nodes in a body) and a generated 10,000-node graph (collapsed, expanded, zoomed onto a node with
# the minimap). TOUR_STEPS=11,12 runs only the steps with those name prefixes; THEME=dark shoots them in the dark
# theme. After those: a model calling a local ONNX function with its body open, a node's error histogram after a
# compare run, a profiled run's time overlay, and the model diff window on two small models (make_diff_models.py).
#
#   tests/tools/studio_screenshots.sh [BUILD_DIR] [OUT_DIR] [MODEL] [BENCH_SHAPES]
# Defaults: build/ci, /tmp/kiln-studio-shots, PP-OCRv4 det from ~/.cache/kiln/models (tests/tools/fetch_models.sh),
# x=1x3x640x640. Needs xvfb-run (Debian xvfb + xauth). Prints the PNG paths; exit 1 when a panel step failed.
set -euo pipefail
cd "$(dirname "$0")/../.."
build="${1:-build/ci}"
out="${2:-/tmp/kiln-studio-shots}"
model="${3:-${XDG_CACHE_HOME:-$HOME/.cache}/kiln/models/ch_PP-OCRv4_det_infer.onnx}"
shapes="${4:-x=1x3x640x640}"
studio="$build/app/studio/kiln-studio"
[[ -x "$studio" ]] || { echo "studio_screenshots: $studio not built" >&2; exit 1; }
[[ -f "$model" ]] || { echo "studio_screenshots: no model at $model (run tests/tools/fetch_models.sh)" >&2; exit 1; }
command -v xvfb-run >/dev/null || { echo "studio_screenshots: xvfb-run missing (apt-get install xvfb xauth)" >&2; exit 1; }
rm -rf "$out" && mkdir -p "$out"
# A throw-away settings folder so the tour neither reads nor changes the user's recent files and window state.
export XDG_CONFIG_HOME="$out/.config"
mkdir -p "$out/models"
# THEME=dark (or light, system) shoots the tour in that theme (View > Theme, remembered in the settings).
if [[ -n "${THEME:-}" ]]; then
  mkdir -p "$XDG_CONFIG_HOME/Kiln" && printf '[view]\ntheme=%s\n' "$THEME" > "$XDG_CONFIG_HOME/Kiln/kiln-studio.conf"
fi
/usr/bin/python3 tests/tools/make_if_model.py "$out/models/if_model.onnx"
/usr/bin/python3 tests/tools/make_function_model.py "$out/models/function_model.onnx"
/usr/bin/python3 tests/tools/make_diff_models.py "$out/models"
/usr/bin/python3 tests/tools/make_big_graph.py "$out/models/big_10000.onnx" --nodes 10000 >/dev/null
xvfb-run -a -s "-screen 0 1600x1000x24" \
  env KILN_CLI="$(cd "$build" && pwd)/app/cli/kiln" KILN_DATA_DIR="$PWD/resources" "$studio" -platform xcb \
  --screenshot-tour "$out" --tour-shapes "$shapes" --tour-if-model "$out/models/if_model.onnx" \
  --tour-big-model "$out/models/big_10000.onnx" --tour-function-model "$out/models/function_model.onnx" \
  --tour-diff-models "$out/models/diff_a.onnx,$out/models/diff_b.onnx" ${TOUR_STEPS:+--tour-steps "$TOUR_STEPS"} "$model"
