// Elementwise predicates and logic: comparisons, And/Or/Xor/Not, the Bitwise* ops, IsNaN, IsInf and Where.
#include <cmath>
#include <string>

#include "ep/cpu/kernels/elementwise_common.h"

namespace kiln::cpu {
namespace {

using namespace elementwise;  // NOLINT(build/namespaces): the family's own helpers

struct EqualOp {
  template <class C>
  bool operator()(const C& a, const C& b) const { return a == b; }
};
struct LessOp {
  template <class C>
  bool operator()(C a, C b) const { return a < b; }
};
struct LessOrEqualOp {
  template <class C>
  bool operator()(C a, C b) const { return a <= b; }
};
struct GreaterOp {
  template <class C>
  bool operator()(C a, C b) const { return a > b; }
};
struct GreaterOrEqualOp {
  template <class C>
  bool operator()(C a, C b) const { return a >= b; }
};
struct AndOp {
  bool operator()(bool a, bool b) const { return a && b; }
};
struct OrOp {
  bool operator()(bool a, bool b) const { return a || b; }
};
struct XorOp {
  bool operator()(bool a, bool b) const { return a != b; }
};
struct NotOp {
  bool operator()(bool a) const { return !a; }
};
struct BitwiseAndOp {
  template <class C>
  C operator()(C a, C b) const { return static_cast<C>(a & b); }
};
struct BitwiseOrOp {
  template <class C>
  C operator()(C a, C b) const { return static_cast<C>(a | b); }
};
struct BitwiseXorOp {
  template <class C>
  C operator()(C a, C b) const { return static_cast<C>(a ^ b); }
};
struct BitwiseNotOp {
  template <class C>
  C operator()(C a) const { return static_cast<C>(~a); }
};
struct IsNaNOp {
  template <class C>
  bool operator()(C x) const { return x != x; }
};
struct IsInfOp {
  bool positive = true, negative = true;
  explicit IsInfOp(const ir::Node& node)
      : positive(node.attrInt("detect_positive", 1) != 0), negative(node.attrInt("detect_negative", 1) != 0) {}
  template <class C>
  bool operator()(C x) const {
    return (positive && x == std::numeric_limits<C>::infinity()) ||
           (negative && x == -std::numeric_limits<C>::infinity());
  }
};

using IntegerTypes = TypeList<KILN_INTEGER_TYPES>;
using ComparableTypes = TypeList<KILN_NUMERIC_TYPES, bool>;
using EqualTypes = TypeList<KILN_NUMERIC_TYPES, bool, std::string>;
using BoolTypes = TypeList<bool>;

// Where(condition, X, Y): X where condition holds, else Y, all three broadcast together.
class WhereKernel : public Kernel {
 public:
  explicit WhereKernel(const KernelInfo&) {}

  Status compute(KernelContext& ctx) override { return withOpType("Where", run(ctx)); }

 private:
  Status run(KernelContext& ctx) {
    const Tensor* cond = ctx.input(0);
    const Tensor* x = ctx.input(1);
    const Tensor* y = ctx.input(2);
    if (cond == nullptr || x == nullptr || y == nullptr) return invalidArgument("expects three inputs");
    if (cond->dtype() != DataType::BOOL) {
      return invalidArgument(std::string("condition must be bool, got ") + dataTypeName(cond->dtype()));
    }
    if (x->dtype() != y->dtype()) {
      return invalidArgument(std::string("X and Y have different element types ") + dataTypeName(x->dtype()) +
                             " and " + dataTypeName(y->dtype()));
    }
    const Shape &condShape = cond->shape(), &xShape = x->shape(), &yShape = y->shape();
    KILN_ASSIGN_OR_RETURN(const Shape outShape, broadcastAll({&condShape, &xShape, &yShape}));
    KILN_ASSIGN_OR_RETURN(const BroadcastPlan plan, planBroadcast({&condShape, &xShape, &yShape}, outShape));
    return dispatchList(AllTypes{}, x->dtype(), [&]<class T>() -> Status {
      Tensor& out = ctx.allocateOutput(0, x->dtype(), outShape);
      pick(plan, cond->data<bool>(), elements<T>(*x), elements<T>(*y), elements<T>(out));
      return Status::ok();
    });
  }

  template <class T>
  static void pick(const BroadcastPlan& plan, const bool* cond, const T* x, const T* y, T* out) {
    const int64_t n = plan.inner;
    const int64_t sc = plan.step[0], sx = plan.step[1], sy = plan.step[2];
    forEachRun(plan, [&](int64_t o, const auto& offsets) {
      const bool* pc = cond + offsets[0];
      const T* px = x + offsets[1];
      const T* py = y + offsets[2];
      T* po = out + o;
      if (sc == 1 && sx == 1 && sy == 1) {
        for (int64_t i = 0; i < n; ++i) po[i] = pc[i] ? px[i] : py[i];
      } else {
        for (int64_t i = 0; i < n; ++i) po[i] = pc[i * sc] ? px[i * sx] : py[i * sy];
      }
    });
  }
};

}  // namespace

void registerElementwiseLogicKernels(KernelRegistry& registry) {
  registry.add("Equal", 1, kAnyOpset, makeFactory<BinaryKernel<EqualOp, EqualTypes>>());
  registry.add("Less", 1, kAnyOpset, makeFactory<BinaryKernel<LessOp, ComparableTypes>>());
  registry.add("LessOrEqual", 12, kAnyOpset, makeFactory<BinaryKernel<LessOrEqualOp, ComparableTypes>>());
  registry.add("Greater", 1, kAnyOpset, makeFactory<BinaryKernel<GreaterOp, ComparableTypes>>());
  registry.add("GreaterOrEqual", 12, kAnyOpset, makeFactory<BinaryKernel<GreaterOrEqualOp, ComparableTypes>>());
  registry.add("And", 1, kAnyOpset, makeFactory<BinaryKernel<AndOp, BoolTypes>>());
  registry.add("Or", 1, kAnyOpset, makeFactory<BinaryKernel<OrOp, BoolTypes>>());
  registry.add("Xor", 1, kAnyOpset, makeFactory<BinaryKernel<XorOp, BoolTypes>>());
  registry.add("Not", 1, kAnyOpset, makeFactory<UnaryKernel<NotOp, BoolTypes>>());
  registry.add("BitwiseAnd", 18, kAnyOpset, makeFactory<BinaryKernel<BitwiseAndOp, IntegerTypes>>());
  registry.add("BitwiseOr", 18, kAnyOpset, makeFactory<BinaryKernel<BitwiseOrOp, IntegerTypes>>());
  registry.add("BitwiseXor", 18, kAnyOpset, makeFactory<BinaryKernel<BitwiseXorOp, IntegerTypes>>());
  registry.add("BitwiseNot", 18, kAnyOpset, makeFactory<UnaryKernel<BitwiseNotOp, IntegerTypes>>());
  registry.add("IsNaN", 9, kAnyOpset, makeFactory<UnaryKernel<IsNaNOp, FloatTypes>>());
  registry.add("IsInf", 10, kAnyOpset, makeFactory<UnaryKernel<IsInfOp, FloatTypes>>());
  registry.add("Where", 9, kAnyOpset, makeFactory<WhereKernel>());
}

}  // namespace kiln::cpu
