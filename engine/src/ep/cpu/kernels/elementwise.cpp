// Elementwise arithmetic kernels: Add, Sub, Mul, Div, Pow, Mod, BitShift and the variadic Max, Min, Sum,
// Mean. All broadcast numpy-style (opset >= 7/8) or with the legacy broadcast/axis attributes (opset < 7).
#include <cmath>
#include <memory>
#include <string>

#include "ep/cpu/kernels/elementwise_common.h"

namespace kiln::cpu {
namespace {

using namespace elementwise;  // NOLINT(build/namespaces): the family's own helpers

struct AddOp {
  static constexpr bool kSimd = true;
  static constexpr char kArith = '+';
  template <class C>
  C operator()(C a, C b) const { return wrapAdd(a, b); }
};
struct SubOp {
  static constexpr bool kSimd = true;
  static constexpr char kArith = '-';
  template <class C>
  C operator()(C a, C b) const { return wrapSub(a, b); }
};
struct MulOp {
  static constexpr bool kSimd = true;
  static constexpr char kArith = '*';
  template <class C>
  C operator()(C a, C b) const { return wrapMul(a, b); }
};
struct DivOp {
  static constexpr bool kIntegerDivision = true;
  static constexpr bool kSimd = true;
  static constexpr char kArith = '/';
  template <class C>
  C operator()(C a, C b) const {
    if constexpr (std::is_integral_v<C> && std::is_signed_v<C>) {
      if (b == -1) return wrapNeg(a);  // INT_MIN / -1 traps on x86
    }
    return a / b;  // integer zero divisors are rejected before the loop
  }
};
// fmod=1: sign of the dividend (C fmod / %); fmod=0: sign of the divisor (Python/numpy mod).
struct ModOp {
  static constexpr bool kIntegerDivision = true;
  bool fmod = false;
  explicit ModOp(const ir::Node& node) : fmod(node.attrInt("fmod", 0) != 0) {}
  template <class C>
  C operator()(C a, C b) const {
    C r;
    if constexpr (std::is_floating_point_v<C>) {
      r = std::fmod(a, b);
    } else {
      if constexpr (std::is_signed_v<C>) {
        if (b == -1) return 0;  // INT_MIN % -1 traps on x86
      }
      r = static_cast<C>(a % b);
    }
    if constexpr (std::is_signed_v<C> || std::is_floating_point_v<C>) {
      if (!fmod && r != 0 && ((r < 0) != (b < 0))) r = static_cast<C>(r + b);
    }
    return r;
  }
};
struct BitShiftOp {
  bool left = true;
  explicit BitShiftOp(const ir::Node& node) : left(node.attrString("direction", "LEFT") != "RIGHT") {}
  template <class C>
  C operator()(C a, C b) const {
    if (b >= static_cast<C>(sizeof(C) * 8)) return 0;  // shifting by the width or more is undefined in C++
    return static_cast<C>(left ? a << b : a >> b);
  }
};
// NaN wins, as in numpy.maximum/minimum.
struct MaxOp {
  template <class C>
  C operator()(C a, C b) const { return (a > b || isNaNValue(a)) ? a : b; }
};
struct MinOp {
  template <class C>
  C operator()(C a, C b) const { return (a < b || isNaNValue(a)) ? a : b; }
};

// Integer power by squaring with wrapping; negative exponents truncate toward zero like integer division.
template <class B, class E>
B integerPow(B base, E exponent) {
  if constexpr (std::is_signed_v<E>) {
    if (exponent < 0) {
      if (base == 1) return 1;
      if (base == -1) return (exponent % 2 == 0) ? 1 : -1;
      return 0;
    }
  }
  B result = 1;
  while (exponent != 0) {
    if (exponent & 1) result = wrapMul(result, base);
    exponent = static_cast<E>(exponent >> 1);
    if (exponent != 0) base = wrapMul(base, base);
  }
  return result;
}

// double -> integer without undefined behaviour: NaN gives 0, out-of-range values saturate.
template <class I>
I saturatingCast(double value) {
  if (value != value) return 0;
  if (value <= static_cast<double>(std::numeric_limits<I>::min())) return std::numeric_limits<I>::min();
  if (value >= static_cast<double>(std::numeric_limits<I>::max())) return std::numeric_limits<I>::max();
  return static_cast<I>(value);
}

// Pow: the base type is the output type; the exponent may be any numeric type (opset 12+). The exponent is
// first converted to one working type (the base's compute type for float bases; int64 or double for integer
// bases), which keeps the instantiations to a handful instead of base x exponent types.
class PowKernel : public Kernel {
 public:
  explicit PowKernel(const KernelInfo& info) : legacy_(LegacyBroadcast::fromNode(info.node, info.opset)) {}

