#!/usr/bin/env bash
# Builds the `fuzz` preset (clang-14, libFuzzer, ASan + UBSan) and runs every fuzz target for a fixed time, each on a
# temporary copy of its seed corpus and regression inputs with its dictionary (nothing is written into the
# repository), then prints one table: target, executions/s, coverage (cov: and ft: of libFuzzer's last status line),
# corpus size, crashes.
# Exits 1 when any target crashed, leaked, timed out or ran out of memory; the input that did it is kept under
# build/fuzz/artifacts/<target>/ and its path (and, when small, its base64) is printed.
#
# Usage: tests/fuzz/run_fuzzers.sh [TARGET...]      (default: every target; see tests/fuzz/README.md)
# Environment: KILN_FUZZ_SECONDS   time per target (default 25)
#              KILN_FUZZ_NO_BUILD  1: skip configure + build (use build/fuzz as it is)
set -euo pipefail
cd "$(dirname "$0")/../.."
root="$PWD"
seconds="${KILN_FUZZ_SECONDS:-25}"
# ccache in its own default folder (~/.cache/ccache), the one the main build uses.
export CCACHE_BASEDIR="${CCACHE_BASEDIR:-$root}"
# The fuzz preset compiles with -g, for which ccache also hashes the working folder: a clone in a new folder would miss
# every object. Without it, only the debug info's compilation folder may name another clone (file names stay right).
export CCACHE_NOHASHDIR="${CCACHE_NOHASHDIR:-1}"

# target name -> "<binary> <corpus folder> <dictionary>"; onnx_model_vulkan is the same binary with the Vulkan EP on.
declare -A spec=(
  [onnx_model]="fuzz_onnx_model onnx_model onnx"
  [onnx_model_vulkan]="fuzz_onnx_model onnx_model onnx"
  [ctx_model]="fuzz_ctx_model ctx_model onnx"
  [context_binary]="fuzz_context_binary context_binary context_binary"
  [pipeline_cache]="fuzz_pipeline_cache pipeline_cache pipeline_cache"
  [npy]="fuzz_npy npy npy"
  [tensor_proto]="fuzz_tensor_proto tensor_proto tensor_proto"
  [batch_jobs]="fuzz_batch_jobs batch_jobs json_jobs"
  [device_profile]="fuzz_device_profile device_profile json_profile"
  [model_package]="fuzz_model_package model_package json_package"
  [studio_bridge]="fuzz_studio_bridge studio_bridge onnx"
)
order=(onnx_model onnx_model_vulkan ctx_model context_binary pipeline_cache npy tensor_proto batch_jobs device_profile
       model_package studio_bridge)
targets=("$@")
[[ ${#targets[@]} -eq 0 ]] && targets=("${order[@]}")
for target in "${targets[@]}"; do
  [[ -n "${spec[$target]:-}" ]] || { echo "run_fuzzers.sh: unknown target '$target' (known: ${order[*]})" >&2; exit 2; }
done

if [[ "${KILN_FUZZ_NO_BUILD:-0}" != 1 ]]; then
  cmake --preset fuzz >/dev/null
  cmake --build --preset fuzz
fi

# The targets write each input to a file under TMPDIR: on a disk every rewrite waits for the file system (ext4
# flushes a truncated-and-rewritten file on close), 40x slower than tmpfs, so the work folder is in /dev/shm if it can be.
work="$(mktemp -d -p /dev/shm 2>/dev/null || mktemp -d)"
trap 'rm -rf "$work"' EXIT
# Each run gets private runtime, Mesa and XDG cache folders, and its own temp folder.
export XDG_RUNTIME_DIR="$work/runtime" MESA_SHADER_CACHE_DIR="$work/mesa" XDG_CACHE_HOME="$work/xdg"
mkdir -p "$XDG_RUNTIME_DIR" && chmod 700 "$XDG_RUNTIME_DIR"
# Leaks inside the Vulkan loader and Mesa are theirs (tests/lsan.supp); anything else fails the run.
export LSAN_OPTIONS="suppressions=$root/tests/lsan.supp:print_suppressions=0"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1"
artifacts="$root/build/fuzz/artifacts"

rows=()
failed=0
for target in "${targets[@]}"; do
  read -r binary corpus dict <<<"${spec[$target]}"
  mkdir -p "$work/$target/corpus" "$work/$target/tmp" "$artifacts/$target"
  cp -r "$root/tests/fuzz/corpus/$corpus/." "$work/$target/corpus/"
  # Every committed crash input is a seed too: libFuzzer runs the seeds first, so a regression fails at once.
  [[ -d "$root/tests/fuzz/regressions/$corpus" ]] && cp -r "$root/tests/fuzz/regressions/$corpus/." "$work/$target/corpus/"
  log="$work/$target/log"
  echo "== $target: ${seconds}s"
  status=0
  env TMPDIR="$work/$target/tmp" QT_QPA_PLATFORM=offscreen KILN_FUZZ_VULKAN="$([[ $target == *_vulkan ]] && echo 1 || echo 0)" \
    "$root/build/fuzz/tests/fuzz/$binary" "$work/$target/corpus" \
      -dict="$root/tests/fuzz/dict/$dict.dict" -max_total_time="$seconds" -timeout=20 -rss_limit_mb=2560 \
      -print_final_stats=1 -artifact_prefix="$artifacts/$target/" >"$log" 2>&1 || status=$?
  # The last status line ("#N DONE cov: C ft: F corp: ... exec/s: E ...") and the final stats.
  last="$(grep -E '^#[0-9]+' "$log" | tail -1 || true)"
  cov="$(sed -nE 's/.* cov: ([0-9]+).*/\1/p' <<<"$last")"
  ft="$(sed -nE 's/.* ft: ([0-9]+).*/\1/p' <<<"$last")"
  execs="$(sed -nE 's/^stat::average_exec_per_sec: *([0-9]+).*/\1/p' "$log" | tail -1)"
  units="$(find "$work/$target/corpus" -type f | wc -l)"
  bytes="$(du -sb "$work/$target/corpus" | cut -f1)"
  crashes="$(grep -oE 'Test unit written to [^ ]+' "$log" | sed 's/Test unit written to //' || true)"
  ncrash=0
  if [[ $status -ne 0 || -n "$crashes" ]]; then
    failed=1
    ncrash="$(grep -c . <<<"$crashes" || true)"
    [[ "$ncrash" -eq 0 ]] && ncrash=1
    echo "!! $target failed (exit $status); the end of its log:"
    tail -60 "$log"
    while IFS= read -r input; do
      [[ -z "$input" ]] && continue
      echo "!! $target crash input: $input"
      if [[ -f "$input" && $(stat -c %s "$input") -le 4096 ]]; then
        echo "!! $target crash input, base64:"; base64 -w 0 "$input"; echo
      fi
    done <<<"$crashes"
  else
    echo "$last"
  fi
  rows+=("$(printf '%-18s %10s %8s %8s %9s %11s %8s' "$target" "${execs:-?}" "${cov:-?}" "${ft:-?}" "$units" "$bytes" "$ncrash")")
done

echo
echo "fuzz summary (${seconds}s per target)"
printf '%-18s %10s %8s %8s %9s %11s %8s\n' target "exec/s" cov ft "corpus" "corpus(B)" crashes
printf '%s\n' "${rows[@]}"
if [[ $failed -ne 0 ]]; then
  echo "run_fuzzers.sh: a fuzz target failed; reproduce with build/fuzz/tests/fuzz/fuzz_<target> <input> (tests/fuzz/README.md)" >&2
  exit 1
fi
