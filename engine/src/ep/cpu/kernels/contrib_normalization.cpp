// The layer normalizations of onnxruntime's contrib operators, as exported transformers use them:
//  - SkipLayerNormalization (com.microsoft): s = input + skip (+ bias); y = (s - mean) / sqrt(var + eps) * gamma
//    (+ beta) over the last axis; optional outputs mean and inv_std_var ([..., 1]) and s itself
//    (input_skip_bias_sum, the residual the next layer adds to);
//  - SkipSimplifiedLayerNormalization (com.microsoft): the same with RMS normalization (no mean, no beta);
//  - SimplifiedLayerNormalization (onnxruntime registers it in ai.onnx at version 1): y = x / sqrt(mean(x^2) + eps)
//    * scale over axes [axis, rank), optional output inv_std_var.
// input is [batch, seq, hidden] or [rows, hidden]; skip has input's shape, [1, seq, hidden] or [seq, hidden]; gamma,
// beta and bias are [hidden]. Rows normalize in parallel; halves compute in float and statistics in double, so
// a half sum output is rounded once, where the normalization reads the unrounded sum (as onnxruntime does).
#include <algorithm>
#include <string>
#include <vector>

#include "ep/cpu/kernel_registry.h"
#include "ep/cpu/kernel_utils.h"
#include "ep/cpu/kernels/row_statistics.h"

namespace kiln::cpu {
namespace {

bool outputWanted(const ir::Node& node, const KernelContext& ctx, size_t i) {
  return i < ctx.outputCount() && i < node.outputs.size() && !node.outputs[i].empty();
}

// Values of a [hidden] parameter as floats; empty when the input is absent.
Result<std::vector<float>> readParameter(const Tensor* t, int64_t hidden, const std::string& what) {
  if (!t) return std::vector<float>{};
  if (t->rank() != 1 || t->shape()[0] != hidden) {
    return invalidArgument(what + " must be [" + std::to_string(hidden) + "] (hidden size), got " +
                           shapeToString(t->shape()));
  }
  KILN_ASSIGN_OR_RETURN(std::vector<double> values, readDoubleValues(*t));
  return std::vector<float>(values.begin(), values.end());
}

// The statistics' shape: input's with the normalized dimensions set to 1.
Shape statisticsShape(const Shape& shape, size_t firstNormalized) {
  Shape s = shape;
  for (size_t d = firstNormalized; d < s.size(); ++d) s[d] = 1;
  return s;
}

class SkipLayerNormKernel : public Kernel {
 public:
  SkipLayerNormKernel(const KernelInfo& info, bool simplified)
      : node_(info.node), simplified_(simplified), epsilon_(info.node.attrFloat("epsilon", 1e-12f)),
        pool_(info.threadPool) {}

  Status compute(KernelContext& ctx) override {
    Status s = run(ctx);
    return s.isOk() ? s : Status(s.code(), node_.label() + ": " + s.message());
  }

 private:
  Status run(KernelContext& ctx) {
    // Inputs: input, skip, gamma, then beta and bias (SkipLayerNormalization) or bias (the simplified form).
    const Tensor* x = ctx.input(0);
    const Tensor* skip = ctx.input(1);
    const Tensor* gamma = ctx.input(2);
    const Tensor* beta = simplified_ ? nullptr : ctx.input(3);
    const Tensor* bias = ctx.input(simplified_ ? 3 : 4);
    if (!x || !skip || !gamma) return invalidArgument("inputs input, skip and gamma are required");
    if (x->rank() != 2 && x->rank() != 3) return invalidArgument("input must be 2-D or 3-D, got " +
                                                                 shapeToString(x->shape()));
    if (skip->dtype() != x->dtype()) return invalidArgument("skip must have input's element type");
    const Shape& shape = x->shape();
    const int64_t hidden = shape.back();
    const int64_t rows = hidden == 0 ? 0 : x->numel() / hidden;
    KILN_ASSIGN_OR_RETURN(const int64_t skipRows, skipRowCount(*x, *skip));
    KILN_ASSIGN_OR_RETURN(const std::vector<float> g, readParameter(gamma, hidden, "gamma"));
    KILN_ASSIGN_OR_RETURN(const std::vector<float> b, readParameter(beta, hidden, "beta"));
    KILN_ASSIGN_OR_RETURN(const std::vector<float> bi, readParameter(bias, hidden, "bias"));

    Tensor& y = ctx.allocateUninitializedOutput(0, x->dtype(), shape);
    const Shape statShape = statisticsShape(shape, shape.size() - 1);
    Tensor* meanOut = outputWanted(node_, ctx, 1) ? &ctx.allocateOutput(1, DataType::FLOAT, statShape) : nullptr;
    Tensor* invStdOut = outputWanted(node_, ctx, 2) ? &ctx.allocateOutput(2, DataType::FLOAT, statShape) : nullptr;
    Tensor* sumOut = outputWanted(node_, ctx, 3) ? &ctx.allocateUninitializedOutput(3, x->dtype(), shape) : nullptr;
    return dispatchType<float, Float16, BFloat16, double>(x->dtype(), [&]<class T>() {
      using C = ComputeType<T>;
      const T* in = x->data<T>();
      const T* sk = skip->data<T>();
      T* out = y.data<T>();
      T* sum = sumOut ? sumOut->data<T>() : nullptr;
      const int64_t grain = std::max<int64_t>(1, 16384 / std::max<int64_t>(hidden, 1));
      parallelFor(pool_, rows, grain, [&](int64_t begin, int64_t end) {
        std::vector<C> row(static_cast<size_t>(hidden));
        for (int64_t r = begin; r < end; ++r) {
          const T* a = in + r * hidden;
          const T* c = sk + (r % skipRows) * hidden;
          for (int64_t i = 0; i < hidden; ++i) {
            C v = static_cast<C>(a[i]) + static_cast<C>(c[i]);
            if (!bi.empty()) v += static_cast<C>(bi[i]);
            row[i] = v;
          }
          if (sum) {
            for (int64_t i = 0; i < hidden; ++i) sum[r * hidden + i] = T(row[i]);
          }
          RowMoments m{0, 0};
          if (simplified_) {
            m.invStd = rowInvRms(row.data(), hidden, epsilon_);
          } else {
            m = rowMoments(row.data(), hidden, epsilon_);
          }
          T* o = out + r * hidden;
          for (int64_t i = 0; i < hidden; ++i) {
            double v = (static_cast<double>(row[i]) - m.mean) * m.invStd * g[i];
            if (!b.empty()) v += b[i];
            o[i] = T(static_cast<C>(v));
          }
          if (meanOut) meanOut->data<float>()[r] = static_cast<float>(m.mean);
          if (invStdOut) invStdOut->data<float>()[r] = static_cast<float>(m.invStd);
        }
      });
      return Status::ok();
    });
  }

