// Normalization kernels: BatchNormalization (inference and training mode), InstanceNormalization, LRN,
// LpNormalization. LayerNormalization and MeanVarianceNormalization live in layer_normalization.cpp.
#include <cmath>
#include <string>
#include <vector>

#include "ep/cpu/kernel_registry.h"
#include "ep/cpu/kernel_utils.h"
#include "ep/cpu/kernels/cpu_isa.h"
#include "ep/cpu/kernels/gemm_helpers.h"
#include "ep/cpu/kernels/row_statistics.h"

namespace kiln::cpu {

void registerLayerNormalizationKernels(KernelRegistry& registry);  // layer_normalization.cpp

namespace {

// y[i] = x[i] * a + b over one plane; the float instance is hot (BatchNormalization after every conv), so it
// also has AVX2/FMA and AVX-512 twins (both contract the same multiply-add, so they agree bit for bit).
template <class T, class C>
KILN_ALWAYS_INLINE inline void affinePlane(const T* x, T* y, int64_t n, C a, C b) {
  for (int64_t i = 0; i < n; ++i) y[i] = T(static_cast<C>(x[i]) * a + b);
}

KILN_AVX512_TARGET void affinePlaneAvx512(const float* x, float* y, int64_t n, float a, float b) {
  affinePlane<float, float>(x, y, n, a, b);
}
KILN_AVX2_TARGET void affinePlaneAvx2(const float* x, float* y, int64_t n, float a, float b) {
  affinePlane<float, float>(x, y, n, a, b);
}
void affinePlaneBaseline(const float* x, float* y, int64_t n, float a, float b) {
  affinePlane<float, float>(x, y, n, a, b);
}
void affinePlaneF32(const float* x, float* y, int64_t n, float a, float b) {
  (cpuHasAvx512() ? affinePlaneAvx512 : cpuHasAvx2Fma() ? affinePlaneAvx2 : affinePlaneBaseline)(x, y, n, a, b);
}

// True when output `i` exists on the node and was not omitted.
bool outputRequested(const ir::Node& node, const KernelContext& ctx, size_t i) {
  return i < ctx.outputCount() && i < node.outputs.size() && !node.outputs[i].empty();
}

class BatchNormalizationKernel : public Kernel {
 public:
  explicit BatchNormalizationKernel(const KernelInfo& info)
      : node_(info.node),
        opset_(info.opset),
        epsilon_(info.node.attrFloat("epsilon", 1e-5f)),
        momentum_(info.node.attrFloat("momentum", 0.9f)),
        trainingMode_(info.node.attrInt("training_mode", 0) != 0),
        isTest_(info.node.attrInt("is_test", 0) != 0),
        pool_(info.threadPool) {}

