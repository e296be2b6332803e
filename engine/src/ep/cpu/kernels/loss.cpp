// Loss functions: NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss (opset 12 and 13; 13 only widens the
// types). Input [N, C, d1..dk] is viewed as [N, C, D] with D = d1*..*dk; target/labels are [N, d1..dk].
// Semantics follow the ONNX reference:
// - loss[n, d] = -weight[t] * input[n, t, d] with t = target[n, d]; weight[t] is 1 without a weight input.
// - A target equal to ignore_index (any value, negative or >= C included) gives loss 0 and weight 0; any
// other
//   target outside [0, C) is an error.
// - reduction "none" returns loss shaped like target, "sum" its sum, "mean" sum(loss) / sum(weights of the
//   non-ignored targets), which is NaN when every target is ignored (0 / 0, as the reference computes).
// SoftmaxCrossEntropyLoss applies NLL to log_softmax(scores) over axis 1 and optionally returns that
// log_prob. Everything is computed in double and rounded once to the output type.
#include <cmath>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "ep/cpu/kernel_registry.h"
#include "ep/cpu/kernel_utils.h"
#include "ep/cpu/kernels/data_movement.h"

namespace kiln::cpu {
namespace {

enum class Reduction { None, Sum, Mean };

// The [N, C, D] view of a loss input and the checks shared by both ops.
struct LossLayout {
  int64_t n = 0, c = 0, d = 1;
  Shape targetShape;
};

Result<LossLayout> lossLayout(const std::string& label, const Tensor& input, const char* inputName,
                              const Tensor& target, const char* targetName, const Tensor* weight) {
  if (input.rank() < 2) {
    return nodeError(label, std::string("input '") + inputName +
                                "' must have rank >= 2 ([N, C, d1..dk]), got rank " +
                                std::to_string(input.rank()));
  }
  LossLayout layout;
  layout.n = input.dim(0);
  layout.c = input.dim(1);
  layout.targetShape.push_back(layout.n);
  for (size_t i = 2; i < input.rank(); ++i) {
    layout.d *= input.dim(i);
    layout.targetShape.push_back(input.dim(i));
  }
  if (target.shape() != layout.targetShape) {
    return nodeError(label, std::string("input '") + targetName + "' has shape " +
                                shapeToString(target.shape()) + ", expected " +
                                shapeToString(layout.targetShape) + " for '" + inputName + "' of shape " +
                                shapeToString(input.shape()));
  }
  if (target.dtype() != DataType::INT32 && target.dtype() != DataType::INT64) {
    return nodeError(label, std::string("input '") + targetName + "' must be int32 or int64, got " +
                                dataTypeName(target.dtype()));
  }
  if (weight) {
    if (weight->dtype() != input.dtype()) {
      return nodeError(label, std::string("weight type ") + dataTypeName(weight->dtype()) +
                                  " differs from '" + inputName + "' type " + dataTypeName(input.dtype()));
    }
    if (weight->shape() != Shape{layout.c}) {
      return nodeError(label, "weight must have shape " + shapeToString({layout.c}) +
                                  " (one value per class), got " + shapeToString(weight->shape()));
    }
  }
  return layout;
}

// Writes the NLL loss of log-probabilities logProb(n, c, d) into output 0.
template <class T, class I, class LogProb>
Status nllLoss(const std::string& label, KernelContext& ctx, const LossLayout& layout, LogProb logProb,
               const Tensor& target, const Tensor* weight, Reduction reduction,
               std::optional<int64_t> ignoreIndex) {
  const I* labels = target.data<I>();
  const T* weights = weight ? weight->data<T>() : nullptr;
  const int64_t count = layout.n * layout.d;
  std::vector<double> losses(reduction == Reduction::None ? static_cast<size_t>(count) : 0);
  double lossSum = 0, weightSum = 0;
  for (int64_t n = 0; n < layout.n; ++n) {
    for (int64_t d = 0; d < layout.d; ++d) {
      const int64_t at = n * layout.d + d;
      const int64_t t = static_cast<int64_t>(labels[at]);
      double loss = 0, w = 0;
      if (!ignoreIndex || t != *ignoreIndex) {
        if (t < 0 || t >= layout.c) {
          return nodeError(label, "target value " + std::to_string(t) + " at flat index " +
                                      std::to_string(at) + " is outside [0, " + std::to_string(layout.c) +
                                      ") and is not ignore_index");
        }
        w = weights ? static_cast<double>(static_cast<ComputeType<T>>(weights[t])) : 1.0;
        loss = -w * logProb(n, t, d);
      }
      if (reduction == Reduction::None) losses[static_cast<size_t>(at)] = loss;
      lossSum += loss;
      weightSum += w;
    }
  }
  if (reduction == Reduction::None) {
    Tensor& out = ctx.allocateOutput(0, DataTypeOf<T>::value, layout.targetShape);
    T* y = out.data<T>();
    for (int64_t i = 0; i < count; ++i) y[i] = fromDouble<T>(losses[static_cast<size_t>(i)]);
  } else {
    Tensor& out = ctx.allocateOutput(0, DataTypeOf<T>::value, Shape{});
    out.data<T>()[0] = fromDouble<T>(reduction == Reduction::Sum ? lossSum : lossSum / weightSum);
  }
  return Status::ok();
}

// NegativeLogLikelihoodLoss (inputs: input, target, weight?) and SoftmaxCrossEntropyLoss (inputs: scores,
// labels, weights?; outputs: output, log_prob?).
template <bool Softmax>
class LossKernel final : public Kernel {
 public:
  explicit LossKernel(const KernelInfo& info)
      : label_(info.node.opType), reductionName_(info.node.attrString("reduction", "mean")) {
    if (info.node.hasAttribute("ignore_index")) ignoreIndex_ = info.node.attrInt("ignore_index", 0);
  }

