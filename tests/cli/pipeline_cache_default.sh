#!/bin/sh
# `kiln run`'s default Vulkan pipeline cache, across fresh processes: --no-pipeline-cache writes nothing; the first
# run writes $XDG_CACHE_HOME/kiln/<16 hex digits>.vkcache and counts misses; the second run is served by the file
# (hits, no misses); an explicit --config kiln.vulkan.pipeline_cache_path wins over the default.
# Usage: pipeline_cache_default.sh KILN MODEL. Exit 77 (skipped) without a Vulkan device unless KILN_REQUIRE_VULKAN=1.
set -eu
KILN="$1" MODEL="$2"
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export XDG_CACHE_HOME="$work/xdg"
fail() { echo "pipeline_cache_default: $*" >&2; exit 1; }
counter() { sed -n "s/.*\"$1\": \([0-9]*\).*/\1/p" "$2"; }

if ! "$KILN" run "$MODEL" --ep vulkan --no-pipeline-cache --json >"$work/none.json" 2>"$work/none.err"; then
  [ "${KILN_REQUIRE_VULKAN:-0}" = 1 ] && fail "kiln run --ep vulkan failed: $(cat "$work/none.err")"
  echo "no Vulkan device: skipped" >&2
  exit 77
fi
[ ! -e "$XDG_CACHE_HOME/kiln" ] || fail "--no-pipeline-cache wrote $(ls "$XDG_CACHE_HOME/kiln")"

"$KILN" run "$MODEL" --ep vulkan --json >"$work/first.json"
files=$(ls "$XDG_CACHE_HOME/kiln")
echo "$files" | grep -Eqx '[0-9a-f]{16}\.vkcache' || fail "expected one <hash>.vkcache, found: $files"
[ "$(counter pipeline_cache_misses "$work/first.json")" -gt 0 ] || fail "first run counted no misses"
[ "$(counter pipeline_cache_hits "$work/first.json")" -eq 0 ] || fail "first run counted hits"

"$KILN" run "$MODEL" --ep vulkan --json >"$work/second.json"
[ "$(counter pipeline_cache_hits "$work/second.json")" -eq "$(counter pipeline_cache_misses "$work/first.json")" ] \
  || fail "second run: $(counter pipeline_cache_hits "$work/second.json") hits, expected every first-run miss"
[ "$(counter pipeline_cache_misses "$work/second.json")" -eq 0 ] || fail "second run counted misses"
[ "$(counter glslang_compiles "$work/second.json")" -eq 0 ] || fail "second run ran glslang"

"$KILN" run "$MODEL" --ep vulkan --config "kiln.vulkan.pipeline_cache_path=$work/explicit.vkcache" --json >/dev/null
[ -f "$work/explicit.vkcache" ] || fail "the explicit path was not written"
[ "$(ls "$XDG_CACHE_HOME/kiln")" = "$files" ] || fail "the default file changed beside an explicit path"
echo "pipeline_cache_default: ok"
