// Elementwise unary math: Abs, Neg, Sign, Exp, Log, Sqrt, Reciprocal, Floor, Ceil, Round, trigonometric and
// hyperbolic functions, Erf. Exp and Erf use the vectorizable approximations of simd_float.h for float32
// (about 1 and 3 ulp); the rest are libm.
#include <cmath>

#include "ep/cpu/kernels/elementwise_common.h"

namespace kiln::cpu {
namespace {

using namespace elementwise;  // NOLINT(build/namespaces): the family's own helpers

struct AbsOp {
  template <class C>
  C operator()(C x) const {
    if constexpr (std::is_floating_point_v<C>) {
      return std::fabs(x);
    } else if constexpr (std::is_signed_v<C>) {
      return x < 0 ? wrapNeg(x) : x;
    } else {
      return x;
    }
  }
};
struct NegOp {
  template <class C>
  C operator()(C x) const { return wrapNeg(x); }
};
// -1, 0 or 1; NaN stays NaN.
struct SignOp {
  template <class C>
  C operator()(C x) const {
    if constexpr (std::is_unsigned_v<C>) {
      return x > 0 ? C(1) : C(0);
    } else {
      return x > 0 ? C(1) : (x < 0 ? C(-1) : x);
    }
  }
};
struct ExpOp {
  static constexpr bool kSimd = true;
  template <class C>
  C operator()(C x) const { return expOf(x); }
};
struct SqrtOp {
  static constexpr bool kSimd = true;
  template <class C>
  C operator()(C x) const { return vsqrt(x); }
};
struct ErfOp {
  static constexpr bool kSimd = true;
  template <class C>
  C operator()(C x) const { return erfOf(x); }
};
struct ReciprocalOp {
  static constexpr bool kSimd = true;
  template <class C>
  C operator()(C x) const { return C(1) / x; }
};
// Round half to even: rint under the default rounding mode.
struct RoundOp {
  template <class C>
  C operator()(C x) const { return std::rint(x); }
};

// Ops that are a single <cmath> function on float types.
#define KILN_CMATH_OP(Name, fn)               \
  struct Name {                               \
    template <class C>                        \
    C operator()(C x) const { return fn(x); } \
  };
KILN_CMATH_OP(LogOp, std::log)
KILN_CMATH_OP(FloorOp, std::floor)
KILN_CMATH_OP(CeilOp, std::ceil)
KILN_CMATH_OP(SinOp, std::sin)
KILN_CMATH_OP(CosOp, std::cos)
KILN_CMATH_OP(TanOp, std::tan)
KILN_CMATH_OP(AsinOp, std::asin)
KILN_CMATH_OP(AcosOp, std::acos)
KILN_CMATH_OP(AtanOp, std::atan)
KILN_CMATH_OP(SinhOp, std::sinh)
KILN_CMATH_OP(CoshOp, std::cosh)
KILN_CMATH_OP(AsinhOp, std::asinh)
KILN_CMATH_OP(AcoshOp, std::acosh)
KILN_CMATH_OP(AtanhOp, std::atanh)
#undef KILN_CMATH_OP

template <class Op>
KernelFactory floatUnary() {
  return makeFactory<UnaryKernel<Op, FloatTypes>>();
}

}  // namespace

void registerElementwiseUnaryKernels(KernelRegistry& registry) {
  registry.add("Abs", 1, kAnyOpset, makeFactory<UnaryKernel<AbsOp, NumericTypes>>());
  registry.add("Neg", 1, kAnyOpset, makeFactory<UnaryKernel<NegOp, SignedNumericTypes>>());
  registry.add("Sign", 9, kAnyOpset, makeFactory<UnaryKernel<SignOp, NumericTypes>>());
  registry.add("Exp", 1, kAnyOpset, floatUnary<ExpOp>());
  registry.add("Log", 1, kAnyOpset, floatUnary<LogOp>());
  registry.add("Sqrt", 1, kAnyOpset, floatUnary<SqrtOp>());
  registry.add("Reciprocal", 1, kAnyOpset, floatUnary<ReciprocalOp>());
  registry.add("Floor", 1, kAnyOpset, floatUnary<FloorOp>());
  registry.add("Ceil", 1, kAnyOpset, floatUnary<CeilOp>());
  registry.add("Round", 11, kAnyOpset, floatUnary<RoundOp>());
  registry.add("Sin", 7, kAnyOpset, floatUnary<SinOp>());
  registry.add("Cos", 7, kAnyOpset, floatUnary<CosOp>());
  registry.add("Tan", 7, kAnyOpset, floatUnary<TanOp>());
  registry.add("Asin", 7, kAnyOpset, floatUnary<AsinOp>());
  registry.add("Acos", 7, kAnyOpset, floatUnary<AcosOp>());
  registry.add("Atan", 7, kAnyOpset, floatUnary<AtanOp>());
  registry.add("Sinh", 9, kAnyOpset, floatUnary<SinhOp>());
  registry.add("Cosh", 9, kAnyOpset, floatUnary<CoshOp>());
  registry.add("Asinh", 9, kAnyOpset, floatUnary<AsinhOp>());
  registry.add("Acosh", 9, kAnyOpset, floatUnary<AcoshOp>());
  registry.add("Atanh", 9, kAnyOpset, floatUnary<AtanhOp>());
  registry.add("Erf", 9, kAnyOpset, floatUnary<ErfOp>());
}

}  // namespace kiln::cpu
