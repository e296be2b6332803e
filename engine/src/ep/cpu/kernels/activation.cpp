// Activation kernels: Relu, LeakyRelu, PRelu, Sigmoid, HardSigmoid, HardSwish, Tanh, Elu, Selu, Celu, Softplus,
// Softsign, ThresholdedRelu, Clip, Shrink, Mish, Gelu (opset 20). The ops common in vision models run float32 four lanes at a
// time (kSimd); Sigmoid and Tanh use the fast exp/tanh approximations (about 1 ulp).
#include <cmath>
#include <limits>
#include <string>

#include "ep/cpu/kernels/elementwise_common.h"

namespace kiln::cpu {
namespace {

using namespace elementwise;  // NOLINT(build/namespaces): the family's own helpers

// Ops with kSimd also run on Float4 (simd_float.h), so they use select/vmin/vmax instead of `?:`. NaN passes
// through: comparisons with NaN are false, and vmin/vmax return their first operand when it is NaN.
struct ReluOp {
  static constexpr bool kSimd = true;
  template <class C>
  C operator()(C x) const { return vmax(x, C(0)); }
};
struct LeakyReluOp {
  static constexpr bool kSimd = true;
  float alpha;
  explicit LeakyReluOp(const ir::Node& node) : alpha(node.attrFloat("alpha", 0.01f)) {}
  template <class C>
  C operator()(C x) const { return select(x < C(0), C(alpha) * x, x); }
};
struct PReluOp {
  static constexpr bool kSimd = true;
  template <class C>
  C operator()(C x, C slope) const {
    if constexpr (std::is_unsigned_v<C>) {
      return x;
    } else {
      return select(x < C(0), wrapMul(slope, x), x);
    }
  }
};
struct SigmoidOp {
  static constexpr bool kSimd = true;
  template <class C>
  C operator()(C x) const { return C(1) / (C(1) + expOf(-x)); }
};
struct HardSigmoidOp {
  static constexpr bool kSimd = true;
  float alpha, beta;
  explicit HardSigmoidOp(const ir::Node& node)
      : alpha(node.attrFloat("alpha", 0.2f)), beta(node.attrFloat("beta", 0.5f)) {}
  template <class C>
  C operator()(C x) const { return vmin(vmax(C(alpha) * x + C(beta), C(0)), C(1)); }
};
// x * HardSigmoid(x) with alpha = 1/6, beta = 0.5.
struct HardSwishOp {
  static constexpr bool kSimd = true;
  template <class C>
  C operator()(C x) const { return x * vmin(vmax(x * C(1.0f / 6.0f) + C(0.5f), C(0)), C(1)); }
};
struct TanhOp {
  static constexpr bool kSimd = true;
  template <class C>
  C operator()(C x) const { return tanhOf(x); }
};
// expm1 keeps Elu/Selu/Celu accurate near zero, where exp(x) - 1 cancels.
struct EluOp {
  float alpha;
  explicit EluOp(const ir::Node& node) : alpha(node.attrFloat("alpha", 1.0f)) {}
  template <class C>
  C operator()(C x) const { return x < C(0) ? C(alpha) * std::expm1(x) : x; }
};
struct SeluOp {
  float alpha, gamma;
  explicit SeluOp(const ir::Node& node)
      : alpha(node.attrFloat("alpha", 1.67326319217681884765625f)),
        gamma(node.attrFloat("gamma", 1.05070102214813232421875f)) {}
  template <class C>
  C operator()(C x) const { return C(gamma) * (x <= C(0) ? C(alpha) * std::expm1(x) : x); }
};
struct CeluOp {
  float alpha;
  explicit CeluOp(const ir::Node& node) : alpha(node.attrFloat("alpha", 1.0f)) {}
  template <class C>
  C operator()(C x) const { return x < C(0) ? C(alpha) * std::expm1(x / C(alpha)) : x; }
};
// log(1 + e^x), written to neither overflow for large x nor lose small results for very negative x.
struct SoftplusOp {
  template <class C>
  C operator()(C x) const { return x > C(0) ? x + std::log1p(std::exp(-x)) : std::log1p(std::exp(x)); }
};
struct SoftsignOp {
  static constexpr bool kSimd = true;
  template <class C>
  C operator()(C x) const { return x / (C(1) + vabs(x)); }
};
struct ThresholdedReluOp {
  static constexpr bool kSimd = true;
  float alpha;
  explicit ThresholdedReluOp(const ir::Node& node) : alpha(node.attrFloat("alpha", 1.0f)) {}
  template <class C>
  C operator()(C x) const { return select(x > C(alpha), x, C(0)); }
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
// Gelu-20: x * Phi(x) with the exact normal CDF (approximate="none"), or the tanh approximation
// 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))) (approximate="tanh"). Halves compute in float.
struct GeluOp {
  bool tanhApproximation;
  explicit GeluOp(const ir::Node& node) : tanhApproximation(node.attrString("approximate", "none") == "tanh") {}
  template <class C>
  C operator()(C x) const {
    if (tanhApproximation) {
      const C inner = static_cast<C>(0.7978845608028654) * (x + static_cast<C>(0.044715) * x * x * x);
      return C(0.5) * x * (C(1) + tanhOf(inner));
    }
    return C(0.5) * x * (C(1) + erfOf(x * static_cast<C>(0.7071067811865476)));
  }
};
// min(max(x, lo), hi): when lo > hi everything becomes hi, as the spec requires.
template <class T>
struct ClipOp {
  static constexpr bool kSimd = true;
  T lo, hi;
  template <class C>
  C operator()(C x) const { return vmin(vmax(x, C(lo)), C(hi)); }
};

// PRelu(X, slope): slope broadcasts to X (opset 7+); before opset 7 a 1-D slope holds one value per channel.
class PReluKernel : public Kernel {
 public:
  explicit PReluKernel(const KernelInfo& info) : opset_(info.opset) {}

