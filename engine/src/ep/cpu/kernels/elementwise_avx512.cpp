// AVX-512 twins of the float32 arithmetic runs of elementwise_common.h (Add, Sub, Mul, Div over a run, vector
// with vector or with one scalar): plain loops the compiler vectorizes sixteen lanes wide. Each lane is the one
// exactly rounded IEEE operation the Float4 loops do, so results are those of the baseline path bit for bit.
#include <cstdint>

#include "ep/cpu/kernels/cpu_isa.h"
#include "ep/cpu/kernels/elementwise_common.h"
#include "ep/cpu/kernels/gemm_helpers.h"  // KILN_ALWAYS_INLINE

namespace kiln::cpu::elementwise {
namespace {

template <class F>
KILN_ALWAYS_INLINE inline void zipRun(const float* __restrict a, const float* __restrict b, float* __restrict out,
                                      int64_t n, F f) {
  for (int64_t i = 0; i < n; ++i) out[i] = f(a[i], b[i]);
}
// Inputs may alias the output (in-place runs), so this variant makes no restrict promise.
template <class F>
KILN_ALWAYS_INLINE inline void zipRunAliased(const float* a, const float* b, float* out, int64_t n, F f) {
  for (int64_t i = 0; i < n; ++i) out[i] = f(a[i], b[i]);
}
template <class F>
KILN_ALWAYS_INLINE inline void mapRun(const float* v, float* out, int64_t n, F f) {
  for (int64_t i = 0; i < n; ++i) out[i] = f(v[i]);
}

template <class F>
KILN_ALWAYS_INLINE inline void zip(const float* a, const float* b, float* out, int64_t n, F f) {
  if (out != a && out != b) return zipRun(a, b, out, n, f);
  zipRunAliased(a, b, out, n, f);
}

}  // namespace

KILN_AVX512_TARGET void arithRunAvx512(char op, const float* a, const float* b, float* out, int64_t n) {
  switch (op) {
    case '+': return zip(a, b, out, n, [](float x, float y) { return x + y; });
    case '-': return zip(a, b, out, n, [](float x, float y) { return x - y; });
    case '*': return zip(a, b, out, n, [](float x, float y) { return x * y; });
    default: return zip(a, b, out, n, [](float x, float y) { return x / y; });
  }
}

KILN_AVX512_TARGET void arithScalarRunAvx512(char op, bool scalarFirst, float s, const float* v, float* out,
                                             int64_t n) {
  switch (op) {
    case '+':
      if (scalarFirst) return mapRun(v, out, n, [s](float x) { return s + x; });
      return mapRun(v, out, n, [s](float x) { return x + s; });
    case '*':
      if (scalarFirst) return mapRun(v, out, n, [s](float x) { return s * x; });
      return mapRun(v, out, n, [s](float x) { return x * s; });
    case '-':
      if (scalarFirst) return mapRun(v, out, n, [s](float x) { return s - x; });
      return mapRun(v, out, n, [s](float x) { return x - s; });
    default:
      if (scalarFirst) return mapRun(v, out, n, [s](float x) { return s / x; });
      return mapRun(v, out, n, [s](float x) { return x / s; });
  }
}

}  // namespace kiln::cpu::elementwise
