// Resident memory from /proc/self/status and getrusage (process_memory.h).
#include "process_memory.h"

#include <sys/resource.h>

#include <fstream>
#include <string>

namespace kiln::app {

std::optional<int64_t> residentKib() {
  std::ifstream status("/proc/self/status");
  for (std::string line; std::getline(status, line);) {
    if (line.rfind("VmRSS:", 0) != 0) continue;
    // "VmRSS:     12345 kB"
    try {
      return std::stoll(line.substr(6));
    } catch (...) {
      return std::nullopt;
    }
  }
  return std::nullopt;
}

std::optional<int64_t> peakResidentKib() {
  rusage usage{};
  if (getrusage(RUSAGE_SELF, &usage) != 0) return std::nullopt;
  return static_cast<int64_t>(usage.ru_maxrss);
}

}  // namespace kiln::app
