// This process's memory as the OS counts it (Linux): never an estimate. kiln bench's workers read it after each phase.
#pragma once

#include <cstdint>
#include <optional>

namespace kiln::app {

// Resident set size now (VmRSS of /proc/self/status), in KiB; absent where /proc cannot be read.
std::optional<int64_t> residentKib();
// The largest resident set size this process has had (getrusage's ru_maxrss, KiB on Linux); absent on failure.
std::optional<int64_t> peakResidentKib();

}  // namespace kiln::app
