#!/usr/bin/env bash
# The find_package(Kiln) consumer test: builds the stand-alone project in project/ against an installed Kiln prefix
# only (check_packages.sh passes the runtime and -dev packages' contents, extracted with dpkg-deb -x), and runs it.
#
# Usage: run_consumer_test.sh CMAKE PREFIX WORK_DIR MODEL EXPECTED_VERSION [CONFIG]
#   CMAKE             the cmake executable that configured Kiln
#   PREFIX            the Kiln install prefix (holds lib/cmake/Kiln/KilnConfig.cmake)
#   WORK_DIR          scratch folder, emptied first: WORK_DIR/build (consumer build) and the logs
#   MODEL             .onnx model the consumer opens and runs
#   EXPECTED_VERSION  the version find_package and kiln::engineVersion() must report
#   CONFIG            build configuration (multi-config generators); may be empty
# Environment: CMAKE_GENERATOR and CXX are honoured for the consumer build, as cmake itself does.
set -euo pipefail

if [[ $# -lt 5 || $# -gt 6 ]]; then
  sed -n '2,/^set /{/^#/p}' "$0" | sed 's/^# \{0,1\}//' >&2
  exit 2
fi
cmake="$1"
prefix="$(cd "$2" && pwd)"
work_dir="$3"
model="$4"
expected_version="$5"
config="${6:-}"
project_dir="$(cd "$(dirname "${BASH_SOURCE[0]}")/project" && pwd)"
consumer_build="${work_dir}/build"

fail() { echo "consumer test FAILED: $*" >&2; exit 1; }
# Runs a step quietly; on failure shows its log, so ctest --output-on-failure tells the whole story.
step() {
  local name="$1"; shift
  echo "== ${name}"
  if ! "$@" >"${work_dir}/${name}.log" 2>&1; then
    cat "${work_dir}/${name}.log" >&2
    fail "step '${name}' failed: $*"
  fi
}

[[ -f "${model}" ]] || fail "model ${model} does not exist"
rm -rf "${work_dir}"
mkdir -p "${work_dir}"

config_args=()
[[ -n "${config}" ]] && config_args=(--config "${config}")

# 1. The prefix holds the package config.
config_file="$(find "${prefix}" -path '*/cmake/Kiln/KilnConfig.cmake' -print -quit)"
[[ -n "${config_file}" ]] || fail "no cmake/Kiln/KilnConfig.cmake under ${prefix}"

# 2. Configure + build the consumer against the prefix. Package registries are off so that nothing but
#    CMAKE_PREFIX_PATH can supply Kiln (a .deb installed in /usr must not mask a broken install tree).
configure_args=(-S "${project_dir}" -B "${consumer_build}"
  "-DCMAKE_PREFIX_PATH=${prefix}"
  -DCMAKE_FIND_USE_PACKAGE_REGISTRY=OFF
  -DCMAKE_FIND_USE_SYSTEM_PACKAGE_REGISTRY=OFF)
[[ -n "${config}" ]] && configure_args+=("-DCMAKE_BUILD_TYPE=${config}")
step configure "${cmake}" "${configure_args[@]}"
kiln_dir="$(sed -n 's/^Kiln_DIR:PATH=//p' "${consumer_build}/CMakeCache.txt")"
[[ "$(cd "${kiln_dir}" && pwd -P)" == "$(cd "${prefix}" && pwd -P)"/* ]] \
  || fail "find_package(Kiln) used ${kiln_dir}, not the install prefix ${prefix}"
grep -q "Kiln ${expected_version} from" "${work_dir}/configure.log" \
  || fail "find_package(Kiln) did not report version ${expected_version}: $(grep 'Kiln ' "${work_dir}/configure.log")"
step build "${cmake}" --build "${consumer_build}" "${config_args[@]}"

consumer="$(find "${consumer_build}" -type f -name kiln_consumer -perm -u+x -print -quit)"
[[ -n "${consumer}" ]] || fail "kiln_consumer was not built"

# 3. The consumer must load libkiln_engine from the prefix (its RPATH), not from the build tree or the system.
engine_lib="$(env -u LD_LIBRARY_PATH ldd "${consumer}" | awk '$1 ~ /^libkiln_engine\.so/ {print $3}')"
[[ -n "${engine_lib}" && "${engine_lib}" != "not" ]] || fail "ldd cannot resolve libkiln_engine for ${consumer}"
[[ "$(readlink -f "${engine_lib}")" == "$(cd "${prefix}" && pwd -P)"/* ]] \
  || fail "kiln_consumer loads ${engine_lib}, not the one installed in ${prefix}"

# 4. Run it: the version matches, the model's outputs are listed and one inference returns every output.
echo "== run ${model}"
if ! env -u LD_LIBRARY_PATH "${consumer}" "${model}" >"${work_dir}/run.log" 2>&1; then
  cat "${work_dir}/run.log" >&2
  fail "kiln_consumer ${model} exited with an error"
fi
cat "${work_dir}/run.log"
grep -qx "version ${expected_version}" "${work_dir}/run.log" \
  || fail "kiln::engineVersion() is not ${expected_version}"
outputs="$(grep -c '^output ' "${work_dir}/run.log" || true)"
results="$(grep -c '^result ' "${work_dir}/run.log" || true)"
[[ "${outputs}" -ge 1 ]] || fail "the session lists no outputs"
[[ "${results}" -eq "${outputs}" ]] || fail "run returned ${results} tensors for ${outputs} outputs"
echo "consumer test passed: ${engine_lib}"