  Status compute(KernelContext& ctx) override {
    const Tensor* x = ctx.input(0);
    for (size_t i = 0; i < 5; ++i) {
      if (!ctx.input(i)) return invalidArgument("inputs X, scale, B, mean and var are all required");
    }
    if (x->rank() < 2) return invalidArgument("X must be [N, C, ...], got " + shapeToString(x->shape()));
    const int64_t N = x->dim(0), C = x->dim(1), S = N * C == 0 ? 0 : x->numel() / (N * C);
    std::vector<double> params[4];
    for (size_t i = 0; i < 4; ++i) {
      KILN_ASSIGN_OR_RETURN(params[i], readDoubleValues(*ctx.input(i + 1)));
    }
    const int64_t count = static_cast<int64_t>(params[0].size());
    for (const auto& p : params) {
      if (static_cast<int64_t>(p.size()) != count) {
        return invalidArgument("scale, B, mean and var must have the same size");
      }
    }
    // spatial=0 (opset < 9) gives one parameter per element of X's [C, D1, ...] instead of per channel.
    const bool perElement = count != C;
    if (perElement && count != C * S) {
      return invalidArgument("parameters have " + std::to_string(count) + " values; X " +
                             shapeToString(x->shape()) + " needs " + std::to_string(C));
    }
    // Training: opset >= 14 says so with training_mode; older opsets by requesting the extra outputs.
    const bool extraOutputs = outputRequested(node_, ctx, 1) || outputRequested(node_, ctx, 2);
    const bool training = opset_ >= 14 ? trainingMode_ : (extraOutputs && !isTest_);
    std::vector<double>& mean = params[2];
    std::vector<double>& var = params[3];
    if (training) {
      if (perElement) return notImplemented("training mode with spatial=0");
      std::vector<double> batchMean(C, 0.0), batchVar(C, 0.0);
      KILN_RETURN_IF_ERROR(batchStatistics(*x, N, C, S, batchMean, batchVar));
      KILN_RETURN_IF_ERROR(writeTrainingOutputs(ctx, batchMean, batchVar));
      mean = batchMean;
      var = batchVar;
    }
    std::vector<double> a(count), b(count);
    for (int64_t i = 0; i < count; ++i) {
      a[i] = params[0][i] / std::sqrt(var[i] + static_cast<double>(epsilon_));
      b[i] = params[1][i] - mean[i] * a[i];
    }
    Tensor& y = ctx.allocateUninitializedOutput(0, x->dtype(), x->shape());
    return dispatchType<float, double, Float16, BFloat16>(x->dtype(), [&]<class T>() {
      using Cmp = ComputeType<T>;
      const T* xd = x->data<T>();
      T* yd = y.data<T>();
      if (perElement) {
        for (int64_t n = 0; n < N; ++n) {
          const T* xp = xd + n * C * S;
          T* yp = yd + n * C * S;
          for (int64_t i = 0; i < C * S; ++i) yp[i] = T(static_cast<Cmp>(xp[i]) * Cmp(a[i]) + Cmp(b[i]));
        }
        return Status::ok();
      }
      // Planes (n, c) are independent: spread them over the intra-op threads.
      parallelFor(pool_, N * C, std::max<int64_t>(1, 8192 / std::max<int64_t>(S, 1)), [&](int64_t begin, int64_t end) {
        for (int64_t plane = begin; plane < end; ++plane) {
          const int64_t c = plane % C, offset = plane * S;
          if constexpr (std::is_same_v<T, float>) {
            affinePlaneF32(xd + offset, yd + offset, S, float(a[c]), float(b[c]));
          } else {
            affinePlane<T, Cmp>(xd + offset, yd + offset, S, Cmp(a[c]), Cmp(b[c]));
          }
        }
      });
      return Status::ok();
    });
  }

 private:
  // Per-channel mean and population variance over N and the spatial dims.
  Status batchStatistics(const Tensor& x, int64_t N, int64_t C, int64_t S, std::vector<double>& mean,
                         std::vector<double>& var) const {
    return dispatchType<float, double, Float16, BFloat16>(x.dtype(), [&]<class T>() {
      const T* xd = x.data<T>();
      const double count = static_cast<double>(N * S);
      for (int64_t c = 0; c < C && count > 0; ++c) {
        double sum = 0, sq = 0;
        for (int64_t n = 0; n < N; ++n) {
          const T* p = xd + (n * C + c) * S;
          for (int64_t i = 0; i < S; ++i) sum += static_cast<double>(static_cast<ComputeType<T>>(p[i]));
        }
        mean[c] = sum / count;
        for (int64_t n = 0; n < N; ++n) {
          const T* p = xd + (n * C + c) * S;
          for (int64_t i = 0; i < S; ++i) {
            const double d = static_cast<double>(static_cast<ComputeType<T>>(p[i])) - mean[c];
            sq += d * d;
          }
        }
        var[c] = sq / count;
      }
      return Status::ok();
    });
  }

