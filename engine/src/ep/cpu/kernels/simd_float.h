// Float4: four floats in an SSE2 register, with the operators the elementwise ops use, so one op body written
// against `C` serves float, double and Float4. Explicit SIMD because GCC will not if-convert float selects
// under the default -ftrapping-math, which leaves loops like Sigmoid or LeakyRelu scalar.
// Without SSE2 (non-x86 builds) KILN_HAVE_FLOAT4 is 0 and kernels use their scalar loops.
#pragma once

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstdint>
#include <type_traits>

#if defined(__SSE2__)
#include <emmintrin.h>
#define KILN_HAVE_FLOAT4 1
#else
#define KILN_HAVE_FLOAT4 0
#endif

namespace kiln::cpu::elementwise {

// Scalar forms of the SIMD vocabulary; vmin/vmax have std::min/std::max semantics (the first operand wins
// when either is NaN), which the Float4 versions reproduce exactly.
template <class T>
  requires std::is_arithmetic_v<T>
T vmin(T a, T b) {
  return std::min(a, b);
}
template <class T>
  requires std::is_arithmetic_v<T>
T vmax(T a, T b) {
  return std::max(a, b);
}
template <class T>
T select(bool mask, T a, T b) {
  return mask ? a : b;
}

// p * 2^n for an integral-valued n in [-150, 128], in two steps so both factors stay normal floats.
inline float scaleByPow2(float p, float n) {
  const int32_t n1 = static_cast<int32_t>(n) >> 1, n2 = static_cast<int32_t>(n) - n1;
  return p * std::bit_cast<float>((n1 + 127) << 23) * std::bit_cast<float>((n2 + 127) << 23);
}

#if KILN_HAVE_FLOAT4
struct Mask4 {
  __m128 m;
};
struct Float4 {
  static constexpr int64_t kWidth = 4;
  __m128 v;
  Float4() = default;
  Float4(float s) : v(_mm_set1_ps(s)) {}  // NOLINT(implicit): broadcast, so `C(0)` and `alpha * x` work
  explicit Float4(__m128 x) : v(x) {}
  static Float4 load(const float* p) { return Float4(_mm_loadu_ps(p)); }
  void store(float* p) const { _mm_storeu_ps(p, v); }
};
inline Float4 operator+(Float4 a, Float4 b) { return Float4(_mm_add_ps(a.v, b.v)); }
inline Float4 operator-(Float4 a, Float4 b) { return Float4(_mm_sub_ps(a.v, b.v)); }
inline Float4 operator*(Float4 a, Float4 b) { return Float4(_mm_mul_ps(a.v, b.v)); }
inline Float4 operator/(Float4 a, Float4 b) { return Float4(_mm_div_ps(a.v, b.v)); }
inline Float4 operator-(Float4 a) { return Float4(_mm_xor_ps(a.v, _mm_set1_ps(-0.0f))); }
inline Mask4 operator<(Float4 a, Float4 b) { return {_mm_cmplt_ps(a.v, b.v)}; }
inline Mask4 operator<=(Float4 a, Float4 b) { return {_mm_cmple_ps(a.v, b.v)}; }
inline Mask4 operator>(Float4 a, Float4 b) { return {_mm_cmpgt_ps(a.v, b.v)}; }
inline Mask4 operator>=(Float4 a, Float4 b) { return {_mm_cmpge_ps(a.v, b.v)}; }
inline Mask4 operator==(Float4 a, Float4 b) { return {_mm_cmpeq_ps(a.v, b.v)}; }
inline Mask4 operator!=(Float4 a, Float4 b) { return {_mm_cmpneq_ps(a.v, b.v)}; }
inline Float4 select(Mask4 mask, Float4 a, Float4 b) {
  return Float4(_mm_or_ps(_mm_and_ps(mask.m, a.v), _mm_andnot_ps(mask.m, b.v)));
}
// maxps/minps return their second operand on NaN; swapping operands gives std::max/std::min behaviour.
inline Float4 vmax(Float4 a, Float4 b) { return Float4(_mm_max_ps(b.v, a.v)); }
inline Float4 vmin(Float4 a, Float4 b) { return Float4(_mm_min_ps(b.v, a.v)); }
inline Float4 vabs(Float4 a) { return Float4(_mm_andnot_ps(_mm_set1_ps(-0.0f), a.v)); }
inline Float4 vsqrt(Float4 a) { return Float4(_mm_sqrt_ps(a.v)); }
inline Float4 scaleByPow2(Float4 p, Float4 n) {
  const __m128i ni = _mm_cvttps_epi32(n.v);
  const __m128i n1 = _mm_srai_epi32(ni, 1), n2 = _mm_sub_epi32(ni, n1);
  const __m128i bias = _mm_set1_epi32(127);
  const __m128 s1 = _mm_castsi128_ps(_mm_slli_epi32(_mm_add_epi32(n1, bias), 23));
  const __m128 s2 = _mm_castsi128_ps(_mm_slli_epi32(_mm_add_epi32(n2, bias), 23));
  return Float4(_mm_mul_ps(_mm_mul_ps(p.v, s1), s2));
}
#endif

inline float vabs(float a) { return std::fabs(a); }
inline double vabs(double a) { return std::fabs(a); }
inline float vsqrt(float a) { return std::sqrt(a); }
inline double vsqrt(double a) { return std::sqrt(a); }

// exp(x) for float or Float4: Cephes expf (range reduction by ln2, degree-6 polynomial), about 1 ulp.
// Clamping to [-104, 89] makes overflow give +inf and underflow give 0 by themselves; NaN stays NaN.
template <class V>
V fastExp(V x) {
  const V c = vmin(vmax(V(-104.0f), x), V(89.0f));  // NaN becomes -104 here and is restored below
  // Round c*log2(e) to nearest with the 1.5*2^23 trick (exact under the default rounding mode).
  const V n = (c * V(1.44269504088896341f) + V(12582912.0f)) - V(12582912.0f);
  const V r = (c - n * V(0.693359375f)) + n * V(2.12194440e-4f);
  V p = V(1.9875691500e-4f);
  p = p * r + V(1.3981999507e-3f);
  p = p * r + V(8.3334519073e-3f);
  p = p * r + V(4.1665795894e-2f);
  p = p * r + V(1.6666665459e-1f);
  p = p * r + V(5.0000001201e-1f);
  p = p * r * r + r + V(1.0f);
  return select(x != x, x, scaleByPow2(p, n));
}

// tanh(x) for float or Float4: Cephes tanhf (odd polynomial below |x| = 0.625, 1 - 2/(e^2|x| + 1) above).
template <class V>
V fastTanh(V x) {
  const V ax = vabs(x);
  const V z = x * x;
  V p = V(-5.70498872745e-3f);
  p = p * z + V(2.06390887954e-2f);
  p = p * z - V(5.37397155531e-2f);
  p = p * z + V(1.33314422036e-1f);
  p = p * z - V(3.33332819422e-1f);
  const V small = p * z * x + x;
  const V big = V(1.0f) - V(2.0f) / (fastExp(V(2.0f) * ax) + V(1.0f));
  return select(ax < V(0.625f), small, select(x < V(0.0f), -big, big));
}

// erf(x) for float or Float4: x * P(x^2) / Q(x^2) on [-4, 4] (the rational approximation Eigen and
// TensorFlow use), saturating to +-1 beyond; a few ulp.
template <class V>
V fastErf(V x) {
  const V c = vmin(vmax(V(-4.0f), x), V(4.0f));
  const V z = c * c;
  V p = V(-2.72614225801306e-10f);
  p = p * z + V(2.77068142495902e-08f);
  p = p * z + V(-2.10102402082508e-06f);
  p = p * z + V(-5.69250639462346e-05f);
  p = p * z + V(-7.34990630326855e-04f);
  p = p * z + V(-2.95459980854025e-03f);
  p = p * z + V(-1.60960333262415e-02f);
  V q = V(-1.45660718464996e-05f);
  q = q * z + V(-2.13374055278905e-04f);
  q = q * z + V(-1.68282697438203e-03f);
  q = q * z + V(-7.37332916720468e-03f);
  q = q * z + V(-1.42647390514189e-02f);
  return select(x != x, x, c * p / q);
}

}  // namespace kiln::cpu::elementwise
