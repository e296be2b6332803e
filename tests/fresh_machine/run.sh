#!/usr/bin/env bash
# README.md's commands as a new user runs them, on pristine Debian 12 roots (`mmdebstrap --variant=minbase bookworm`,
# with bookworm-updates and bookworm-security as a Debian 12 install has them). This is what .ci/run runs.
#
# Stages (all by default, in this order):
#   suite     A fresh root that holds nothing but this checkout (bind-mounted at /kiln) runs README's test command,
#             taken from README.md itself.
#   fuzz      The same root runs tests/fuzz/run_fuzzers.sh (after installer/install_deps.sh, which has nothing left
#             to do after the suite).
#   demo      The same root runs README's main command (no display: the headless demo, whose summary must appear),
#             then packs the Debian packages from build/release with cpack.
#   packages  A second fresh root installs those packages with `apt-get install ./*.deb` (Debian's archive alone must
#             resolve them), runs tests/fresh_machine/package_smoke.sh as a user would, then `apt-get remove`s
#             them and checks that no file of theirs is left.
#   hygiene   `git status --porcelain` of the checkout is empty: nothing a build or test wrote is outside ignored paths.
#
# Usage: tests/fresh_machine/run.sh [--test-command-on-stdin] [STAGE...]
#   --test-command-on-stdin  read the test command from standard input (as .ci/run gives it) and refuse to run
#                            unless it is README.md's, word for word
# Needs root (mmdebstrap, mount, chroot). The only thing it installs on the host is mmdebstrap.
# Environment:
#   KILN_FRESH_CACHE   the minbase tarball (rebuilt when a week old) and apt's downloaded .deb files
#                      (default /var/cache/kiln-fresh-machine)
#   KILN_FRESH_CCACHE  the host folder mounted as the roots' ccache folder, ~/.cache/ccache (default
#                      ~/.cache/kiln-ccache; its ccache.conf gets max_size = 20G when it has none: three builds share it)
#   KILN_FRESH_KEEP=1  keep the roots afterwards (their paths are printed)
# Both caches only save time: ccache and apt key their entries by content, so a cold run gives the same result.
# Logs, the package list and kiln-studio's screenshot land in build/fresh_machine/ (the artifacts of a CI run).
set -euo pipefail
shopt -s inherit_errexit
cd "$(dirname "$0")/../.."
checkout="$PWD"
here="$checkout/tests/fresh_machine"
command_on_stdin=0
if [[ "${1:-}" == --test-command-on-stdin ]]; then
  command_on_stdin=1
  shift
