// Float products where one side of C has at most kSkinnyMax rows or columns (batch-1 LSTM/GRU gates, a conv with a
// few output positions, as Silero VAD's): a general GEMM packs both operands on every call, which for these shapes costs
// more than the arithmetic. Here the large operand streams once from memory, unpacked, against the few small
// vectors held in cache.
#pragma once

#include <cstdint>

namespace kiln::cpu {

inline constexpr int64_t kSkinnyMax = 4;

// C[M x N] = alpha * op(A) * op(B) + beta * C (row-major, as gemm()) when the shape is one this path takes: op(A)
// not transposed with N <= kSkinnyMax, or op(B) transposed with M <= kSkinnyMax. Returns false, touching nothing,
// for any other shape. With beta == 0, C's previous contents are never read.
bool skinnyGemm(bool transA, bool transB, int64_t M, int64_t N, int64_t K, float alpha, const float* A, int64_t lda,
                const float* B, int64_t ldb, float beta, float* C, int64_t ldc);

}  // namespace kiln::cpu
