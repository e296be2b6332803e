// The ai.onnx.preview.training optimizers (version 1): Adagrad, Adam and Momentum. Each takes R (learning
// rate, scalar float/double), T (update count, scalar int64) and then n groups of tensors laid out input kind
// by input kind: Adagrad X1..Xn, G1..Gn, H1..Hn -> X_new1..n, H_new1..n; Momentum X, G, V -> X_new, V_new;
// Adam X, G, V, H -> X_new, V_new, H_new. Tensors of one group share shape and type (float or double; R may
// be the other float type). Updates follow the operator definitions (and the ONNX reference), computed in
// double:
// - g' = norm_coefficient * x + g (the L2 regularisation gradient) for all three.
// - Adagrad: r' = r / (1 + t * decay_factor); h' = h + g'^2; x' = x - r' * g' / (sqrt(h') + epsilon).
// - Momentum: beta is taken as 1 at t == 0; v' = alpha * v + beta * g'; standard: x' = x - r * v';
//   nesterov: x' = x - r * (g' + alpha * v').
// - Adam: v' = alpha * v + (1 - alpha) * g'; h' = beta * h + (1 - beta) * g'^2; for t > 0 the learning rate
// is
//   bias-corrected r' = r * sqrt(1 - beta^t) / (1 - alpha^t) (r' = r at t == 0);
//   x' = (1 - norm_coefficient_post) * (x - r' * v' / (sqrt(h') + epsilon)).
#include <cmath>
#include <string>
#include <vector>

#include "ep/cpu/kernel_registry.h"
#include "ep/cpu/kernels/data_movement.h"

namespace kiln::cpu {
namespace {

constexpr const char* kTrainingDomain = "ai.onnx.preview.training";

enum class Optimizer { Adagrad, Momentum, Adam };

// Tensor inputs per group (X, G and the optimizer's state tensors) and outputs per group (X_new and new
// states).
constexpr int64_t groupInputs(Optimizer op) { return op == Optimizer::Adam ? 4 : 3; }
constexpr int64_t groupOutputs(Optimizer op) { return op == Optimizer::Adam ? 3 : 2; }

template <Optimizer Op>
class OptimizerKernel final : public Kernel {
 public:
  explicit OptimizerKernel(const KernelInfo& info) : label_(info.node.opType) {
    const ir::Node& node = info.node;
    if constexpr (Op == Optimizer::Momentum) {
      for (const char* name : {"alpha", "beta", "mode", "norm_coefficient"}) {
        if (missingAttribute_.empty() && !node.hasAttribute(name)) missingAttribute_ = name;
      }
    }
    mode_ = node.attrString("mode", "standard");
    normCoefficient_ = node.attrFloat("norm_coefficient", 0.0f);
    epsilon_ = node.attrFloat("epsilon", 1e-6f);
    decayFactor_ = node.attrFloat("decay_factor", 0.0f);
    alpha_ = node.attrFloat("alpha", 0.9f);
    beta_ = node.attrFloat("beta", 0.999f);
    normCoefficientPost_ = node.attrFloat("norm_coefficient_post", 0.0f);
    nesterov_ = mode_ == "nesterov";
  }

  Status init() {
    if constexpr (Op == Optimizer::Momentum) {
      if (!missingAttribute_.empty()) {
        return nodeError(label_, "missing required attribute '" + missingAttribute_ + "'");
      }
      if (mode_ != "standard" && mode_ != "nesterov") {
        return nodeError(label_, "mode '" + mode_ + "' is not one of standard, nesterov");
      }
    }
    return Status::ok();
  }