fi
stages=("$@")
[[ ${#stages[@]} -eq 0 ]] && stages=(suite fuzz demo packages hygiene)
for stage in "${stages[@]}"; do
  case "$stage" in suite | fuzz | demo | packages | hygiene) ;; *)
    echo "run.sh: unknown stage '$stage' (stages: suite fuzz demo packages hygiene)" >&2
    exit 2
    ;;
  esac
done
if [[ "$(id -u)" -ne 0 ]]; then
  echo "run.sh: needs root (mmdebstrap, mount and chroot)" >&2
  exit 2
fi

cache="${KILN_FRESH_CACHE:-/var/cache/kiln-fresh-machine}"
ccache_dir="${KILN_FRESH_CCACHE:-$HOME/.cache/kiln-ccache}"
artifacts="$checkout/build/fresh_machine"
mkdir -p "$cache/apt-archives/partial" "$ccache_dir" "$artifacts"
[[ -f "$ccache_dir/ccache.conf" ]] || echo "max_size = 20G" >"$ccache_dir/ccache.conf"
log() { echo "== fresh_machine: $*" >&2; }
seconds_since() { echo $((SECONDS - $1)); }

# --- The minbase root, as a cached tarball -------------------------------------------------------------------------
tarball="$cache/bookworm-minbase.tar"
ensure_tarball() {
  if [[ -f "$tarball" && -z "$(find "$tarball" -mtime +6)" ]]; then return; fi
  if ! command -v mmdebstrap >/dev/null; then
    log "installing mmdebstrap on the host"
    DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=600 update -qq
    DEBIAN_FRONTEND=noninteractive apt-get -o DPkg::Lock::Timeout=600 install -y -qq --no-install-recommends mmdebstrap
  fi
  log "building a Debian 12 minbase root (mmdebstrap)"
  rm -rf "$cache/new.tar"
  mmdebstrap --quiet --variant=minbase bookworm "$cache/new.tar" \
    "deb http://deb.debian.org/debian bookworm main" \
    "deb http://deb.debian.org/debian bookworm-updates main" \
    "deb http://deb.debian.org/debian-security bookworm-security main"
  mv "$cache/new.tar" "$tarball"
  touch "$tarball"  # its age decides the rebuild, whatever mtime mmdebstrap gave it
}

extra_ca=/etc/kiln-fresh-machine/extra-ca.crt  # inside a root
roots=()
cleanup() {
  local root
  for root in "${roots[@]}"; do
    if [[ "${KILN_FRESH_KEEP:-0}" == 1 ]]; then
      log "kept root $root"
    # Every mount lived in a private mount namespace that is gone with its process, so nothing of the host is below
    # the root any more; --one-file-system is the second guard.
    elif ! findmnt -rn -o TARGET | grep -qF "$root"; then
      rm -rf --one-file-system "$root"
    else
      log "not deleting $root: something is still mounted below it"
    fi
  done
}
trap cleanup EXIT

new_root() {  # sets `root` to a fresh root unpacked from the tarball
  root="$(mktemp -d -p /var/tmp kiln-fresh-root.XXXXXX)"
  roots+=("$root")
  tar -C "$root" -xf "$tarball"
  # Network settings of this machine, as a user's installed system has its own: name resolution, and the extra CA
  # certificates its network needs (a TLS-inspecting proxy's: NODE_EXTRA_CA_CERTS, else the locally added ones in
  # /usr/local/share/ca-certificates), so that npm reaches its registry from the root as it does from the host.
  cp /etc/resolv.conf "$root/etc/resolv.conf"
  cp /etc/hosts "$root/etc/hosts"
  mkdir -p "$root/etc/kiln-fresh-machine"
  if [[ -n "${NODE_EXTRA_CA_CERTS:-}" && -r "$NODE_EXTRA_CA_CERTS" ]]; then
    cp "$NODE_EXTRA_CA_CERTS" "$root$extra_ca"
  elif compgen -G '/usr/local/share/ca-certificates/*.crt' >/dev/null; then
    cat /usr/local/share/ca-certificates/*.crt >"$root$extra_ca"
  fi
}

# in_root ROOT BINDS COMMAND: runs COMMAND with bash as root inside ROOT, in a private mount namespace (its mounts
# vanish with it, even when it is killed), with an environment that has nothing of the host's but CI, the fuzzers'
# time and the network's extra CA certificates (new_root). The `ci` test preset itself makes a missing Vulkan device, real model or Slurm a failure. BINDS: "HOST_PATH:ROOT_PATH[:ro]" separated by spaces.
in_root() {
  local root="$1" binds="$2" command="$3"
  unshare --mount --propagation private -- bash -euo pipefail -c '
    root="$1" binds="$2"; shift 2
    mount -t proc proc "$root/proc"
    mount --rbind /sys "$root/sys"  # with /sys/fs/cgroup, which slurmd needs, as on a booted machine
    mount --rbind /dev "$root/dev"
    mount -t tmpfs -o mode=1777,size=8g tmpfs "$root/dev/shm"
    for bind in $binds; do
      IFS=: read -r from to mode <<<"$bind"
      mkdir -p "$root$to"
      mount --bind "$from" "$root$to"
      if [[ "$mode" == ro ]]; then mount -o remount,bind,ro "$root$to"; fi
    done
    exec chroot "$root" "$@"' _ "$root" "$binds" \
    env -i HOME=/root PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin LANG=C.UTF-8 TERM=dumb \
    DEBIAN_FRONTEND=noninteractive CI="${CI:-}" KILN_FUZZ_SECONDS="${KILN_FUZZ_SECONDS:-25}" \
    $([[ -s "$root$extra_ca" ]] && echo "NODE_EXTRA_CA_CERTS=$extra_ca") \
    bash -euo pipefail -c "$command"
}

# README.md's two commands, read from README itself so that what CI runs is what a user reads: the first and second
# sh block under "## Two commands".
readme_command() {  # 1: main command, 2: test command
  awk -v want="$1" '
    /^## Two commands/ { inside = 1; next }
    inside && /^## / { exit }
    inside && /^```sh/ { block++; inblock = 1; next }
    inblock && /^```/ { inblock = 0; next }
    inblock && block == want { print }' README.md
}
main_command="$(readme_command 1)"
test_command="$(readme_command 2)"
[[ -n "$main_command" && -n "$test_command" ]] || { echo "run.sh: README.md's two commands not found" >&2; exit 1; }
if [[ "$command_on_stdin" == 1 ]]; then
  given="$(cat)"
  if [[ "$given" != "$test_command" ]]; then
    echo "run.sh: the test command given ($given) is not README.md's ($test_command)" >&2
    exit 1
  fi
fi

build_root=""
build_binds="$checkout:/kiln $ccache_dir:/root/.cache/ccache $cache/apt-archives:/var/cache/apt/archives"
want() { [[ " ${stages[*]} " == *" $1 "* ]]; }

timings=()
ensure_tarball
if want suite || want fuzz || want demo; then
  new_root
  build_root="$root"
  # ccache settings for speed (ccache reads /etc/ccache.conf; README's command installs ccache): paths under the
  # checkout are hashed relative to the build folder, so build/ci and build/release share entries, and -Werror (the ci
  # preset's only flag that release lacks) is left out of the hash. The ci build runs first and fails on any warning,
  # so the release build can only reuse objects that compiled without one.
  printf 'base_dir = /kiln\nignore_options = -Werror\n' >"$build_root/etc/ccache.conf"
  log "root for README's commands: $build_root"
fi

if want suite; then
  start=$SECONDS
  log "README's test command in a pristine root: $test_command"
  in_root "$build_root" "$build_binds" "cd /kiln && $test_command"
  timings+=("suite (README's test command): $(seconds_since "$start") s")
fi

if want fuzz; then
  start=$SECONDS
  log "the fuzzers (tests/fuzz/run_fuzzers.sh)"
  in_root "$build_root" "$build_binds" "cd /kiln && installer/install_deps.sh && tests/fuzz/run_fuzzers.sh"
  timings+=("fuzzers: $(seconds_since "$start") s")
fi

debs="$artifacts/debs"
if want demo; then
  start=$SECONDS
  log "README's main command in the same root, no display: $main_command"
  in_root "$build_root" "$build_binds" "cd /kiln && ($main_command) 2>&1" | tee "$artifacts/demo.log"
  grep -q '^demo: the compiled files stay in ' "$artifacts/demo.log" || { log "FAILED: no demo summary"; exit 1; }
  grep -q 'cold' "$artifacts/demo.log" || { log "FAILED: the demo printed no bench table"; exit 1; }
  log "the Debian packages of build/release (cpack -G DEB)"
  rm -rf "$debs"
  in_root "$build_root" "$build_binds" \
    "cd /kiln/build/release && cpack -G DEB -D CPACK_OUTPUT_FILE_PREFIX=/kiln/build/fresh_machine/debs >/dev/null"
  ls -l "$debs"/*.deb
  timings+=("demo + cpack: $(seconds_since "$start") s")
fi

if want packages; then
  start=$SECONDS
  ls "$debs"/*.deb >/dev/null 2>&1 || { echo "run.sh: no packages in $debs: run the demo stage first" >&2; exit 1; }
  new_root
  package_root="$root"
  log "installing the packages in a second pristine root: $package_root"
  rm -f "$artifacts/studio.png"
  in_root "$package_root" "$debs:/debs:ro $checkout/tests:/kiln-tests:ro $artifacts:/out \
    $cache/apt-archives:/var/cache/apt/archives" "bash /kiln-tests/fresh_machine/package_smoke.sh /debs /out"
  timings+=("packages: $(seconds_since "$start") s")
fi

if want hygiene; then
  log "git status --porcelain after the run"
  dirty="$(git -c safe.directory="$checkout" -C "$checkout" status --porcelain --ignore-submodules=none)"
  if [[ -n "$dirty" ]]; then
    echo "$dirty" >&2
    log "FAILED: the run left files that are not ignored (above): a build or test writes into the source tree"
    exit 1
  fi
fi

log "passed: ${stages[*]}"
printf '  %s\n' "${timings[@]}" >&2
