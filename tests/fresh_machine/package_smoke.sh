#!/usr/bin/env bash
# The Debian packages on a pristine Debian 12 root, checked as a user would use them: tests/fresh_machine/run.sh runs
# this inside a fresh root, as root. Nothing but the packages and Debian's archive is there when they are installed;
# the tools a check needs (man, bash-completion, desktop-file-validate, a compiler) come afterwards, so they cannot
# supply a dependency the packages forgot.
#
# Usage: package_smoke.sh DEBS_DIR OUT_DIR
#   DEBS_DIR  the .deb files (libkiln-engine0, libkiln-engine-dev, kiln, kiln-studio, python3-kiln)
#   OUT_DIR   where kiln-studio's screenshot (studio.png) and the installed file list go
set -euo pipefail
debs="$1" out="$2"
tests="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
fail() { echo "package smoke FAILED: $*" >&2; exit 1; }
check() { echo "-- $*" >&2; }
# `producer | has ARGS` without grep -q's early exit killing the producer under pipefail.
has() { local text; text="$(cat)"; grep -q "$@" <<<"${text}"; }
apt() { apt-get -o DPkg::Lock::Timeout=600 -o APT::Keep-Downloaded-Packages=true -qq "$@"; }

packages=(libkiln-engine0 libkiln-engine-dev kiln kiln-studio python3-kiln)
files=()
for package in "${packages[@]}"; do
  file="$(ls "$debs/${package}"_*.deb 2>/dev/null | head -1)"
  [[ -n "$file" ]] || fail "no ${package}_*.deb in $debs"
  files+=("$file")
done
version="$(dpkg-deb -f "${files[2]}" Version)"

check "apt-get install of the five packages, Debian's archive alone resolving their dependencies"
apt update
# As a user types it: recommended packages too (mesa-vulkan-drivers gives the Vulkan EP a device without a GPU).
apt install -y "${files[@]}" >/tmp/apt-install.log 2>&1 || { cat /tmp/apt-install.log >&2; fail "apt-get install"; }
echo "installed: $(grep -c '^Setting up ' /tmp/apt-install.log) packages set up" >&2
for package in "${packages[@]}"; do dpkg -L "$package"; done | sort -u >"$out/installed-files.txt"

cd "$(mktemp -d)"
sample=/usr/share/kiln/models/tiny_cnn.onnx
[[ -f "$sample" ]] || fail "the sample model $sample is not installed"

check "kiln --version"
[[ "$(kiln --version)" == "kiln $version" ]] || fail "kiln --version: $(kiln --version)"

check "kiln devices: lavapipe from mesa-vulkan-drivers"
kiln devices | tee devices.txt
has -i 'llvmpipe' <devices.txt || fail "kiln devices lists no lavapipe device"

check "kiln compile + kiln run of the sample's ctx model on the Vulkan EP, kiln check"
kiln compile "$sample" -o ctx/tiny_cnn_ctx.onnx
[[ -f ctx/tiny_cnn_ctx.onnx && -f ctx/tiny_cnn_vulkan.bin ]] || fail "kiln compile wrote $(ls ctx)"
kiln run ctx/tiny_cnn_ctx.onnx --ep vulkan --json >run.json || fail "kiln run of the ctx model"
has '"outputs"' <run.json || fail "kiln run --json printed no outputs: $(head -c 400 run.json)"
kiln check ctx/tiny_cnn_ctx.onnx || fail "kiln check exited $?"

check "python3: import kiln, an InferenceSession on both EPs"
python3 - "$sample" <<'EOF'
import sys
import numpy as np
import kiln
path = sys.argv[1]
providers = kiln.get_available_providers()
assert providers == ["VulkanExecutionProvider", "CPUExecutionProvider"], providers
cpu = kiln.InferenceSession(path, providers=["CPUExecutionProvider"])
vulkan = kiln.InferenceSession(path, providers=["VulkanExecutionProvider", "CPUExecutionProvider"])
first = cpu.get_inputs()[0]
shape = [d if isinstance(d, int) else 1 for d in first.shape]
x = np.random.default_rng(0).standard_normal(shape).astype(np.float32)
a = cpu.run(None, {first.name: x})
b = vulkan.run(None, {first.name: x})
assert len(a) == len(b) and all(np.isfinite(o).all() for o in a)
for ours, theirs in zip(a, b):
    assert ours.shape == theirs.shape, (ours.shape, theirs.shape)
    assert np.allclose(ours, theirs, rtol=1e-3, atol=1e-4), float(np.abs(ours - theirs).max())
