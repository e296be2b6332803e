// Activation kernels: Relu, LeakyRelu, PRelu, Sigmoid, HardSigmoid, HardSwish, Tanh, Elu, Selu, Celu, Softplus,
// Softsign, ThresholdedRelu, Clip, Shrink, Mish. Float32 loops are branch-free so the compiler vectorizes
// them; Sigmoid/Tanh/Mish use the vectorizable fastExp/fastTanh.
#include <cmath>
#include <limits>
#include <string>

#include "ep/cpu/kernels/elementwise_common.h"

namespace kiln::cpu {
namespace {

// NaN passes through every op below: comparisons with NaN are false, so the `x` branch is taken.
struct ReluOp {
  template <class C>
  C operator()(C x) const { return x < C(0) ? C(0) : x; }
};
struct LeakyReluOp {
  float alpha;
  explicit LeakyReluOp(const ir::Node& node) : alpha(node.attrFloat("alpha", 0.01f)) {}
  template <class C>
  C operator()(C x) const { return x < C(0) ? static_cast<C>(alpha) * x : x; }
};
struct SigmoidOp {
  template <class C>
  C operator()(C x) const { return C(1) / (C(1) + expOf(-x)); }
};
struct HardSigmoidOp {
  float alpha, beta;
  explicit HardSigmoidOp(const ir::Node& node)
      : alpha(node.attrFloat("alpha", 0.2f)), beta(node.attrFloat("beta", 0.5f)) {}
  template <class C>
  C operator()(C x) const {
    const C v = static_cast<C>(alpha) * x + static_cast<C>(beta);
    return v < C(0) ? C(0) : (v > C(1) ? C(1) : v);
  }
};
// x * HardSigmoid(x) with alpha = 1/6, beta = 0.5.
struct HardSwishOp {
  template <class C>
  C operator()(C x) const {
    const C v = x * static_cast<C>(1.0 / 6.0) + C(0.5);
    return x * (v < C(0) ? C(0) : (v > C(1) ? C(1) : v));
  }
};
struct TanhOp {
  template <class C>
  C operator()(C x) const { return tanhOf(x); }
};
struct EluOp {
  float alpha;
  explicit EluOp(const ir::Node& node) : alpha(node.attrFloat("alpha", 1.0f)) {}
  template <class C>
  C operator()(C x) const { return x < C(0) ? static_cast<C>(alpha) * std::expm1(x) : x; }
};
struct SeluOp {
  float alpha, gamma;
  explicit SeluOp(const ir::Node& node)
      : alpha(node.attrFloat("alpha", 1.67326319217681884765625f)),
        gamma(node.attrFloat("gamma", 1.05070102214813232421875f)) {}
  template <class C>
  C operator()(C x) const {
    return static_cast<C>(gamma) * (x <= C(0) ? static_cast<C>(alpha) * std::expm1(x) : x);
  }
};
struct CeluOp {
  float alpha;
  explicit CeluOp(const ir::Node& node) : alpha(node.attrFloat("alpha", 1.0f)) {}
  template <class C>
  C operator()(C x) const {
    const C a = static_cast<C>(alpha);
    return x < C(0) ? a * std::expm1(x / a) : x;
  }
};
// log(1 + e^x), written to neither overflow for large x nor lose small results for very negative x.
struct SoftplusOp {
  template <class C>
  C operator()(C x) const { return x > C(0) ? x + std::log1p(std::exp(-x)) : std::log1p(std::exp(x)); }
};
struct SoftsignOp {
  template <class C>
  C operator()(C x) const { return x / (C(1) + std::fabs(x)); }
};
struct ThresholdedReluOp {
  float alpha;
  explicit ThresholdedReluOp(const ir::Node& node) : alpha(node.attrFloat("alpha", 1.0f)) {}
  template <class C>
  C operator()(C x) const { return x > static_cast<C>(alpha) ? x : C(0); }
};
// Integer inputs compute in double and convert back, since lambd and bias are floats.
struct ShrinkOp {
  float lambd, bias;
  explicit ShrinkOp(const ir::Node& node) : lambd(node.attrFloat("lambd", 0.5f)), bias(node.attrFloat("bias", 0.0f)) {}
  template <class C>
  C operator()(C x) const {
    using W = std::conditional_t<std::is_floating_point_v<C>, C, double>;
    const W v = static_cast<W>(x), l = static_cast<W>(lambd), b = static_cast<W>(bias);
    return static_cast<C>(v < -l ? v + b : (v > l ? v - b : W(0)));
  }
};
struct MishOp {
  template <class C>
  C operator()(C x) const { return x * tanhOf(SoftplusOp{}(x)); }
};

// PRelu(X, slope): slope broadcasts to X (opset 7+); before opset 7 a 1-D slope holds one value per channel.
class PReluKernel : public Kernel {
 public:
  explicit PReluKernel(const KernelInfo& info) : opset_(info.opset) {}

