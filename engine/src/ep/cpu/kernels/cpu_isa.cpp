#include "ep/cpu/kernels/cpu_isa.h"

#include <atomic>
#include <cstdlib>
#include <cstring>

namespace kiln::cpu {
namespace {

bool avx512Available() {
#if KILN_HAVE_AVX512_TWINS
  return !disablesAvx512(std::getenv("KILN_CPU_DISABLE_AVX512")) && __builtin_cpu_supports("avx512f");
#else
  return false;
#endif
}

std::atomic<bool>& avx512Enabled() {
  static std::atomic<bool> enabled{true};
  return enabled;
}

}  // namespace

bool disablesAvx512(const char* value) { return value && *value && std::strcmp(value, "0") != 0; }

bool cpuHasAvx512() {
  static const bool available = avx512Available();
  return available && avx512Enabled().load(std::memory_order_relaxed);
}

void setAvx512TwinsEnabled(bool enabled) { avx512Enabled().store(enabled, std::memory_order_relaxed); }

}  // namespace kiln::cpu