  Status compute(KernelContext& ctx) override { return withOpType("Pow", run(ctx)); }

 private:
  Status run(KernelContext& ctx) {
    const Tensor* x = ctx.input(0);
    const Tensor* y = ctx.input(1);
    if (x == nullptr || y == nullptr) return invalidArgument("expects two inputs");
    KILN_ASSIGN_OR_RETURN(const Shape yShape, legacy_.alignB(x->shape(), y->shape()));
    KILN_ASSIGN_OR_RETURN(const Shape outShape, broadcastShapes(x->shape(), yShape));
    KILN_ASSIGN_OR_RETURN(const BroadcastPlan plan, planBroadcast({&x->shape(), &yShape}, outShape));
    const DataType e = y->dtype();
    const bool integerExponent = e == DataType::INT8 || e == DataType::INT16 || e == DataType::INT32 ||
                                 e == DataType::INT64 || e == DataType::UINT8 || e == DataType::UINT16 ||
                                 e == DataType::UINT32 || e == DataType::UINT64;
    using BaseTypes = TypeList<float, double, Float16, BFloat16, int32_t, int64_t>;
    return dispatchList(BaseTypes{}, x->dtype(), [&]<class TB>() -> Status {
      using CB = ComputeType<TB>;
      if constexpr (std::is_floating_point_v<CB>) {
        return apply<TB, CB>(plan, outShape, *x, *y, ctx);
      } else if (integerExponent) {
        return apply<TB, int64_t>(plan, outShape, *x, *y, ctx);
      } else {
        return apply<TB, double>(plan, outShape, *x, *y, ctx);
      }
    });
  }

  // Computes x^y with the exponent converted to E.
  template <class TB, class E>
  static Status apply(const BroadcastPlan& plan, const Shape& outShape, const Tensor& x, const Tensor& y,
                      KernelContext& ctx) {
    using CB = ComputeType<TB>;
    std::vector<E> exponent(static_cast<size_t>(y.numel()));
    KILN_RETURN_IF_ERROR(dispatchList(NumericTypes{}, y.dtype(), [&]<class TE>() {
      const TE* data = y.data<TE>();
      for (size_t i = 0; i < exponent.size(); ++i) exponent[i] = static_cast<E>(toCompute(data[i]));
      return Status::ok();
    }));
    Tensor& out = ctx.allocateOutput(0, x.dtype(), outShape);
    const TB* base = x.data<TB>();
    TB* result = out.data<TB>();
    if constexpr (std::is_floating_point_v<CB>) {
      // A scalar exponent leaves x's layout unchanged. 2 (variance, distances) and 3 (tanh-approximated GELU)
      // are common, and multiplying is several times faster than pow (and exact for 2).
      if (exponent.size() == 1) {
        const CB e = exponent[0];
        if (e == CB(2)) {
          mapUnary(base, result, x.numel(), [](CB b) { return b * b; });
        } else if (e == CB(3)) {
          mapUnary(base, result, x.numel(), [](CB b) { return b * b * b; });
        } else {
          mapUnary(base, result, x.numel(), [e](CB b) { return std::pow(b, e); });
        }
        return Status::ok();
      }
      broadcastBinary(plan, base, exponent.data(), result, [](CB b, E e) { return std::pow(b, e); });
    } else if constexpr (std::is_integral_v<E>) {
      broadcastBinary(plan, base, exponent.data(), result, [](CB b, E e) { return integerPow(b, e); });
    } else {
      broadcastBinary(plan, base, exponent.data(), result,
                      [](CB b, E e) { return saturatingCast<TB>(std::pow(static_cast<double>(b), e)); });
    }
    return Status::ok();
  }