  Status init() {
    if (reductionName_ == "none") {
      reduction_ = Reduction::None;
    } else if (reductionName_ == "sum") {
      reduction_ = Reduction::Sum;
    } else if (reductionName_ == "mean") {
      reduction_ = Reduction::Mean;
    } else {
      return nodeError(label_, "reduction '" + reductionName_ + "' is not one of none, sum, mean");
    }
    return Status::ok();
  }

  Status compute(KernelContext& ctx) override {
    const char* inputName = Softmax ? "scores" : "input";
    const char* targetName = Softmax ? "labels" : "target";
    const Tensor* input = ctx.input(0);
    const Tensor* target = ctx.input(1);
    if (!input) return nodeError(label_, std::string("missing input '") + inputName + "'");
    if (!target) return nodeError(label_, std::string("missing input '") + targetName + "'");
    const Tensor* weight = ctx.input(2);
    KILN_ASSIGN_OR_RETURN(LossLayout layout,
                          lossLayout(label_, *input, inputName, *target, targetName, weight));
    Status status = dispatchType<KILN_FLOAT_TYPES>(input->dtype(), [&]<class T>() {
      return dispatchType<int32_t, int64_t>(target->dtype(), [&]<class I>() {
        const T* x = input->data<T>();
        const int64_t c = layout.c, d = layout.d;
        auto at = [c, d](int64_t n, int64_t k, int64_t s) { return (n * c + k) * d + s; };
        if constexpr (!Softmax) {
          auto logProb = [&](int64_t n, int64_t k, int64_t s) {
            return static_cast<double>(static_cast<ComputeType<T>>(x[at(n, k, s)]));
          };
          return nllLoss<T, I>(label_, ctx, layout, logProb, *target, weight, reduction_, ignoreIndex_);
        } else {
          // log_softmax over C: logProb(n, k, s) = x[n, k, s] - shift[n, s], shift = max + log(sum(exp(x -
          // max))).
          std::vector<double> shift(static_cast<size_t>(layout.n * d));
          for (int64_t n = 0; n < layout.n; ++n) {
            for (int64_t s = 0; s < d; ++s) {
              double maximum = -std::numeric_limits<double>::infinity();
              for (int64_t k = 0; k < c; ++k)
                maximum = std::max(maximum, static_cast<double>(x[at(n, k, s)]));
              double sum = 0;
              for (int64_t k = 0; k < c; ++k) sum += std::exp(static_cast<double>(x[at(n, k, s)]) - maximum);
              shift[static_cast<size_t>(n * d + s)] = maximum + std::log(sum);
            }
          }
          auto logProb = [&](int64_t n, int64_t k, int64_t s) {
            return static_cast<double>(x[at(n, k, s)]) - shift[static_cast<size_t>(n * d + s)];
          };
          if (ctx.outputCount() > 1) {
            T* lp = ctx.allocateOutput(1, input->dtype(), input->shape()).template data<T>();
            for (int64_t n = 0; n < layout.n; ++n) {
              for (int64_t k = 0; k < c; ++k) {
                for (int64_t s = 0; s < d; ++s) lp[at(n, k, s)] = fromDouble<T>(logProb(n, k, s));
              }
            }
          }
          return nllLoss<T, I>(label_, ctx, layout, logProb, *target, weight, reduction_, ignoreIndex_);
        }
      });
    });
    if (status.isOk() || status.code() == StatusCode::INVALID_ARGUMENT) return status;
    return nodeError(label_, status.message());
  }

 private:
  std::string label_;
  std::string reductionName_;
  Reduction reduction_ = Reduction::Mean;
  std::optional<int64_t> ignoreIndex_;
};

template <bool Softmax>
KernelFactory lossFactory() {
  return [](const KernelInfo& info) -> Result<std::unique_ptr<Kernel>> {
    auto kernel = std::make_unique<LossKernel<Softmax>>(info);
    KILN_RETURN_IF_ERROR(kernel->init());
    return std::unique_ptr<Kernel>(std::move(kernel));
  };
}

}  // namespace

void registerLossKernels(KernelRegistry& registry) {
  registry.add("NegativeLogLikelihoodLoss", 12, kAnyOpset, lossFactory<false>());
  registry.add("SoftmaxCrossEntropyLoss", 12, kAnyOpset, lossFactory<true>());
}

}  // namespace kiln::cpu
