#include "ep/cpu/kernels/skinny_gemm.h"

#include <immintrin.h>

#include <vector>

#include "ep/cpu/kernels/gemm_helpers.h"

namespace kiln::cpu {
namespace {

// out(r, s) = alpha * dot(big row r, small row s) + beta * out(r, s) over K elements, for `rows` rows of `big`
// and S small rows; out(r, s) lives at C[r * rStride + s * sStride].
struct DotProblem {
  const float* big;
  int64_t ldBig, rows;
  const float* small;
  int64_t ldSmall, K;
  float alpha, beta;
  float* C;
  int64_t rStride, sStride;

  void store(int64_t r, int64_t s, float dot) const {
    float& c = C[r * rStride + s * sStride];
    c = beta == 0.f ? alpha * dot : alpha * dot + beta * c;
  }
};

template <int S>
void dotRowsBaseline(const DotProblem& p) {
  for (int64_t r = 0; r < p.rows; ++r) {
    const float* a = p.big + r * p.ldBig;
    for (int s = 0; s < S; ++s) {
      const float* b = p.small + s * p.ldSmall;
      float acc = 0.f;
      for (int64_t k = 0; k < p.K; ++k) acc += a[k] * b[k];
      p.store(r, s, acc);
    }
  }
}

#if defined(__x86_64__) && defined(__GNUC__)
KILN_AVX2_TARGET inline float horizontalSum(__m256 v) {
  const __m128 quad = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  const __m128 pair = _mm_add_ps(quad, _mm_movehl_ps(quad, quad));
  return _mm_cvtss_f32(_mm_add_ss(pair, _mm_movehdup_ps(pair)));
}

// R rows of `big` at a time against the S small rows: R * S independent accumulators keep the FMA units busy.
template <int S, int R>
KILN_AVX2_TARGET void dotBlockAvx2(const DotProblem& p, int64_t r0) {
  __m256 acc[R][S];
  for (int i = 0; i < R; ++i) {
    for (int s = 0; s < S; ++s) acc[i][s] = _mm256_setzero_ps();
  }
  const int64_t K8 = p.K / 8 * 8;
  for (int64_t k = 0; k < K8; k += 8) {
    __m256 b[S];
    for (int s = 0; s < S; ++s) b[s] = _mm256_loadu_ps(p.small + s * p.ldSmall + k);
    for (int i = 0; i < R; ++i) {
      const __m256 a = _mm256_loadu_ps(p.big + (r0 + i) * p.ldBig + k);
      for (int s = 0; s < S; ++s) acc[i][s] = _mm256_fmadd_ps(a, b[s], acc[i][s]);
    }
  }
  for (int i = 0; i < R; ++i) {
    const float* a = p.big + (r0 + i) * p.ldBig;
    for (int s = 0; s < S; ++s) {
      const float* b = p.small + s * p.ldSmall;
      float dot = horizontalSum(acc[i][s]);
      for (int64_t k = K8; k < p.K; ++k) dot += a[k] * b[k];
      p.store(r0 + i, s, dot);
    }
  }
}

template <int S>
KILN_AVX2_TARGET void dotRowsAvx2(const DotProblem& p) {
  constexpr int R = S <= 2 ? 4 : 2;
  int64_t r = 0;
  for (; r + R <= p.rows; r += R) dotBlockAvx2<S, R>(p, r);
  for (; r < p.rows; ++r) dotBlockAvx2<S, 1>(p, r);
}
#endif

template <int S>
void dotRows(const DotProblem& p) {
#if defined(__x86_64__) && defined(__GNUC__)
  if (cpuHasAvx2Fma()) return dotRowsAvx2<S>(p);
#endif
  dotRowsBaseline<S>(p);
}

// The S small vectors contiguous along K: `src` as given when already so, else a transposed copy in `buffer`.
const float* contiguousRows(const float* src, int64_t ld, bool rowsAreContiguous, int64_t count, int64_t K,
                            std::vector<float>& buffer, int64_t& ldOut) {
  if (rowsAreContiguous) {
    ldOut = ld;
    return src;
  }
  buffer.resize(static_cast<size_t>(count * K));
  for (int64_t k = 0; k < K; ++k) {
    for (int64_t s = 0; s < count; ++s) buffer[static_cast<size_t>(s * K + k)] = src[k * ld + s];
  }
  ldOut = K;
  return buffer.data();
}

}  // namespace

bool skinnyGemm(bool transA, bool transB, int64_t M, int64_t N, int64_t K, float alpha, const float* A, int64_t lda,
                const float* B, int64_t ldb, float beta, float* C, int64_t ldc) {
  if (M <= 0 || N <= 0 || K <= 0) return false;
  thread_local std::vector<float> buffer;
  DotProblem p{};
  int64_t smallCount = 0;
  if (!transA && N <= kSkinnyMax) {
    // Rows of A stream; the N columns of op(B) are the small vectors.
    smallCount = N;
    p.big = A;
    p.ldBig = lda;
    p.rows = M;
    p.small = contiguousRows(B, ldb, transB, N, K, buffer, p.ldSmall);
    p.rStride = ldc;
    p.sStride = 1;
  } else if (transB && M <= kSkinnyMax) {
    // Rows of B (columns of op(B)) stream; the M rows of op(A) are the small vectors.
    smallCount = M;
    p.big = B;
    p.ldBig = ldb;
    p.rows = N;
    p.small = contiguousRows(A, lda, !transA, M, K, buffer, p.ldSmall);
    p.rStride = 1;
    p.sStride = ldc;
  } else {
    return false;
  }
  p.K = K;
  p.alpha = alpha;
  p.beta = beta;
  p.C = C;
  switch (smallCount) {
    case 1: dotRows<1>(p); break;
    case 2: dotRows<2>(p); break;
    case 3: dotRows<3>(p); break;
    default: dotRows<4>(p); break;
  }
  return true;
}

}  // namespace kiln::cpu
