// What a benchmark result depends on besides the model: the machine (CPU model, cores, ISA, RAM, OS), the
// environment variables that change results, the command line and Kiln's own version. Read from the OS
// (/proc/cpuinfo, /proc/meminfo, uname, /proc/self/cmdline), so two saved results can be told apart.
#pragma once

#include <nlohmann/json.hpp>

#include <string>
#include <vector>

namespace kiln::app {

// The CPU flags that decide which kernels run (oneDNN's and Kiln's AVX-512 twins): reported as booleans.
inline constexpr const char* kReportedIsaFlags[] = {"avx2", "fma", "f16c", "avx512f", "avx512bw", "avx512_vnni",
                                                    "avx_vnni", "avx512_bf16", "amx_tile"};
// Environment variables whose names start with one of these are reported: threads (OpenMP, OpenBLAS, MKL),
// oneDNN, Kiln's own, and the Vulkan loader and Mesa drivers (lavapipe's LP_NUM_THREADS included).
inline constexpr const char* kReportedEnvironmentPrefixes[] = {"KILN_", "OMP_", "GOMP_", "KMP_", "OPENBLAS_",
                                                               "MKL_", "ONEDNN_", "DNNL_", "VK_", "MESA_", "LP_",
                                                               "RADV_", "XDG_CACHE_HOME"};

// {"cpu_model", "logical_cores", "isa": {"avx2": true, ...}, "ram_bytes", "os": {"sysname", "release", "version",
// "machine"}}; a fact the OS does not give is null.
nlohmann::json machineFacts();
// {"NAME": "value"} of every set variable matching kReportedEnvironmentPrefixes, sorted by name.
nlohmann::json resultEnvironment();
// This process's argv from /proc/self/cmdline (empty where it cannot be read).
std::vector<std::string> processCommandLine();
// {"version": "0.1.0", "git_revision": null}: the build records no revision (kiln --version prints the version only).
nlohmann::json kilnBuildFacts();

}  // namespace kiln::app
