// Linear-algebra kernels: Gemm, MatMul (numpy batching), MatMulInteger, Det. Float math uses gemm_helpers.h (oneDNN sgemm; double on OpenBLAS). The
// MatMul planning and zero-point helpers declared in matmul_helpers.h live here too.
#include <cmath>
#include <memory>
#include <string>
#include <vector>

#include "ep/cpu/kernel_registry.h"
#include "ep/cpu/kernel_utils.h"
#include "ep/cpu/kernels/gemm_helpers.h"
#include "ep/cpu/kernels/matmul_helpers.h"
#include "ep/cpu/kernels/onednn_int8.h"

namespace kiln::cpu {
namespace {

// ----------------------------------------------------------------------------------------------------
// Gemm: Y = alpha * op(A) * op(B) + beta * C, C broadcast unidirectionally to (M, N).

class GemmKernel : public Kernel {
 public:
  explicit GemmKernel(const KernelInfo& info)
      : transA_(info.node.attrInt("transA", 0) != 0),
        transB_(info.node.attrInt("transB", 0) != 0),
        alpha_(info.node.attrFloat("alpha", 1.0f)),
        beta_(info.node.attrFloat("beta", 1.0f)),
        pool_(info.threadPool) {}

  Status compute(KernelContext& ctx) override {
    const Tensor* a = ctx.input(0);
    const Tensor* b = ctx.input(1);
    const Tensor* c = ctx.input(2);
    if (!a || !b) return invalidArgument("inputs A and B are required");
    if (a->rank() != 2 || b->rank() != 2) {
      return invalidArgument("A and B must be 2-D, got " + shapeToString(a->shape()) + " and " +
                             shapeToString(b->shape()));
    }
    if (a->dtype() != b->dtype() || (c && c->dtype() != a->dtype())) {
      return invalidArgument("A, B and C must have the same element type");
    }
    const int64_t M = transA_ ? a->dim(1) : a->dim(0), K = transA_ ? a->dim(0) : a->dim(1);
    const int64_t kB = transB_ ? b->dim(1) : b->dim(0), N = transB_ ? b->dim(0) : b->dim(1);
    if (K != kB) {
      return invalidArgument("inner dimensions differ: op(A) is " + std::to_string(M) + "x" +
                             std::to_string(K) + ", op(B) is " + std::to_string(kB) + "x" +
                             std::to_string(N));
    }
    if (c) {
      const Shape& cs = c->shape();
      const bool ok = cs.size() <= 2 && (cs.size() < 2 || cs[0] == 1 || cs[0] == M) &&
                      (cs.empty() || cs.back() == 1 || cs.back() == N);
      if (!ok) {
        return invalidArgument("C " + shapeToString(cs) + " does not broadcast to " + std::to_string(M) +
                               "x" + std::to_string(N));
      }
    }
    Tensor& y = ctx.allocateOutput(0, a->dtype(), {M, N});
    return dispatchType<float, double, Float16, BFloat16, int32_t, int64_t, uint32_t, uint64_t>(
        a->dtype(), [&]<class T>() {
          if constexpr (kIsHalf<T>) {
            Tensor yf(DataType::FLOAT, {M, N});
            Tensor cf = c ? toFloatTensor<T>(*c) : Tensor();
            run<float>(toFloatTensor<T>(*a), toFloatTensor<T>(*b), c ? &cf : nullptr, yf, M, N, K);
            fromFloatTensor<T>(yf, y);
          } else {
            run<T>(*a, *b, c, y, M, N, K);
          }
          return Status::ok();
        });
  }