  // running_mean/var = input * momentum + batch * (1 - momentum); opset < 14 also has saved_mean/saved_var.
  Status writeTrainingOutputs(KernelContext& ctx, const std::vector<double>& batchMean,
                              const std::vector<double>& batchVar) const {
    const Tensor& meanIn = *ctx.input(3);
    KILN_ASSIGN_OR_RETURN(std::vector<double> runMean, readDoubleValues(meanIn));
    KILN_ASSIGN_OR_RETURN(std::vector<double> runVar, readDoubleValues(*ctx.input(4)));
    const double m = momentum_;
    for (size_t c = 0; c < runMean.size(); ++c) {
      runMean[c] = runMean[c] * m + batchMean[c] * (1 - m);
      runVar[c] = runVar[c] * m + batchVar[c] * (1 - m);
    }
    const std::vector<double>* values[4] = {&runMean, &runVar, &batchMean, &batchVar};
    for (size_t i = 1; i <= 4; ++i) {
      if (!outputRequested(node_, ctx, i)) continue;
      Tensor& out = ctx.allocateOutput(i, meanIn.dtype(), meanIn.shape());
      const std::vector<double>& v = *values[i - 1];
      Status status = dispatchType<float, double, Float16, BFloat16>(meanIn.dtype(), [&]<class T>() {
        for (size_t c = 0; c < v.size(); ++c) out.data<T>()[c] = T(static_cast<ComputeType<T>>(v[c]));
        return Status::ok();
      });
      KILN_RETURN_IF_ERROR(status);
    }
    return Status::ok();
  }

  const ir::Node& node_;
  int64_t opset_;
  float epsilon_, momentum_;
  bool trainingMode_, isTest_;
  ThreadPool* pool_;
};

// y = scale * (x - mean) / sqrt(var + epsilon) + B with mean/var per (n, c) over the spatial dims.
class InstanceNormalizationKernel : public Kernel {
 public:
  explicit InstanceNormalizationKernel(const KernelInfo& info)
      : epsilon_(info.node.attrFloat("epsilon", 1e-5f)) {}

  Status compute(KernelContext& ctx) override {
    const Tensor* x = ctx.input(0);
    if (!x || !ctx.input(1) || !ctx.input(2)) {
      return invalidArgument("inputs input, scale and B are required");
    }
    if (x->rank() < 3) {
      return invalidArgument("input must be [N, C, D1, ...], got " + shapeToString(x->shape()));
    }
    const int64_t N = x->dim(0), C = x->dim(1), S = N * C == 0 ? 0 : x->numel() / (N * C);
    KILN_ASSIGN_OR_RETURN(std::vector<double> scale, readDoubleValues(*ctx.input(1)));
    KILN_ASSIGN_OR_RETURN(std::vector<double> bias, readDoubleValues(*ctx.input(2)));
    if (static_cast<int64_t>(scale.size()) != C || static_cast<int64_t>(bias.size()) != C) {
      return invalidArgument("scale and B must have " + std::to_string(C) + " values");
    }
    Tensor& y = ctx.allocateOutput(0, x->dtype(), x->shape());
    return dispatchType<float, double, Float16, BFloat16>(x->dtype(), [&]<class T>() {
      using Cmp = ComputeType<T>;
      for (int64_t n = 0; n < N; ++n) {
        for (int64_t c = 0; c < C && S > 0; ++c) {
          const T* xp = x->data<T>() + (n * C + c) * S;
          T* yp = y.data<T>() + (n * C + c) * S;
          const auto [mean, invStd] = rowMoments(xp, S, epsilon_);
          const double a = scale[c] * invStd;
          affinePlane<T, Cmp>(xp, yp, S, Cmp(a), Cmp(bias[c] - mean * a));
        }
      }
      return Status::ok();
    });
  }

 private:
  float epsilon_;
};

// LRN across channels: y = x / (bias + alpha / size * sum of x^2 over the channel window) ^ beta.
class LrnKernel : public Kernel {
 public:
  explicit LrnKernel(const KernelInfo& info)
      : size_(info.node.attrInt("size", 0)),
        alpha_(info.node.attrFloat("alpha", 1e-4f)),
        beta_(info.node.attrFloat("beta", 0.75f)),
        bias_(info.node.attrFloat("bias", 1.0f)) {}

