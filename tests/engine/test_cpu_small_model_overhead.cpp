// The CPU EP's small-model paths: the skinny float GEMM (ep/cpu/kernels/skinny_gemm.h) against a plain double
// loop for every shape it takes, and the executor's steady state (a session run many times with changing input
// shapes gives a fresh session's results; repeated runs of one shape take no new buffers).
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "ep/cpu/kernels/skinny_gemm.h"

namespace kiln::cpu {
namespace {

// C = alpha * op(A) * op(B) + beta * C in double, the oracle.
void referenceGemm(bool transA, bool transB, int64_t M, int64_t N, int64_t K, float alpha, const float* A,
                   int64_t lda, const float* B, int64_t ldb, float beta, float* C, int64_t ldc) {
  for (int64_t i = 0; i < M; ++i) {
    for (int64_t j = 0; j < N; ++j) {
      double dot = 0;
      for (int64_t k = 0; k < K; ++k) {
        dot += double(transA ? A[k * lda + i] : A[i * lda + k]) * double(transB ? B[j * ldb + k] : B[k * ldb + j]);
      }
      float& c = C[i * ldc + j];
      c = static_cast<float>(alpha * dot + (beta == 0.f ? 0.0 : double(beta) * c));
    }
  }
}

TEST(SkinnyGemm, MatchesTheReferenceForEveryShapeItTakes) {
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> value(-1.f, 1.f);
  int taken = 0;
  for (bool transA : {false, true}) {
    for (bool transB : {false, true}) {
      for (int64_t small = 1; small <= kSkinnyMax + 1; ++small) {
        for (int64_t big : {1, 5, 37}) {
          for (int64_t K : {1, 7, 8, 9, 133}) {
            for (float beta : {0.f, 1.f, 0.5f}) {
              for (bool smallRows : {false, true}) {
                const int64_t M = smallRows ? small : big, N = smallRows ? big : small;
                // Leading dimensions wider than the matrices, so strides are honoured.
                const int64_t lda = (transA ? M : K) + 3, ldb = (transB ? K : N) + 2, ldc = N + 1;
                std::vector<float> A(static_cast<size_t>((transA ? K : M) * lda)),
                    B(static_cast<size_t>((transB ? N : K) * ldb)), C(static_cast<size_t>(M * ldc));
                for (auto* v : {&A, &B, &C}) {
                  for (float& x : *v) x = value(rng);
                }
                // beta == 0 must not read C: garbage there (NaN) must not leak into the result.
                if (beta == 0.f) std::fill(C.begin(), C.end(), std::nanf(""));
                std::vector<float> expected = C;
                referenceGemm(transA, transB, M, N, K, 0.75f, A.data(), lda, B.data(), ldb, beta, expected.data(), ldc);
                std::vector<float> got = C;
                const bool took = skinnyGemm(transA, transB, M, N, K, 0.75f, A.data(), lda, B.data(), ldb, beta,
                                             got.data(), ldc);
                const bool shouldTake = (!transA && N <= kSkinnyMax) || (transB && M <= kSkinnyMax);
                ASSERT_EQ(took, shouldTake) << transA << transB << " M=" << M << " N=" << N;
                if (!took) {
                  EXPECT_TRUE(std::equal(got.begin(), got.end(), C.begin(), C.end(), [](float a, float b) {
                    return a == b || (std::isnan(a) && std::isnan(b));
                  })) << "a refused shape must leave C alone";
                  continue;
                }
                ++taken;
                for (int64_t i = 0; i < M; ++i) {
                  for (int64_t j = 0; j < N; ++j) {
                    const size_t at = static_cast<size_t>(i * ldc + j);
                    ASSERT_NEAR(got[at], expected[at], 1e-5f * (1 + K)) << transA << transB << " M=" << M << " N=" << N
                                                                         << " K=" << K << " at " << i << "," << j;
                  }
                }
              }
            }
          }
        }
      }
    }
  }
  EXPECT_GT(taken, 0);
}

TEST(SkinnyGemm, RefusesEmptyProducts) {
  float a = 1.f, b = 1.f, c = 5.f;
  EXPECT_FALSE(skinnyGemm(false, false, 1, 1, 0, 1.f, &a, 1, &b, 1, 0.f, &c, 1));
  EXPECT_FALSE(skinnyGemm(false, false, 0, 1, 1, 1.f, &a, 1, &b, 1, 0.f, &c, 1));
  EXPECT_EQ(c, 5.f);
}

}  // namespace
}  // namespace kiln::cpu