 private:
  template <class T>
  void run(const Tensor& a, const Tensor& b, const Tensor* c, Tensor& y, int64_t M, int64_t N,
           int64_t K) const {
    T* out = y.data<T>();
    const T beta = static_cast<T>(beta_);
    const bool useC = c && c->numel() > 0 && beta != T(0);
    if (useC) {
      const Shape& cs = c->shape();
      const int64_t rowStride = cs.size() == 2 && cs[0] != 1 ? cs[1] : 0;
      const int64_t colStride = !cs.empty() && cs.back() != 1 ? 1 : 0;
      const T* cd = c->data<T>();
      for (int64_t i = 0; i < M; ++i) {
        for (int64_t j = 0; j < N; ++j) {
          out[i * N + j] = static_cast<T>(beta * cd[i * rowStride + j * colStride]);
        }
      }
    }
    parallelGemm<T>(pool_, transA_, transB_, M, N, K, static_cast<T>(alpha_), a.data<T>(), a.dim(1), b.data<T>(),
                    b.dim(1), useC ? T(1) : T(0), out, N);
  }

  bool transA_, transB_;
  float alpha_, beta_;
  ThreadPool* pool_;
};

// ----------------------------------------------------------------------------------------------------
// MatMul with numpy semantics: batch dims broadcast, 1-D operands get a dim prepended (A) or appended (B).

}  // namespace

Result<MatMulPlan> planMatMul(const Shape& aShape, const Shape& bShape) {
  if (aShape.empty() || bShape.empty()) return invalidArgument("operands must have rank >= 1");
  MatMulPlan plan;
  Shape a = aShape, b = bShape;
  if (a.size() == 1) a.insert(a.begin(), 1);
  if (b.size() == 1) b.push_back(1);
  plan.M = a[a.size() - 2];
  plan.K = a.back();
  plan.N = b.back();
  if (b[b.size() - 2] != plan.K) {
    return invalidArgument("shapes " + shapeToString(aShape) + " and " + shapeToString(bShape) +
                           " cannot be multiplied (inner dimensions differ)");
  }
  plan.aBatch.assign(a.begin(), a.end() - 2);
  plan.bBatch.assign(b.begin(), b.end() - 2);
  auto batch = broadcastShapes(plan.aBatch, plan.bBatch);
  if (!batch.isOk()) return invalidArgument("batch dimensions: " + batch.status().message());
  plan.batch = batch.value();
  plan.outShape = plan.batch;
  if (aShape.size() > 1) plan.outShape.push_back(plan.M);
  if (bShape.size() > 1) plan.outShape.push_back(plan.N);
  return plan;
}

namespace {

class MatMulKernel : public Kernel {
 public:
  explicit MatMulKernel(const KernelInfo& info) : pool_(info.threadPool) {
    // A half-precision constant B (the weights) is converted to float once, not on every run.
    const Tensor* b = info.constantInputs.size() > 1 ? info.constantInputs[1] : nullptr;
    if (b && b->dtype() == DataType::FLOAT16) floatB_ = toFloatTensor<Float16>(*b);
    if (b && b->dtype() == DataType::BFLOAT16) floatB_ = toFloatTensor<BFloat16>(*b);
  }

  Status compute(KernelContext& ctx) override {
    const Tensor* a = ctx.input(0);
    const Tensor* b = ctx.input(1);
    if (!a || !b) return invalidArgument("inputs A and B are required");
    if (a->dtype() != b->dtype()) return invalidArgument("A and B must have the same element type");
    KILN_ASSIGN_OR_RETURN(MatMulPlan plan, planMatMul(a->shape(), b->shape()));
    Tensor& y = ctx.allocateOutput(0, a->dtype(), plan.outShape);
    if (y.numel() == 0 || plan.K == 0) return Status::ok();
    return dispatchType<float, double, Float16, BFloat16, int32_t, int64_t, uint32_t, uint64_t>(
        a->dtype(), [&]<class T>() {
          if constexpr (kIsHalf<T>) {
            Tensor yf(DataType::FLOAT, plan.outShape);
            const Tensor bf = floatB_.defined() ? floatB_ : toFloatTensor<T>(*b);
            runMatMul<float>(plan, toFloatTensor<T>(*a).template data<float>(), bf.data<float>(), yf.data<float>(),
                             pool_);
            fromFloatTensor<T>(yf, y);
          } else {
            runMatMul<T>(plan, a->data<T>(), b->data<T>(), y.data<T>(), pool_);
          }
          return Status::ok();
        });
  }