  Status compute(KernelContext& ctx) override {
    const Tensor* x = ctx.input(0);
    const Tensor* slope = ctx.input(1);
    if (x == nullptr || slope == nullptr) return invalidArgument("PRelu: expects inputs X and slope");
    if (x->dtype() != slope->dtype()) {
      return invalidArgument(std::string("PRelu: X and slope have different element types ") +
                             dataTypeName(x->dtype()) + " and " + dataTypeName(slope->dtype()));
    }
    Shape slopeShape = slope->shape();
    if (opset_ < 7 && slopeShape.size() == 1 && x->rank() >= 2 && slopeShape[0] == x->dim(1)) {
      slopeShape.resize(x->rank() - 1, 1);  // [C] -> [C, 1, ..., 1]: one slope per channel
    }
    KILN_ASSIGN_OR_RETURN(const Shape outShape, broadcastShapes(x->shape(), slopeShape));
    if (outShape != x->shape()) {
      return invalidArgument("PRelu: slope shape " + shapeToString(slope->shape()) + " does not broadcast to X shape " +
                             shapeToString(x->shape()));
    }
    KILN_ASSIGN_OR_RETURN(const BroadcastPlan plan, planBroadcast({&x->shape(), &slopeShape}, outShape));
    Status status = dispatchList(NumericTypes{}, x->dtype(), [&]<class T>() -> Status {
      Tensor& out = ctx.allocateOutput(0, x->dtype(), outShape);
      broadcastBinary(plan, x->data<T>(), slope->data<T>(), out.data<T>(), liftBinary<T, T, T>([](auto v, auto s) {
                        if constexpr (std::is_unsigned_v<decltype(v)>) {
                          return v;
                        } else {
                          return v < decltype(v)(0) ? wrapMul(s, v) : v;
                        }
                      }));
      return Status::ok();
    });
    return status.isOk() ? status : invalidArgument("PRelu: " + status.message());
  }

 private:
  int64_t opset_;
};

// Clip: bounds are attributes min/max before opset 11 and optional scalar inputs from opset 11 on.
class ClipKernel : public Kernel {
 public:
  explicit ClipKernel(const KernelInfo& info) : useAttributes_(info.opset < 11) {
    if (const ir::Attribute* min = info.node.attribute("min")) minAttr_ = min->f;
    if (const ir::Attribute* max = info.node.attribute("max")) maxAttr_ = max->f;
  }

  Status compute(KernelContext& ctx) override {
    const Tensor* x = ctx.input(0);
    if (x == nullptr) return invalidArgument("Clip: expects input X");
    Status status = dispatchList(NumericTypes{}, x->dtype(), [&]<class T>() -> Status {
      using C = ComputeType<T>;
      C lo = std::is_floating_point_v<C> ? -std::numeric_limits<C>::infinity() : std::numeric_limits<C>::lowest();
      C hi = std::is_floating_point_v<C> ? std::numeric_limits<C>::infinity() : std::numeric_limits<C>::max();
      if (useAttributes_) {
        if constexpr (!std::is_floating_point_v<C>) {
          return invalidArgument(std::string("integer input (") + dataTypeName(x->dtype()) + ") needs opset 12 or later");
        } else {
          lo = static_cast<C>(minAttr_);
          hi = static_cast<C>(maxAttr_);
        }
      } else {
        if (const Tensor* min = ctx.input(1)) {
          KILN_ASSIGN_OR_RETURN(const T value, readScalarAs<T>(*min, "min"));
          lo = static_cast<C>(value);
        }
        if (const Tensor* max = ctx.input(2)) {
          KILN_ASSIGN_OR_RETURN(const T value, readScalarAs<T>(*max, "max"));
          hi = static_cast<C>(value);
        }
      }
      Tensor& out = ctx.allocateOutput(0, x->dtype(), x->shape());
      // min(max(x, lo), hi): when lo > hi everything becomes hi, as the spec requires.
      mapUnary(x->data<T>(), out.data<T>(), x->numel(), [lo, hi](C v) {
        const C low = v < lo ? lo : v;
        return low > hi ? hi : low;
      });
      return Status::ok();
    });
    return status.isOk() ? status : invalidArgument("Clip: " + status.message());
  }

 private:
  bool useAttributes_;
  float minAttr_ = -std::numeric_limits<float>::infinity();
  float maxAttr_ = std::numeric_limits<float>::infinity();
};

template <class Op>
KernelFactory floatActivation() {
  return makeFactory<UnaryKernel<Op, FloatTypes>>();
}

}  // namespace

void registerActivationKernels(KernelRegistry& registry) {
  registry.add("Relu", 1, kAnyOpset, makeFactory<UnaryKernel<ReluOp, SignedNumericTypes>>());
  registry.add("LeakyRelu", 1, kAnyOpset, floatActivation<LeakyReluOp>());
  registry.add("PRelu", 1, kAnyOpset, makeFactory<PReluKernel>());
  registry.add("Sigmoid", 1, kAnyOpset, floatActivation<SigmoidOp>());
  registry.add("HardSigmoid", 1, kAnyOpset, floatActivation<HardSigmoidOp>());
  registry.add("HardSwish", 14, kAnyOpset, floatActivation<HardSwishOp>());
  registry.add("Tanh", 1, kAnyOpset, floatActivation<TanhOp>());
  registry.add("Elu", 1, kAnyOpset, floatActivation<EluOp>());
  registry.add("Selu", 1, kAnyOpset, floatActivation<SeluOp>());
  registry.add("Celu", 12, kAnyOpset, floatActivation<CeluOp>());
  registry.add("Softplus", 1, kAnyOpset, floatActivation<SoftplusOp>());
  registry.add("Softsign", 1, kAnyOpset, floatActivation<SoftsignOp>());
  registry.add("ThresholdedRelu", 10, kAnyOpset, floatActivation<ThresholdedReluOp>());
  registry.add("Clip", 1, kAnyOpset, makeFactory<ClipKernel>());
  registry.add("Shrink", 9, kAnyOpset, makeFactory<UnaryKernel<ShrinkOp, NumericTypes>>());
  registry.add("Mish", 18, kAnyOpset, floatActivation<MishOp>());
}

}  // namespace kiln::cpu
