#!/usr/bin/env bash
# The Debian packages test: runs cpack (DEB) on a built Kiln tree, checks the split (names, contents,
# dependencies between the packages, no Qt for a headless install), then builds the find_package(Kiln) consumer
# against the runtime and -dev packages' contents extracted with dpkg-deb -x (nothing is installed on the machine).
#
# Usage: check_packages.sh CPACK CMAKE BUILD_DIR WORK_DIR MODEL VERSION STUDIO
#   CPACK, CMAKE   the cpack and cmake executables that belong to BUILD_DIR
#   BUILD_DIR      the Kiln build tree (already built)
#   WORK_DIR       scratch folder, emptied first: packages/, root/ (extracted packages), consumer/
#   MODEL          .onnx model the consumer runs
#   VERSION        the project version the packages carry
#   STUDIO         1 when kiln-studio is built (then four packages, else three)
set -euo pipefail

if [[ $# -ne 7 ]]; then
  sed -n '2,/^set /{/^#/p}' "$0" | sed 's/^# \{0,1\}//' >&2
  exit 2
fi
cpack="$1" cmake="$2" build_dir="$3" work_dir="$4" model="$5" version="$6" studio="$7"
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
fail() { echo "packages test FAILED: $*" >&2; exit 1; }
# `producer | has ARGS` is `producer | grep -q ARGS` without the race: grep -q exits at its first match, and under
# pipefail a producer still writing then dies of SIGPIPE and fails the pipeline (the flaky "completion does not
# offer kiln compile"). has reads everything first.
has() { local text; text="$(cat)"; grep -q "$@" <<<"${text}"; }

rm -rf "${work_dir}"
mkdir -p "${work_dir}/packages" "${work_dir}/root"
packages="${work_dir}/packages"

# 1. cpack, DEB only, into the scratch folder.
echo "== cpack -G DEB"
if ! (cd "${build_dir}" && "${cpack}" -G DEB -D "CPACK_OUTPUT_FILE_PREFIX=${packages}") >"${work_dir}/cpack.log" 2>&1; then
  cat "${work_dir}/cpack.log" >&2
  fail "cpack failed"
fi
runtime_deb="$(ls "${packages}"/libkiln-engine[0-9]*_"${version}"_*.deb)"
dev_deb="$(ls "${packages}"/libkiln-engine-dev_"${version}"_*.deb)"
cli_deb="$(ls "${packages}"/kiln_"${version}"_*.deb)"
runtime_name="$(dpkg-deb -f "${runtime_deb}" Package)"
count="$(ls "${packages}"/*.deb | wc -l)"
expected=3
[[ "${studio}" == 1 ]] && expected=4
[[ "${count}" -ge "${expected}" ]] || fail "${count} .deb files, expected ${expected}: $(ls "${packages}")"
ls -l "${packages}"/*.deb

# 2. Dependencies between our packages, and none of the headless ones on Qt.
depends() { dpkg-deb -f "$1" Depends; }
for deb in "${dev_deb}" "${cli_deb}"; do
  depends "${deb}" | has "${runtime_name} (= ${version})" \
    || fail "$(basename "${deb}") does not depend on ${runtime_name} (= ${version}): $(depends "${deb}")"
done
for deb in "${runtime_deb}" "${cli_deb}"; do
  if depends "${deb}" | has -i 'qt'; then fail "$(basename "${deb}") depends on Qt: $(depends "${deb}")"; fi
done
depends "${runtime_deb}" | has 'libvulkan1' || fail "the runtime package lacks its shlibdeps: $(depends "${runtime_deb}")"
# The int8 kernels run on oneDNN (linked privately): the runtime package must pull it in.
depends "${runtime_deb}" | has 'libdnnl2' || fail "the runtime package does not depend on libdnnl2: $(depends "${runtime_deb}")"
if [[ "${studio}" == 1 ]]; then
  studio_deb="$(ls "${packages}"/kiln-studio_"${version}"_*.deb)"
  depends "${studio_deb}" | has "${runtime_name} (= ${version})" || fail "kiln-studio does not depend on the runtime"
  depends "${studio_deb}" | has -i 'libqt6' || fail "kiln-studio does not depend on Qt: $(depends "${studio_deb}")"
fi

# 3. Contents: each file in the package it belongs to.
contents() { dpkg-deb -c "$1" | awk '{print $6}' | sed 's#^\./#/#'; }
expect_file() {  # DEB REGEX
  contents "$1" | grep -Eq "$2" || fail "$(basename "$1") has no file matching $2"
}
refuse_file() {
  if contents "$1" | grep -Eq "$2"; then fail "$(basename "$1") holds $(contents "$1" | grep -E "$2" | head -1)"; fi
}
expect_file "${runtime_deb}" '^/usr/lib/.*libkiln_engine\.so\.[0-9]+$'
refuse_file "${runtime_deb}" '^/usr/(include|bin)/|libkiln_engine\.so$'
expect_file "${dev_deb}" '^/usr/include/kiln/session\.h$'
expect_file "${dev_deb}" '^/usr/include/kiln/export\.h$'
expect_file "${dev_deb}" '^/usr/lib/.*cmake/Kiln/KilnConfig\.cmake$'
expect_file "${dev_deb}" '^/usr/lib/.*libkiln_engine\.so$'
expect_file "${cli_deb}" '^/usr/bin/kiln$'
if [[ "${studio}" == 1 ]]; then
  # Desktop integration: a menu entry, its icon, AppStream metainfo and the .onnx MIME type, all in kiln-studio.
  expect_file "${studio_deb}" '^/usr/share/applications/kiln-studio\.desktop$'
  expect_file "${studio_deb}" '^/usr/share/icons/hicolor/scalable/apps/kiln-studio\.svg$'
  expect_file "${studio_deb}" '^/usr/share/metainfo/org\.kiln\.Studio\.metainfo\.xml$'
  expect_file "${studio_deb}" '^/usr/share/mime/packages/kiln-studio\.xml$'
  refuse_file "${cli_deb}" '^/usr/share/(applications|icons|metainfo|mime)/'
fi
refuse_file "${cli_deb}" '^/usr/bin/kiln-studio$|^/usr/lib/'
expect_file "${cli_deb}" '^/usr/share/bash-completion/completions/kiln$'
expect_file "${cli_deb}" '^/usr/share/zsh/vendor-completions/_kiln$'
expect_file "${cli_deb}" '^/usr/share/man/man1/kiln\.1\.gz$'
# A man page for every command `kiln --help` lists.
# The packaged kiln runs from the packages' files alone (RPATH $ORIGIN/../lib reaches the runtime package's library).
for deb in "${runtime_deb}" "${dev_deb}" "${cli_deb}"; do dpkg-deb -x "${deb}" "${work_dir}/root"; done
kiln="${work_dir}/root/usr/bin/kiln"
[[ "$(env -u LD_LIBRARY_PATH "${kiln}" --version)" == "kiln ${version}" ]] || fail "the packaged kiln does not run"
commands="$(env -u LD_LIBRARY_PATH "${kiln}" --help | sed -n '/^Subcommands:/,$p' | awk 'NR > 1 && NF {print $1}')"
[[ -n "${commands}" ]] || fail "kiln --help lists no subcommands"
for command in ${commands}; do
  page="${work_dir}/root/usr/share/man/man1/kiln-${command}.1.gz"
  [[ -f "${page}" ]] || fail "no man page for kiln ${command}"
  # Every option of the command's --help appears in its page.
  for option in $(env -u LD_LIBRARY_PATH "${kiln}" "${command}" --help | grep -oE '^ +--?[a-z][a-z0-9-]*' | tr -d ' '); do
    zcat "${page}" | sed 's/\\-/-/g' | has -e "${option}" || fail "kiln-${command}.1 does not mention ${option}"
  done
done
bash -n "${work_dir}/root/usr/share/bash-completion/completions/kiln" || fail "the bash completion is not valid bash"
if command -v zsh >/dev/null; then  # zsh is not a build dependency: checked where it is installed
  zsh -n "${work_dir}/root/usr/share/zsh/vendor-completions/_kiln" || fail "the zsh completion is not valid zsh"
fi
# The completion offers a command's options and an option's choices.
completion_of() {  # WORDS... -> the completion's candidates for the last word
  bash -c 'source "$1"; shift; COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); _kiln; printf "%s\n" "${COMPREPLY[@]}"' \
    _ "${work_dir}/root/usr/share/bash-completion/completions/kiln" "$@"
}
candidates="$(completion_of kiln conformance --e)"
grep -qx -- '--ep' <<<"${candidates}" ||
  fail "bash completion does not offer kiln conformance --ep (offers: ${candidates//$'\n'/ }; file: $(wc -c <"${work_dir}/root/usr/share/bash-completion/completions/kiln") bytes)"
[[ "$(completion_of kiln conformance --ep v)" == vulkan ]] || fail "bash completion does not offer --ep vulkan"
completion_of kiln co | has -x compile || fail "bash completion does not offer kiln compile"
echo "man pages and completion: $(echo ${commands} | wc -w) commands"

# python3-kiln, when the Python package is built: depends on the runtime and imports from the packages' files alone
# (RPATH from dist-packages/kiln reaches the runtime package's library).
python_deb="$(ls "${packages}"/python3-kiln_"${version}"_*.deb 2>/dev/null || true)"
if [[ -n "${python_deb}" ]]; then
  depends "${python_deb}" | has "${runtime_name} (= ${version})" || fail "python3-kiln does not depend on the runtime"
  depends "${python_deb}" | has "python3-numpy" || fail "python3-kiln does not depend on python3-numpy"
  expect_file "${python_deb}" '^/usr/lib/python3/dist-packages/kiln/__init__\.py$'
  expect_file "${python_deb}" '^/usr/lib/python3/dist-packages/kiln/_kiln\..*\.so$'
  dpkg-deb -x "${python_deb}" "${work_dir}/root"
  providers="$(env -u LD_LIBRARY_PATH PYTHONPATH="${work_dir}/root/usr/lib/python3/dist-packages" /usr/bin/python3 -c \
    'import kiln; print(",".join(kiln.get_available_providers()))')" || fail "the packaged kiln module does not import"
  [[ "${providers}" == "VulkanExecutionProvider,CPUExecutionProvider" ]] || fail "kiln.get_available_providers(): ${providers}"
  echo "python3-kiln: imports, providers ${providers}"
fi

# No path of this source or build tree in any packaged file (programs find their data relative to themselves).
source_dir="$(sed -n 's/^CMAKE_HOME_DIRECTORY:INTERNAL=//p' "${build_dir}/CMakeCache.txt")"
mkdir -p "${work_dir}/all"
for deb in "${packages}"/*.deb; do dpkg-deb -x "${deb}" "${work_dir}/all"; done
# A path counts where it starts (not inside a longer one) and goes on into the tree: a checkout at /kiln must not
# match /usr/share/kiln/ (seen in the pristine-root CI, whose checkout is /kiln).
regex_quote() { sed 's/[][\.*^$()+?{}|]/\\&/g' <<<"$1"; }
build_tree="$(cd "${build_dir}" && pwd)"
if grep -rlaE "(^|[^A-Za-z0-9_.~/-])$(regex_quote "${build_tree}")/" "${work_dir}/all"; then
  fail "packaged files contain the path ${build_tree}"
fi
if [[ -n "${source_dir}" ]] &&
   grep -rlaE "(^|[^A-Za-z0-9_.~/-])$(regex_quote "${source_dir}")/(engine|app|tests|resources|shaders|installer)/" \
     "${work_dir}/all"; then
  fail "packaged files contain the path ${source_dir}"
fi

# 4. A headless server: installing the CLI and the runtime (recommended packages included) on a machine where
#    nothing is installed yet (an empty dpkg status) pulls in no Qt package.
empty_status="${work_dir}/empty-status"
: >"${empty_status}"
if ! apt-get install --simulate -o Dir::State::status="${empty_status}" -o Debug::NoLocking=1 \
    "${cli_deb}" "${runtime_deb}" >"${work_dir}/apt.log" 2>&1; then
  cat "${work_dir}/apt.log" >&2
  fail "apt-get install --simulate of kiln + ${runtime_name} failed (no package lists? run apt-get update)"
fi
grep -q '^Inst kiln ' "${work_dir}/apt.log" || fail "apt-get --simulate did not plan to install kiln"
if grep -Ei '^Inst [^ ]*qt' "${work_dir}/apt.log"; then fail "installing kiln + ${runtime_name} pulls in Qt"; fi
echo "apt-get --simulate: $(grep -c '^Inst ' "${work_dir}/apt.log") packages, none of them Qt"

# 5. The consumer, built against the runtime and -dev packages' files (extracted above with the CLI's).
bash "${here}/run_consumer_test.sh" "${cmake}" "${work_dir}/root/usr" "${work_dir}/consumer" "${model}" "${version}"