  Status compute(KernelContext& ctx) override {
    const Tensor* rate = ctx.input(0);
    const Tensor* step = ctx.input(1);
    if (!rate || !step) return nodeError(label_, "missing input 'R' (learning rate) or 'T' (update count)");
    if (rate->numel() != 1 || (rate->dtype() != DataType::FLOAT && rate->dtype() != DataType::DOUBLE)) {
      return nodeError(label_, "input 'R' must be a float or double scalar, got " +
                                   std::string(dataTypeName(rate->dtype())) + " of shape " +
                                   shapeToString(rate->shape()));
    }
    if (step->numel() != 1 || step->dtype() != DataType::INT64) {
      return nodeError(label_, "input 'T' must be an int64 scalar, got " +
                                   std::string(dataTypeName(step->dtype())) + " of shape " +
                                   shapeToString(step->shape()));
    }
    const int64_t tensorInputs = static_cast<int64_t>(ctx.inputCount()) - 2;
    const int64_t per = groupInputs(Op);
    if (tensorInputs <= 0 || tensorInputs % per != 0) {
      return nodeError(label_, "expects R, T and then " + std::to_string(per) +
                                   " inputs per optimized tensor, got " + std::to_string(ctx.inputCount()) +
                                   " inputs");
    }
    const int64_t groups = tensorInputs / per;
    if (static_cast<int64_t>(ctx.outputCount()) != groups * groupOutputs(Op)) {
      return nodeError(label_, "has " + std::to_string(groups) + " optimized tensors, so expects " +
                                   std::to_string(groups * groupOutputs(Op)) + " outputs, got " +
                                   std::to_string(ctx.outputCount()));
    }
    KILN_ASSIGN_OR_RETURN(std::vector<double> rValues, readDoubleValues(*rate));
    const double r = rValues[0];
    const int64_t t = step->data<int64_t>()[0];
    for (int64_t g = 0; g < groups; ++g) {
      std::vector<const Tensor*> in;
      for (int64_t k = 0; k < per; ++k) {
        const Tensor* tensor = ctx.input(static_cast<size_t>(2 + k * groups + g));
        if (!tensor) {
          return nodeError(label_, "input " + std::to_string(2 + k * groups + g) +
                                       " is omitted; every X, G and state tensor is required");
        }
        if (!in.empty() && (tensor->dtype() != in[0]->dtype() || tensor->shape() != in[0]->shape())) {
          return nodeError(label_, "the tensors of group " + std::to_string(g) +
                                       " must share type and shape; got " + dataTypeName(in[0]->dtype()) +
                                       " of shape " + shapeToString(in[0]->shape()) + " and " +
                                       dataTypeName(tensor->dtype()) + " of shape " +
                                       shapeToString(tensor->shape()));
        }
        in.push_back(tensor);
      }
      Status status = dispatchType<float, double>(in[0]->dtype(), [&]<class T>() {
        std::vector<T*> out;
        for (int64_t k = 0; k < groupOutputs(Op); ++k) {
          out.push_back(
              ctx.allocateOutput(static_cast<size_t>(k * groups + g), in[0]->dtype(), in[0]->shape())
                  .template data<T>());
        }
        update<T>(in, out, in[0]->numel(), r, t);
        return Status::ok();
      });
      if (!status.isOk()) return nodeError(label_, status.message());
    }
    return Status::ok();
  }

 private:
  template <class T>
  void update(const std::vector<const Tensor*>& in, const std::vector<T*>& out, int64_t size, double r,
              int64_t t) const {
    const T* x = in[0]->data<T>();
    const T* grad = in[1]->data<T>();
    const double norm = normCoefficient_, eps = epsilon_, alpha = alpha_, beta = beta_;
    if constexpr (Op == Optimizer::Adagrad) {
      const T* h = in[2]->data<T>();
      const double rAdjusted = r / (1.0 + static_cast<double>(t) * decayFactor_);
      for (int64_t i = 0; i < size; ++i) {
        const double g = norm * x[i] + grad[i];
        const double hNew = h[i] + g * g;
        out[0][i] = static_cast<T>(x[i] - rAdjusted * g / (std::sqrt(hNew) + eps));
        out[1][i] = static_cast<T>(hNew);
      }
    } else if constexpr (Op == Optimizer::Momentum) {
      const T* v = in[2]->data<T>();
      const double betaAdjusted = t > 0 ? beta : 1.0;
      for (int64_t i = 0; i < size; ++i) {
        const double g = norm * x[i] + grad[i];
        const double vNew = alpha * v[i] + betaAdjusted * g;
        out[0][i] = static_cast<T>(nesterov_ ? x[i] - r * (g + alpha * vNew) : x[i] - r * vNew);
        out[1][i] = static_cast<T>(vNew);
      }
    } else {
      const T* v = in[2]->data<T>();
      const T* h = in[3]->data<T>();
      const double td = static_cast<double>(t);
      const double rAdjusted =
          t > 0 ? r * std::sqrt(1.0 - std::pow(beta, td)) / (1.0 - std::pow(alpha, td)) : r;
      for (int64_t i = 0; i < size; ++i) {
        const double g = norm * x[i] + grad[i];
        const double vNew = alpha * v[i] + (1.0 - alpha) * g;
        const double hNew = beta * h[i] + (1.0 - beta) * g * g;
        const double xNew = x[i] - rAdjusted * vNew / (std::sqrt(hNew) + eps);
        out[0][i] = static_cast<T>((1.0 - normCoefficientPost_) * xNew);
        out[1][i] = static_cast<T>(vNew);
        out[2][i] = static_cast<T>(hNew);
      }
    }
  }

  std::string label_;
  std::string missingAttribute_;
  std::string mode_;
  double normCoefficient_, epsilon_, decayFactor_, alpha_, beta_, normCoefficientPost_;
  bool nesterov_;
};

template <Optimizer Op>
KernelFactory optimizerFactory() {
  return [](const KernelInfo& info) -> Result<std::unique_ptr<Kernel>> {
    auto kernel = std::make_unique<OptimizerKernel<Op>>(info);
    KILN_RETURN_IF_ERROR(kernel->init());
    return std::unique_ptr<Kernel>(std::move(kernel));
  };
}

}  // namespace

void registerTrainingOptimizerKernels(KernelRegistry& registry) {
  registry.add("Adagrad", 1, kAnyOpset, optimizerFactory<Optimizer::Adagrad>(), kTrainingDomain);
  registry.add("Momentum", 1, kAnyOpset, optimizerFactory<Optimizer::Momentum>(), kTrainingDomain);
  registry.add("Adam", 1, kAnyOpset, optimizerFactory<Optimizer::Adam>(), kTrainingDomain);
}

}  // namespace kiln::cpu
