#include "ep/cpu/kernels/half_convert.h"

#if defined(__x86_64__) && defined(__GNUC__)
#include <cpuid.h>
#include <immintrin.h>
#define KILN_HAVE_F16C_PATH 1
#else
#define KILN_HAVE_F16C_PATH 0
#endif

namespace kiln::cpu {
namespace {

#if KILN_HAVE_F16C_PATH
__attribute__((target("avx,f16c"))) int64_t floatsToHalvesF16c(const float* in, Float16* out, int64_t n) {
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m128i half = _mm256_cvtps_ph(_mm256_loadu_ps(in + i), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
    _mm_storeu_si128(reinterpret_cast<__m128i*>(out + i), half);
  }
  return i;
}

__attribute__((target("avx,f16c"))) int64_t halvesToFloatsF16c(const Float16* in, float* out, int64_t n) {
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    _mm256_storeu_ps(out + i, _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(in + i))));
  }
  return i;
}

// F16C from CPUID leaf 1 (ECX bit 29): clang 14's __builtin_cpu_supports does not know "f16c".
bool cpuHasF16c() {
  static const bool has = [] {
    unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
    return __builtin_cpu_supports("avx") && __get_cpuid(1, &eax, &ebx, &ecx, &edx) != 0 && (ecx & bit_F16C) != 0;
  }();
  return has;
}
#endif

}  // namespace

void floatsToHalves(const float* in, Float16* out, int64_t n) {
  int64_t i = 0;
#if KILN_HAVE_F16C_PATH
  if (cpuHasF16c()) i = floatsToHalvesF16c(in, out, n);
#endif
  for (; i < n; ++i) out[i] = Float16(in[i]);
}

void halvesToFloats(const Float16* in, float* out, int64_t n) {
  int64_t i = 0;
#if KILN_HAVE_F16C_PATH
  if (cpuHasF16c()) i = halvesToFloatsF16c(in, out, n);
#endif
  for (; i < n; ++i) out[i] = in[i];
}

}  // namespace kiln::cpu