  // How many rows skip holds: input's (same shape), or seq (broadcast over the batch: [1, seq, hidden] or
  // [seq, hidden] against a 3-D input).
  static Result<int64_t> skipRowCount(const Tensor& x, const Tensor& skip) {
    const Shape& s = x.shape();
    const int64_t hidden = s.back();
    if (skip.shape() == s) return hidden == 0 ? int64_t{1} : std::max<int64_t>(1, x.numel() / hidden);
    if (s.size() == 3 && (skip.shape() == Shape{1, s[1], s[2]} || skip.shape() == Shape{s[1], s[2]})) {
      return std::max<int64_t>(1, s[1]);
    }
    return invalidArgument("skip " + shapeToString(skip.shape()) + " must be input's shape " + shapeToString(s) +
                           (s.size() == 3 ? ", [1, seq, hidden] or [seq, hidden]" : ""));
  }

  const ir::Node& node_;
  bool simplified_;
  float epsilon_;
  ThreadPool* pool_;
};

class SimplifiedLayerNormKernel : public Kernel {
 public:
  explicit SimplifiedLayerNormKernel(const KernelInfo& info)
      : node_(info.node), axis_(info.node.attrInt("axis", -1)), epsilon_(info.node.attrFloat("epsilon", 1e-5f)),
        pool_(info.threadPool) {}

  Status compute(KernelContext& ctx) override {
    const Tensor* x = ctx.input(0);
    const Tensor* scale = ctx.input(1);
    if (!x || !scale) return fail("inputs X and scale are required");
    if (x->rank() == 0) return fail("X must have rank >= 1");
    auto axis = normalizeAxis(axis_, static_cast<int64_t>(x->rank()));
    if (!axis.isOk()) return fail(axis.status().message());
    const Shape& shape = x->shape();
    int64_t inner = 1;
    for (size_t d = static_cast<size_t>(*axis); d < shape.size(); ++d) inner *= shape[d];
    const int64_t rows = inner == 0 ? 0 : x->numel() / inner;
    if (scale->numel() != inner) {
      return fail("scale " + shapeToString(scale->shape()) + " must hold the " + std::to_string(inner) +
                  " values of X's normalized dimensions " + shapeToString(shape));
    }
    KILN_ASSIGN_OR_RETURN(const std::vector<double> s, readDoubleValues(*scale));
    Tensor& y = ctx.allocateUninitializedOutput(0, x->dtype(), shape);
    Tensor* invStdOut = outputWanted(node_, ctx, 1)
                            ? &ctx.allocateOutput(1, DataType::FLOAT, statisticsShape(shape, static_cast<size_t>(*axis)))
                            : nullptr;
    return dispatchType<float, Float16, BFloat16, double>(x->dtype(), [&]<class T>() {
      using C = ComputeType<T>;
      const int64_t grain = std::max<int64_t>(1, 16384 / std::max<int64_t>(inner, 1));
      parallelFor(pool_, rows, grain, [&](int64_t begin, int64_t end) {
        for (int64_t r = begin; r < end; ++r) {
          const T* xp = x->data<T>() + r * inner;
          T* yp = y.data<T>() + r * inner;
          const double inv = rowInvRms(xp, inner, epsilon_);
          for (int64_t i = 0; i < inner; ++i) {
            yp[i] = T(static_cast<C>(static_cast<double>(static_cast<C>(xp[i])) * inv * s[i]));
          }
          if (invStdOut) invStdOut->data<float>()[r] = static_cast<float>(inv);
        }
      });
      return Status::ok();
    });
  }

 private:
  Status fail(const std::string& message) const { return invalidArgument(node_.label() + ": " + message); }

  const ir::Node& node_;
  int64_t axis_;
  float epsilon_;
  ThreadPool* pool_;
};

}  // namespace

void registerContribNormalizationKernels(KernelRegistry& registry) {
  registry.add("SkipLayerNormalization", 1, kAnyOpset,
               [](const KernelInfo& info) -> Result<std::unique_ptr<Kernel>> {
                 return std::unique_ptr<Kernel>(new SkipLayerNormKernel(info, false));
               }, ir::kMicrosoftDomain);
  registry.add("SkipSimplifiedLayerNormalization", 1, kAnyOpset,
               [](const KernelInfo& info) -> Result<std::unique_ptr<Kernel>> {
                 return std::unique_ptr<Kernel>(new SkipLayerNormKernel(info, true));
               }, ir::kMicrosoftDomain);
  registry.add("SimplifiedLayerNormalization", 1, kAnyOpset, makeFactory<SimplifiedLayerNormKernel>());
}

}  // namespace kiln::cpu
