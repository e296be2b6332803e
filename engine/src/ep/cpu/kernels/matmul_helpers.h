// Private helpers shared by the MatMul-shaped kernels (MatMul and MatMulInteger in math.cpp, QLinearMatMul
// in qlinear_ops.cpp): numpy batching, the batched GEMM loop and 8-bit zero-point removal.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ep/cpu/kernel_utils.h"
#include "ep/cpu/kernels/gemm_helpers.h"
#include "kiln/status.h"
#include "kiln/tensor.h"

namespace kiln::cpu {

// A numpy matmul of A and B: [aBatch..., M, K] x [bBatch..., K, N] -> [batch..., M, N], with 1-D operands
// promoted (A gets a leading 1, B a trailing 1) and those unit dims dropped from outShape.
struct MatMulPlan {
  int64_t M = 0, N = 0, K = 0;
  Shape batch, aBatch, bBatch;
  Shape outShape;
};

// Plans A x B; INVALID_ARGUMENT when the inner dims differ or the batch dims do not broadcast.
Result<MatMulPlan> planMatMul(const Shape& aShape, const Shape& bShape);

// Y = A x B per broadcast batch on contiguous row-major operands; `T` is float, double or an integer type.
template <class T>
void runMatMul(const MatMulPlan& p, const T* a, const T* b, T* y, ThreadPool* pool = nullptr) {
  if (shapeSize(p.bBatch) == 1) {
    // B is one matrix: fold A's batch into its rows for a single large GEMM.
    parallelGemm<T>(pool, false, false, shapeSize(p.aBatch) * p.M, p.N, p.K, T(1), a, p.K, b, p.N, T(0), y, p.N);
    return;
  }
  const int64_t aStep = p.M * p.K, bStep = p.K * p.N, yStep = p.M * p.N;
  forEachBroadcast(p.batch, p.aBatch, p.bBatch, [&](int64_t i, int64_t ia, int64_t ib) {
    parallelGemm<T>(pool, false, false, p.M, p.N, p.K, T(1), a + ia * aStep, p.K, b + ib * bStep, p.N, T(0),
                    y + i * yStep, p.N);
  });
}

// `src` (uint8 or int8) minus its zero point, widened to int32. With zpPerRow (operand A), a 1-D zero point
// holds one value per row, i.e. acts as shape [rows, 1]; otherwise the zero point broadcasts numpy-style
// (operand B: one per column). An absent or empty zero point is 0.
Result<std::vector<int32_t>> widenMatMulOperand(const Tensor& src, const Tensor* zeroPoint, bool zpPerRow);

}  // namespace kiln::cpu