 private:
  ThreadPool* pool_;
  Tensor floatB_;  // B as float when it is a half-precision constant
};

// ----------------------------------------------------------------------------------------------------
// MatMulInteger: int32 product of (A - a_zero_point) and (B - b_zero_point), 8-bit inputs.

// `src` minus its zero point, widened to int32. With zpPerRow (operand A), a 1-D zero point holds one value
// per row, i.e. acts as shape [rows, 1]; otherwise the zero point broadcasts numpy-style (B: one per column).
template <class T>
Result<std::vector<int32_t>> widenWithZeroPoint(const Tensor& src, const Tensor* zp, bool zpPerRow) {
  const int64_t n = src.numel();
  std::vector<int32_t> out(static_cast<size_t>(n));
  const T* s = src.data<T>();
  if (!zp || zp->numel() == 0) {
    for (int64_t i = 0; i < n; ++i) out[i] = s[i];
    return out;
  }
  if (zp->dtype() != src.dtype()) return invalidArgument("a zero point must have its operand's element type");
  const T* z = zp->data<T>();
  if (zp->numel() == 1) {
    for (int64_t i = 0; i < n; ++i) out[i] = int32_t(s[i]) - int32_t(z[0]);
    return out;
  }
  Shape zs = zp->shape();
  if (zpPerRow && zs.size() == 1 && src.rank() >= 2) zs.push_back(1);  // [M] zero point of an [M, K] operand
  auto bshape = broadcastShapes(src.shape(), zs);
  if (!bshape.isOk() || bshape.value() != src.shape()) {
    return invalidArgument("zero point " + shapeToString(zp->shape()) + " does not fit operand " +
                           shapeToString(src.shape()));
  }
  forEachBroadcast(src.shape(), src.shape(), zs,
                   [&](int64_t i, int64_t, int64_t iz) { out[i] = int32_t(s[i]) - int32_t(z[iz]); });
  return out;
}

// Constant B (with a constant or absent zero point) is packed for oneDNN when the kernel is created
// (onednn_int8.h); inputs it does not take (per-row a_zero_point, batched B) run the reference loops.
class MatMulIntegerKernel : public Kernel {
 public:
  explicit MatMulIntegerKernel(const KernelInfo& info) : pool_(info.threadPool) {
    const Tensor* b = info.constantInputs.size() > 1 ? info.constantInputs[1] : nullptr;
    const bool hasZeroPoint = info.node.inputs.size() > 3 && !info.node.inputs[3].empty();
    const Tensor* bZero = hasZeroPoint && info.constantInputs.size() > 3 ? info.constantInputs[3] : nullptr;
    if (b && (!hasZeroPoint || bZero)) packed_ = OneDnnInt8MatMul::create(*b, bZero);
    if (auto shape = info.staticInputShape(0); packed_ && shape) packed_->prepare(info.inputType(0), *shape, info.threadPool);
  }

  Status compute(KernelContext& ctx) override {
    const Tensor* a = ctx.input(0);
    const Tensor* b = ctx.input(1);
    if (!a || !b) return invalidArgument("inputs A and B are required");
    KILN_ASSIGN_OR_RETURN(MatMulPlan plan, planMatMul(a->shape(), b->shape()));
    if (packed_ && plan.K > 0 && shapeSize(plan.outShape) > 0) {
      Tensor& y = ctx.allocateUninitializedOutput(0, DataType::INT32, plan.outShape);
      if (packed_->run(*a, ctx.input(2), plan, y.data<int32_t>(), pool_)) return Status::ok();
    }
    KILN_ASSIGN_OR_RETURN(std::vector<int32_t> wa, widenMatMulOperand(*a, ctx.input(2), true));
    KILN_ASSIGN_OR_RETURN(std::vector<int32_t> wb, widenMatMulOperand(*b, ctx.input(3), false));
    Tensor& y = ctx.allocateOutput(0, DataType::INT32, plan.outShape);
    if (y.numel() == 0 || plan.K == 0) return Status::ok();
    runMatMul<int32_t>(plan, wa.data(), wb.data(), y.data<int32_t>());
    return Status::ok();
  }