  LegacyBroadcast legacy_;
};

// Max, Min, Sum, Mean: one or more inputs of one type, all broadcast together (opset 8+).
template <class Op, class Types, bool kMean>
class VariadicKernel : public Kernel {
 public:
  explicit VariadicKernel(const KernelInfo& info) : opType_(info.node.opType) {}

  Status compute(KernelContext& ctx) override { return withOpType(opType_, run(ctx)); }

 private:
  Status run(KernelContext& ctx) {
    std::vector<const Tensor*> inputs;
    std::vector<const Shape*> shapes;
    for (size_t i = 0; i < ctx.inputCount(); ++i) {
      if (const Tensor* input = ctx.input(i)) {
        if (!inputs.empty() && input->dtype() != inputs.front()->dtype()) {
          return invalidArgument(std::string("inputs have different element types ") +
                                 dataTypeName(inputs.front()->dtype()) + " and " + dataTypeName(input->dtype()));
        }
        inputs.push_back(input);
        shapes.push_back(&input->shape());
      }
    }
    if (inputs.empty()) return invalidArgument("expects at least one input");
    if (inputs.size() == 1) {  // Max/Min/Sum/Mean of one tensor is that tensor
      return dispatchList(Types{}, inputs.front()->dtype(), [&]<class T>() {
        ctx.setOutput(0, *inputs.front());
        return Status::ok();
      });
    }
    KILN_ASSIGN_OR_RETURN(const Shape outShape, broadcastAll(shapes));
    return dispatchList(Types{}, inputs.front()->dtype(), [&]<class T>() -> Status {
      Tensor& out = ctx.allocateOutput(0, inputs.front()->dtype(), outShape);
      T* result = out.data<T>();
      const Op op{};
      KILN_ASSIGN_OR_RETURN(const BroadcastPlan first, planBroadcast({shapes[0], shapes[1]}, outShape));
      broadcastBinary(first, inputs[0]->data<T>(), inputs[1]->data<T>(), result, op);
      for (size_t k = 2; k < inputs.size(); ++k) {
        KILN_ASSIGN_OR_RETURN(const BroadcastPlan next, planBroadcast({&outShape, shapes[k]}, outShape));
        broadcastBinary(next, static_cast<const T*>(result), inputs[k]->data<T>(), result, op);
      }
      if constexpr (kMean) {
        const ComputeType<T> count = static_cast<ComputeType<T>>(inputs.size());
        mapUnary(static_cast<const T*>(result), result, out.numel(), [count](ComputeType<T> v) { return v / count; });
      }
      return Status::ok();
    });
  }

  std::string opType_;
};

}  // namespace

void registerElementwiseArithmeticKernels(KernelRegistry& registry) {
  registry.add("Add", 1, kAnyOpset, makeFactory<BinaryKernel<AddOp, NumericTypes>>());
  registry.add("Sub", 1, kAnyOpset, makeFactory<BinaryKernel<SubOp, NumericTypes>>());
  registry.add("Mul", 1, kAnyOpset, makeFactory<BinaryKernel<MulOp, NumericTypes>>());
  registry.add("Div", 1, kAnyOpset, makeFactory<BinaryKernel<DivOp, NumericTypes>>());
  registry.add("Mod", 10, kAnyOpset, makeFactory<BinaryKernel<ModOp, NumericTypes>>());
  registry.add("BitShift", 11, kAnyOpset,
               makeFactory<BinaryKernel<BitShiftOp, TypeList<uint8_t, uint16_t, uint32_t, uint64_t>>>());
  registry.add("Pow", 1, kAnyOpset, makeFactory<PowKernel>());
  registry.add("Max", 1, kAnyOpset, makeFactory<VariadicKernel<MaxOp, NumericTypes, false>>());
  registry.add("Min", 1, kAnyOpset, makeFactory<VariadicKernel<MinOp, NumericTypes, false>>());
  registry.add("Sum", 1, kAnyOpset, makeFactory<VariadicKernel<AddOp, FloatTypes, false>>());
  registry.add("Mean", 1, kAnyOpset, makeFactory<VariadicKernel<AddOp, FloatTypes, true>>());
}

void registerElementwiseKernels(KernelRegistry& registry) {
  registerElementwiseArithmeticKernels(registry);
  registerElementwiseLogicKernels(registry);
  registerElementwiseUnaryKernels(registry);
}

}  // namespace kiln::cpu