  Status compute(KernelContext& ctx) override {
    const Tensor* x = ctx.input(0);
    if (!x) return invalidArgument("input X is required");
    if (size_ <= 0) return invalidArgument("attribute 'size' must be positive");
    if (x->rank() < 2) return invalidArgument("X must be [N, C, ...], got " + shapeToString(x->shape()));
    const int64_t N = x->dim(0), C = x->dim(1), S = N * C == 0 ? 0 : x->numel() / (N * C);
    const int64_t before = (size_ - 1) / 2, after = size_ - 1 - before;  // floor and ceil of (size - 1) / 2
    Tensor& y = ctx.allocateOutput(0, x->dtype(), x->shape());
    return dispatchType<float, double, Float16, BFloat16>(x->dtype(), [&]<class T>() {
      using Cmp = ComputeType<T>;
      std::vector<Cmp> sums(static_cast<size_t>(S));
      const Cmp scale = Cmp(alpha_) / Cmp(size_);
      for (int64_t n = 0; n < N; ++n) {
        const T* xn = x->data<T>() + n * C * S;
        T* yn = y.data<T>() + n * C * S;
        for (int64_t c = 0; c < C; ++c) {
          std::fill(sums.begin(), sums.end(), Cmp(0));
          for (int64_t j = std::max<int64_t>(0, c - before); j <= std::min(C - 1, c + after); ++j) {
            for (int64_t i = 0; i < S; ++i) {
              const Cmp v = static_cast<Cmp>(xn[j * S + i]);
              sums[i] += v * v;
            }
          }
          for (int64_t i = 0; i < S; ++i) {
            const Cmp v = static_cast<Cmp>(xn[c * S + i]);
            yn[c * S + i] = T(v / std::pow(Cmp(bias_) + scale * sums[i], Cmp(beta_)));
          }
        }
      }
      return Status::ok();
    });
  }

 private:
  int64_t size_;
  float alpha_, beta_, bias_;
};

// LpNormalization: x divided by its L1 or L2 norm along `axis` (a zero norm gives zeros).
class LpNormalizationKernel : public Kernel {
 public:
  explicit LpNormalizationKernel(const KernelInfo& info)
      : axis_(info.node.attrInt("axis", -1)), p_(info.node.attrInt("p", 2)) {}

  Status compute(KernelContext& ctx) override {
    const Tensor* x = ctx.input(0);
    if (!x) return invalidArgument("input is required");
    if (p_ != 1 && p_ != 2) return invalidArgument("p must be 1 or 2, got " + std::to_string(p_));
    Tensor& y = ctx.allocateOutput(0, x->dtype(), x->shape());
    if (x->rank() == 0) return invalidArgument("input must have rank >= 1");
    KILN_ASSIGN_OR_RETURN(const int64_t axis, normalizeAxis(axis_, static_cast<int64_t>(x->rank())));
    const int64_t len = x->dim(static_cast<size_t>(axis));
    int64_t inner = 1;
    for (size_t d = static_cast<size_t>(axis) + 1; d < x->rank(); ++d) inner *= x->dim(d);
    const int64_t outer = len * inner == 0 ? 0 : x->numel() / (len * inner);
    return dispatchType<float, double, Float16, BFloat16>(x->dtype(), [&]<class T>() {
      using Cmp = ComputeType<T>;
      for (int64_t o = 0; o < outer; ++o) {
        for (int64_t in = 0; in < inner; ++in) {
          const T* xp = x->data<T>() + o * len * inner + in;
          T* yp = y.data<T>() + o * len * inner + in;
          double norm = 0;
          for (int64_t i = 0; i < len; ++i) {
            const double v = static_cast<double>(static_cast<Cmp>(xp[i * inner]));
            norm += p_ == 1 ? std::fabs(v) : v * v;
          }
          if (p_ == 2) norm = std::sqrt(norm);
          for (int64_t i = 0; i < len; ++i) {
            yp[i * inner] =
                norm == 0 ? T(Cmp(0))
                          : T(static_cast<Cmp>(static_cast<double>(static_cast<Cmp>(xp[i * inner])) / norm));
          }
        }
      }
      return Status::ok();
    });
  }

 private:
  int64_t axis_, p_;
};

}  // namespace

void registerNormalizationKernels(KernelRegistry& registry) {
  registry.add("BatchNormalization", 1, kAnyOpset, makeFactory<BatchNormalizationKernel>());
  registry.add("InstanceNormalization", 1, kAnyOpset, makeFactory<InstanceNormalizationKernel>());
  registry.add("LRN", 1, kAnyOpset, makeFactory<LrnKernel>());
  registry.add("LpNormalization", 1, kAnyOpset, makeFactory<LpNormalizationKernel>());
  registerLayerNormalizationKernels(registry);
}

}  // namespace kiln::cpu