  Status compute(KernelContext& ctx) override { return withOpType("PRelu", run(ctx)); }

 private:
  Status run(KernelContext& ctx) {
    const Tensor* x = ctx.input(0);
    const Tensor* slope = ctx.input(1);
    if (x == nullptr || slope == nullptr) return invalidArgument("expects inputs X and slope");
    if (x->dtype() != slope->dtype()) {
      return invalidArgument(std::string("X and slope have different element types ") +
                             dataTypeName(x->dtype()) + " and " + dataTypeName(slope->dtype()));
    }
    Shape slopeShape = slope->shape();
    if (opset_ < 7 && slopeShape.size() == 1 && x->rank() >= 2 && slopeShape[0] == x->dim(1)) {
      slopeShape.resize(x->rank() - 1, 1);  // [C] -> [C, 1, ..., 1]: one slope per channel
    }
    KILN_ASSIGN_OR_RETURN(const Shape outShape, broadcastShapes(x->shape(), slopeShape));
    if (outShape != x->shape()) {
      return invalidArgument("slope shape " + shapeToString(slope->shape()) + " does not broadcast to X shape " +
                             shapeToString(x->shape()));
    }
    KILN_ASSIGN_OR_RETURN(const BroadcastPlan plan, planBroadcast({&x->shape(), &slopeShape}, outShape));
    return dispatchList(NumericTypes{}, x->dtype(), [&]<class T>() -> Status {
      Tensor& out = ctx.allocateOutput(0, x->dtype(), outShape);
      broadcastBinary(plan, x->data<T>(), slope->data<T>(), out.data<T>(), PReluOp{});
      return Status::ok();
    });
  }

  int64_t opset_;
};

// Clip: bounds are attributes min/max before opset 11 and optional scalar inputs from opset 11 on.
class ClipKernel : public Kernel {
 public:
  explicit ClipKernel(const KernelInfo& info) : useAttributes_(info.opset < 11) {
    if (const ir::Attribute* min = info.node.attribute("min")) minAttr_ = min->f;
    if (const ir::Attribute* max = info.node.attribute("max")) maxAttr_ = max->f;
  }

  Status compute(KernelContext& ctx) override { return withOpType("Clip", run(ctx)); }

 private:
  Status run(KernelContext& ctx) {
    const Tensor* x = ctx.input(0);
    if (x == nullptr) return invalidArgument("expects input X");
    return dispatchList(NumericTypes{}, x->dtype(), [&]<class T>() -> Status {
      using C = ComputeType<T>;
      C lo = std::is_floating_point_v<C> ? -std::numeric_limits<C>::infinity() : std::numeric_limits<C>::lowest();
      C hi = std::is_floating_point_v<C> ? std::numeric_limits<C>::infinity() : std::numeric_limits<C>::max();
      if (useAttributes_) {
        if constexpr (!std::is_floating_point_v<C>) {
          return invalidArgument(std::string(dataTypeName(x->dtype())) + " input needs opset 12 or later");
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
      Tensor& out = ctx.allocateUninitializedOutput(0, x->dtype(), x->shape());
      mapUnary(x->data<T>(), out.data<T>(), x->numel(), ClipOp<C>{lo, hi});
      return Status::ok();
    });
  }

  bool useAttributes_;
  float minAttr_ = -std::numeric_limits<float>::infinity();
  float maxAttr_ = std::numeric_limits<float>::infinity();
};

template <class Op>
KernelFactory floatActivation() {
  return makeFactory<UnaryKernel<Op, FloatTypes>>();
}

// Gelu refuses an unknown `approximate` at creation rather than silently computing the exact form.
Result<std::unique_ptr<Kernel>> createGelu(const KernelInfo& info) {
  const std::string mode = info.node.attrString("approximate", "none");
  if (mode != "none" && mode != "tanh") {
    return invalidArgument(info.node.label() + ": approximate must be 'none' or 'tanh', got '" + mode + "'");
  }
  return floatActivation<GeluOp>()(info);
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
  registry.add("Gelu", 20, kAnyOpset, createGelu);
}

}  // namespace kiln::cpu