 private:
  ThreadPool* pool_;
  std::unique_ptr<OneDnnInt8MatMul> packed_;  // B on oneDNN; null: reference loops only
};

// ----------------------------------------------------------------------------------------------------
// Det: determinant of each trailing square matrix, by LU decomposition with partial pivoting in double.

double determinant(std::vector<double>& m, int64_t n) {
  double det = 1.0;
  for (int64_t col = 0; col < n; ++col) {
    int64_t pivot = col;
    for (int64_t r = col + 1; r < n; ++r) {
      if (std::fabs(m[r * n + col]) > std::fabs(m[pivot * n + col])) pivot = r;
    }
    if (m[pivot * n + col] == 0.0) return 0.0;
    if (pivot != col) {
      for (int64_t k = 0; k < n; ++k) std::swap(m[pivot * n + k], m[col * n + k]);
      det = -det;
    }
    const double p = m[col * n + col];
    det *= p;
    for (int64_t r = col + 1; r < n; ++r) {
      const double f = m[r * n + col] / p;
      if (f == 0.0) continue;
      for (int64_t k = col + 1; k < n; ++k) m[r * n + k] -= f * m[col * n + k];
    }
  }
  return det;
}

class DetKernel : public Kernel {
 public:
  explicit DetKernel(const KernelInfo&) {}

  Status compute(KernelContext& ctx) override {
    const Tensor* x = ctx.input(0);
    if (!x) return invalidArgument("input X is required");
    const Shape& s = x->shape();
    if (s.size() < 2 || s[s.size() - 1] != s[s.size() - 2]) {
      return invalidArgument("input must be [*, M, M], got " + shapeToString(s));
    }
    const int64_t n = s.back();
    const Shape outShape(s.begin(), s.end() - 2);
    Tensor& y = ctx.allocateOutput(0, x->dtype(), outShape);
    return dispatchType<float, double, Float16, BFloat16>(x->dtype(), [&]<class T>() {
      const T* xd = x->data<T>();
      T* yd = y.data<T>();
      std::vector<double> m(static_cast<size_t>(n * n));
      for (int64_t b = 0, count = shapeSize(outShape); b < count; ++b) {
        for (int64_t i = 0; i < n * n; ++i) {
          m[i] = static_cast<double>(static_cast<ComputeType<T>>(xd[b * n * n + i]));
        }
        yd[b] = T(static_cast<ComputeType<T>>(determinant(m, n)));
      }
      return Status::ok();
    });
  }
};

}  // namespace

Result<std::vector<int32_t>> widenMatMulOperand(const Tensor& src, const Tensor* zeroPoint, bool zpPerRow) {
  std::vector<int32_t> out;
  Status status = dispatchType<uint8_t, int8_t>(src.dtype(), [&]<class T>() {
    KILN_ASSIGN_OR_RETURN(out, widenWithZeroPoint<T>(src, zeroPoint, zpPerRow));
    return Status::ok();
  });
  if (!status.isOk()) return status;
  return out;
}

void registerMathKernels(KernelRegistry& registry) {
  registry.add("Gemm", 1, kAnyOpset, makeFactory<GemmKernel>());
  registry.add("MatMul", 1, kAnyOpset, makeFactory<MatMulKernel>());
  registry.add("MatMulInteger", 10, kAnyOpset, makeFactory<MatMulIntegerKernel>());
  registry.add("Det", 11, kAnyOpset, makeFactory<DetKernel>());
}

}  // namespace kiln::cpu