print("python: kiln", kiln.__version__, "outputs", [o.shape for o in a], "CPU and Vulkan agree")
EOF

check "kiln-studio starts offscreen, opens the sample and saves a screenshot"
rm -f "$out/studio.png"
QT_QPA_PLATFORM=offscreen timeout 120 kiln-studio --screenshot "$out/studio.png" "$sample" \
  || fail "kiln-studio exited $?"
[[ -s "$out/studio.png" ]] || fail "kiln-studio wrote no screenshot"
[[ "$(head -c 8 "$out/studio.png" | od -An -tx1 | tr -d ' \n')" == 89504e470d0a1a0a ]] || fail "studio.png is no PNG"

# The tools of the remaining checks, installed only now.
check "installing the checks' tools: man-db, bash-completion, desktop-file-utils, appstream, cmake, g++"
apt install -y --no-install-recommends man-db bash-completion desktop-file-utils appstream cmake g++ make \
  >/tmp/apt-tools.log 2>&1 || { cat /tmp/apt-tools.log >&2; fail "installing the checks' tools"; }

check "man kiln-compile"
MANPAGER=cat MANWIDTH=100 man kiln-compile >man.txt 2>&1 || fail "man kiln-compile: $(cat man.txt)"
has -- '--target-profile' <man.txt || fail "man kiln-compile does not document --target-profile"

check "bash completion offers the subcommands"
candidates="$(bash -c 'source /usr/share/bash-completion/bash_completion
  _completion_loader kiln
  function="$(complete -p kiln | sed -n "s/.*-F \([^ ]*\) .*/\1/p")"
  [[ -n "$function" ]] || exit 1
  COMP_WORDS=(kiln co); COMP_CWORD=1; COMP_LINE="kiln co"; COMP_POINT=${#COMP_LINE}
  "$function" kiln co kiln
  printf "%s\n" "${COMPREPLY[@]}"')" || fail "bash-completion does not load a completion for kiln"
grep -qx compile <<<"$candidates" || fail "completion of 'kiln co' offers: ${candidates//$'\n'/ }"
grep -qx conformance <<<"$candidates" || fail "completion of 'kiln co' offers: ${candidates//$'\n'/ }"

check "desktop entry and AppStream metainfo validate"
desktop-file-validate /usr/share/applications/kiln-studio.desktop
appstreamcli validate --no-net --pedantic /usr/share/metainfo/org.kiln.Studio.metainfo.xml >appstream.txt 2>&1 \
  || { cat appstream.txt >&2; fail "appstreamcli validate"; }

check "a CMake project with find_package(Kiln) builds against the installed packages and runs"
bash "$tests/consumer/run_consumer_test.sh" cmake /usr "$PWD/consumer" "$sample" "$version"

# Every file the packages installed, and anything named after Kiln outside the user's home, this check's folders and
# the root's network settings; `skip_dpkg` leaves out dpkg's own records of removed packages.
leftovers() {
  local skip_dpkg="$1" path
  while IFS= read -r path; do
    [[ -e "$path" && ! -d "$path" ]] && echo "$path"
  done <"$out/installed-files.txt"
  local prune=(/proc /sys /dev /root /tmp /kiln-tests /debs /out /var/cache/apt /etc/kiln-fresh-machine)
  [[ "$skip_dpkg" == 1 ]] && prune+=(/var/lib/dpkg)
  local expression=()
  for path in "${prune[@]}"; do expression+=(-path "$path" -o); done
  find / -xdev \( "${expression[@]:0:${#expression[@]}-1}" \) -prune -o -iname '*kiln*' -print
}

check "apt-get remove leaves no Kiln file behind (dpkg keeps the records of packages with a postrm until purge)"
apt remove -y "${packages[@]}" >/tmp/apt-remove.log 2>&1 || { cat /tmp/apt-remove.log >&2; fail "apt-get remove"; }
left="$(leftovers 1)"
[[ -z "$left" ]] || { echo "$left" >&2; fail "apt-get remove left $(wc -l <<<"$left") paths"; }

check "purging leaves nothing, not even dpkg's records"
# dpkg, not apt: apt no longer knows the packages that were removed completely (they are in no archive).
dpkg --purge "${packages[@]}" >/tmp/dpkg-purge.log 2>&1 || { cat /tmp/dpkg-purge.log >&2; fail "dpkg --purge"; }
left="$(leftovers 0)"
[[ -z "$left" ]] || { echo "$left" >&2; fail "apt-get purge left $(wc -l <<<"$left") paths"; }
echo "package smoke passed: kiln $version, five packages installed, used, removed and purged" >&2
