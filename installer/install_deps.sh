#!/usr/bin/env bash
# Installs the Debian packages listed in installer/debian-packages.txt (build, test and packaging dependencies).
#
# Usage: installer/install_deps.sh [--check | --list]
#   (no option)  install what is missing: apt-get update, then apt-get install --no-install-recommends.
#                Does nothing (and never touches apt) when every package is already installed, so it is cheap to
#                run at the start of every CI job. Runs apt as root, through sudo when not root.
#   --check      print the missing packages; exit 1 if there are any, 0 otherwise. Installs nothing.
#   --list       print the packages that apply on this machine (conditions evaluated), one per line.
# Environment: KILN_DEPS_FILE overrides the list file (default: debian-packages.txt next to this script).
set -euo pipefail

script_dir="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
deps_file="${KILN_DEPS_FILE:-${script_dir}/debian-packages.txt}"
mode="install"
case "${1:-}" in
  "") ;;
  --check) mode="check" ;;
  --list) mode="list" ;;
  -h|--help) sed -n '2,/^set /{/^#/p}' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
  *) echo "install_deps.sh: unknown option '$1' (try --help)" >&2; exit 2 ;;
esac

if [[ ! -r "${deps_file}" ]]; then
  echo "install_deps.sh: cannot read package list ${deps_file}" >&2
  exit 1
fi

log() { echo "install_deps.sh: $*" >&2; }

# True when the package is fully installed (dpkg status "ii"); half-installed or removed packages count as missing.
is_installed() {
  [[ "$(dpkg-query -W -f='${db:Status-Abbrev}' "$1" 2>/dev/null)" == "ii"* ]]
}

# NodeSource's nodejs ships npm inside it and declares a conflict with Debian's npm: never ask apt for npm then.
nodejs_bundles_npm() {
  [[ "$(dpkg-query -W -f='${Version}' nodejs 2>/dev/null)" == *nodesource* ]]
}

# Reads the list, evaluates each line's condition and prints the packages that apply here.
applicable_packages() {
  local line name condition argument
  while IFS= read -r line || [[ -n "${line}" ]]; do
    line="${line%%#*}"
    read -r name condition argument _ <<<"${line}" || true
    [[ -z "${name:-}" ]] && continue
    case "${condition:-}" in
      "") ;;
      unless-command)
        if [[ -z "${argument:-}" ]]; then
          log "${deps_file}: '${name} unless-command' needs a command name"
          exit 1
        fi
        command -v "${argument}" >/dev/null 2>&1 && continue
        ;;
      *)
        log "${deps_file}: unknown condition '${condition}' for package '${name}'"
        exit 1
        ;;
    esac
    if [[ "${name}" == "npm" ]] && nodejs_bundles_npm; then
      continue
    fi
    echo "${name}"
  done <"${deps_file}"
}

# Command substitution (not a pipe) so that a malformed list line stops the script under set -e.
package_text="$(applicable_packages)"
packages=()
[[ -n "${package_text}" ]] && mapfile -t packages <<<"${package_text}"
if [[ "${mode}" == "list" ]]; then
  printf '%s\n' "${packages[@]}"
  exit 0
fi

missing=()
for package in "${packages[@]}"; do
  is_installed "${package}" || missing+=("${package}")
done

if [[ ${#missing[@]} -eq 0 ]]; then
  log "all ${#packages[@]} packages are installed"
  exit 0
fi
if [[ "${mode}" == "check" ]]; then
  log "missing ${#missing[@]} of ${#packages[@]} packages:"
  printf '%s\n' "${missing[@]}"
  exit 1
fi

as_root=()
if [[ "$(id -u)" -ne 0 ]]; then
  if ! command -v sudo >/dev/null 2>&1; then
    log "not root and sudo is not available; run as root: ${missing[*]}"
    exit 1
  fi
  as_root=(sudo)
fi

# Wait for a concurrent apt/dpkg (unattended upgrades, another job) instead of failing on the lock.
apt_options=(-o DPkg::Lock::Timeout=600)
log "installing ${#missing[@]} missing packages: ${missing[*]}"
"${as_root[@]}" env DEBIAN_FRONTEND=noninteractive apt-get "${apt_options[@]}" update
"${as_root[@]}" env DEBIAN_FRONTEND=noninteractive apt-get "${apt_options[@]}" install -y --no-install-recommends \
  "${missing[@]}"

still_missing=()
for package in "${missing[@]}"; do
  is_installed "${package}" || still_missing+=("${package}")
done
if [[ ${#still_missing[@]} -gt 0 ]]; then
  log "apt-get finished but these packages are not installed: ${still_missing[*]}"
  exit 1
fi
log "done"
