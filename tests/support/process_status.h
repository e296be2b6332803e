// What a test reads of its own process from /proc (Linux): memory figures for tests that bound peak memory.
#pragma once

#include <cstdint>
#include <fstream>
#include <string>

namespace kiln::testing {

// The kB figure of `field` in /proc/self/status ("VmHWM": peak resident memory, "VmRSS"); 0 when absent.
inline uint64_t procStatusKb(const std::string& field) {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind(field + ":", 0) == 0) return std::stoull(line.substr(field.size() + 1));
  }
  return 0;
}

}  // namespace kiln::testing
