// Shared machinery of the elementwise and activation kernels: type lists, a broadcast plan that turns any
// numpy broadcast into an outer loop over contiguous inner runs, and vectorizable float math.
#pragma once

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <initializer_list>
#include <limits>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

#include "ep/cpu/kernel.h"
#include "ep/cpu/kernel_registry.h"
#include "ep/cpu/kernel_utils.h"
#include "ep/cpu/kernels/cpu_isa.h"
#include "ep/cpu/kernels/simd_float.h"

namespace kiln::cpu {

// Sub-registration functions of the elementwise family (one per source file).
void registerElementwiseArithmeticKernels(KernelRegistry& registry);  // elementwise.cpp
void registerElementwiseLogicKernels(KernelRegistry& registry);       // elementwise_logic.cpp
void registerElementwiseUnaryKernels(KernelRegistry& registry);       // elementwise_unary.cpp

}  // namespace kiln::cpu

// A namespace of its own keeps these helpers from colliding (silently, for templates) with other families'.
namespace kiln::cpu::elementwise {

template <class... Ts>
struct TypeList {};

// dispatchType over the types of a TypeList.
template <class... Ts, class F>
Status dispatchList(TypeList<Ts...>, DataType type, F&& fn) {
  return dispatchType<Ts...>(type, std::forward<F>(fn));
}

using NumericTypes = TypeList<KILN_NUMERIC_TYPES>;
using FloatTypes = TypeList<KILN_FLOAT_TYPES>;
using SignedNumericTypes = TypeList<KILN_FLOAT_TYPES, int8_t, int16_t, int32_t, int64_t>;
using AllTypes = TypeList<KILN_ALL_TYPES>;

// Typed element pointer of a tensor (the string vector for STRING tensors).
template <class T>
const T* elements(const Tensor& tensor) {
  if constexpr (std::is_same_v<T, std::string>) {
    return tensor.strings();
  } else {
    return tensor.data<T>();
  }
}
template <class T>
T* elements(Tensor& tensor) {
  if constexpr (std::is_same_v<T, std::string>) {
    return tensor.strings();
  } else {
    return tensor.data<T>();
  }
}

// How up to three inputs broadcast to an output: an outer loop over `outer` dims around inner runs of `inner`
// output elements, inside which input k advances by step[k] elements (1 = contiguous, 0 = one repeated value).
// Adjacent dims with the same broadcast pattern are merged, so bias and scalar broadcasts become long runs.
struct BroadcastPlan {
  static constexpr size_t kMaxInputs = 3;
  size_t inputCount = 0;
  int64_t inner = 1;
  int64_t runs = 0;  // number of inner runs; 0 for an empty output
  std::array<int64_t, kMaxInputs> step{};
  Shape outer;  // outermost first
  std::array<std::vector<int64_t>, kMaxInputs> strides;  // per input, its element stride along each outer dim
};

// Plans the broadcast of `inputs` (right-aligned) to `outShape`; INVALID_ARGUMENT when one does not broadcast.
Result<BroadcastPlan> planBroadcast(std::initializer_list<const Shape*> inputs, const Shape& outShape);

// The numpy broadcast of all `shapes` (at least one).
Result<Shape> broadcastAll(const std::vector<const Shape*>& shapes);

// Opset < 7 arithmetic (Add, Pow, ...) with broadcast=1: B's dims line up with A's starting at `axis`
// (default: trailing), which a numpy broadcast reproduces once B's shape is padded with ones on the right.
struct LegacyBroadcast {
  bool enabled = false;
  bool hasAxis = false;
  int64_t axis = 0;

  static LegacyBroadcast fromNode(const ir::Node& node, int64_t opset);
  // The shape to use for B in a numpy broadcast with A (B's own shape when legacy broadcast is off).
  Result<Shape> alignB(const Shape& a, const Shape& b) const;
};

// Calls block(outOffset, offsets) once per block of outer.back() inner runs (one run when there is no outer
// dim), in output order; offsets[k] is input k's element offset at the block start.
template <class F>
void forEachBlock(const BroadcastPlan& plan, F&& block) {
  using Offsets = std::array<int64_t, BroadcastPlan::kMaxInputs>;
  if (plan.runs == 0) return;
  const size_t rank = plan.outer.size();
  if (rank == 0) {
    block(int64_t{0}, Offsets{});
    return;
  }
  const int64_t blockSize = plan.outer[rank - 1] * plan.inner;
  Offsets offsets{};
  std::vector<int64_t> index(rank - 1, 0);
  for (int64_t o = 0, total = plan.runs * plan.inner; o < total; o += blockSize) {
    block(o, offsets);
    for (size_t d = rank - 1; d-- > 0;) {  // odometer over the remaining outer dims
      ++index[d];
      for (size_t k = 0; k < plan.inputCount; ++k) offsets[k] += plan.strides[k][d];
      if (index[d] < plan.outer[d]) break;
      for (size_t k = 0; k < plan.inputCount; ++k) offsets[k] -= plan.strides[k][d] * plan.outer[d];
      index[d] = 0;
    }
  }
}

// Calls run(outOffset, offsets) once per inner run, in output order; offsets[k] is input k's element offset at
// the run start.
template <class F>
void forEachRun(const BroadcastPlan& plan, F&& run) {
  const size_t rank = plan.outer.size();
  if (rank == 0) {  // a single run
    forEachBlock(plan, run);
    return;
  }
  const int64_t last = plan.outer[rank - 1];
  forEachBlock(plan, [&](int64_t o, auto offsets) {
    for (int64_t j = 0; j < last; ++j) {
      run(o + j * plan.inner, offsets);
      for (size_t k = 0; k < plan.inputCount; ++k) offsets[k] += plan.strides[k][rank - 1];
    }
  });
}

// Outputs smaller than this run on one thread: splitting costs more than it saves.
inline constexpr int64_t kParallelElements = int64_t{1} << 15;

// Calls body(subPlan, offsets, outOffset) on slices of `plan`'s output that together cover it, in parallel on
// `pool`: slices of the outermost planned dim, or of the single inner run. offsets[k] is input k's element offset
// of the slice start and outOffset the output's; subPlan describes the slice.
template <class F>
void parallelOverPlan(ThreadPool* pool, const BroadcastPlan& plan, F&& body) {
  using Offsets = std::array<int64_t, BroadcastPlan::kMaxInputs>;
  const int64_t total = plan.runs * plan.inner;
  const bool single = !pool || pool->threads() < 2 || total < kParallelElements;
  if (single || (!plan.outer.empty() && plan.outer[0] < 2)) {
    body(plan, Offsets{}, int64_t{0});
    return;
  }
  if (plan.outer.empty()) {
    pool->parallelFor(plan.inner, kParallelElements / 4, [&](int64_t begin, int64_t end) {
      BroadcastPlan slice = plan;
      slice.inner = end - begin;
      Offsets offsets{};
      for (size_t k = 0; k < plan.inputCount; ++k) offsets[k] = begin * plan.step[k];
      body(slice, offsets, begin);
    });
    return;
  }
  const int64_t outer0 = plan.outer[0], perIndex = total / outer0;
  pool->parallelFor(outer0, std::max<int64_t>(1, kParallelElements / 4 / std::max<int64_t>(perIndex, 1)),
                    [&](int64_t begin, int64_t end) {
                      BroadcastPlan slice = plan;
                      slice.outer[0] = end - begin;
                      slice.runs = plan.runs / outer0 * (end - begin);
                      Offsets offsets{};
                      for (size_t k = 0; k < plan.inputCount; ++k) offsets[k] = begin * plan.strides[k][0];
                      body(slice, offsets, begin * perIndex);
                    });
}

// Wrapping integer arithmetic: computed in an unsigned type at least as wide as `unsigned`, because signed
// overflow (including that of uint16 values promoted to int) is undefined in C++ while ONNX runtimes wrap.
template <class T>
using WrapType = std::make_unsigned_t<std::common_type_t<T, unsigned>>;
template <class T>
T wrapAdd(T a, T b) {
  if constexpr (std::is_integral_v<T>) {
    return static_cast<T>(static_cast<WrapType<T>>(a) + static_cast<WrapType<T>>(b));
  } else {
    return a + b;
  }
}
template <class T>
T wrapSub(T a, T b) {
  if constexpr (std::is_integral_v<T>) {
    return static_cast<T>(static_cast<WrapType<T>>(a) - static_cast<WrapType<T>>(b));
  } else {
    return a - b;
  }
}
template <class T>
T wrapMul(T a, T b) {
  if constexpr (std::is_integral_v<T>) {
    return static_cast<T>(static_cast<WrapType<T>>(a) * static_cast<WrapType<T>>(b));
  } else {
    return a * b;
  }
}
template <class T>
T wrapNeg(T a) {
  return wrapSub(T(0), a);
}

// True for NaN; false (and no self-comparison warning) for integer types.
template <class T>
bool isNaNValue(T v) {
  if constexpr (std::is_floating_point_v<T>) {
    return v != v;
  } else {
    return false;
  }
}

// v as its ComputeType: Float16/BFloat16 convert to float, other types pass through by reference.
template <class T>
decltype(auto) toCompute(const T& v) {
  if constexpr (std::is_same_v<T, ComputeType<T>>) {
    return (v);
  } else {
    return static_cast<ComputeType<T>>(v);
  }
}

// The storage type of op's result for inputs of type T: bool for predicates, T otherwise.
template <class T, class R>
using ResultStorage = std::conditional_t<std::is_same_v<R, bool>, bool, T>;

// Ops that declare `static constexpr bool kSimd = true` also accept Float4 (see simd_float.h); their float32
// loops then run four lanes at a time with a scalar tail.
template <class Op>
constexpr bool kSimdOp = requires { requires Op::kSimd; };

// y[i] = op(x[i]) through ComputeType.
template <class T, class TO, class Op>
void mapUnary(const T* x, TO* y, int64_t n, const Op& op) {
  int64_t i = 0;
#if KILN_HAVE_FLOAT4
  if constexpr (kSimdOp<Op> && std::is_same_v<T, float> && std::is_same_v<TO, float>) {
    for (; i + Float4::kWidth <= n; i += Float4::kWidth) op(Float4::load(x + i)).store(y + i);
  }
#endif
  for (; i < n; ++i) y[i] = static_cast<TO>(op(toCompute(x[i])));
}

// Ops that are one IEEE float operation (Add '+', Sub '-', Mul '*', Div '/') declare it as
// `static constexpr char kArith`; their float32 runs also have AVX-512 twins (elementwise_avx512.cpp), which give
// the same results as the Float4 loops, exactly rounded lane by lane.
template <class Op>
constexpr bool kArithOp = requires { Op::kArith; };

// out[i] = a[i] (op) b[i] and out[i] = s (op) v[i] (kScalarFirst) or v[i] (op) s for i < n, on AVX-512: defined
// in elementwise_avx512.cpp, called only when cpuHasAvx512().
void arithRunAvx512(char op, const float* a, const float* b, float* out, int64_t n);
void arithScalarRunAvx512(char op, bool scalarFirst, float s, const float* v, float* out, int64_t n);

// out[i] = op(a[i], b[i]) for i < n, four lanes at a time where the op and types allow (sixteen on AVX-512).
template <class TA, class TB, class TO, class Op>
void binaryRun(const TA* a, const TB* b, TO* out, int64_t n, const Op& op) {
  int64_t i = 0;
#if KILN_HAVE_FLOAT4
  if constexpr (kSimdOp<Op> && std::is_same_v<TA, float> && std::is_same_v<TB, float> && std::is_same_v<TO, float>) {
    if constexpr (kArithOp<Op>) {
      if (cpuHasAvx512()) return arithRunAvx512(Op::kArith, a, b, out, n);
    }
    for (; i + 4 <= n; i += 4) op(Float4::load(a + i), Float4::load(b + i)).store(out + i);
  }
#endif
  for (; i < n; ++i) out[i] = static_cast<TO>(op(toCompute(a[i]), toCompute(b[i])));
}

// out[i] = op(a, b[i]) (kScalarFirst) or op(b[i], a) for i < n.
template <bool kScalarFirst, class TS, class TV, class TO, class Op>
void scalarRun(const TS& s, const TV* v, TO* out, int64_t n, const Op& op) {
  int64_t i = 0;
#if KILN_HAVE_FLOAT4
  if constexpr (kSimdOp<Op> && std::is_same_v<TS, float> && std::is_same_v<TV, float> && std::is_same_v<TO, float>) {
    if constexpr (kArithOp<Op>) {
      if (cpuHasAvx512()) return arithScalarRunAvx512(Op::kArith, kScalarFirst, s, v, out, n);
    }
    const Float4 s4(s);
    for (; i + 4 <= n; i += 4) {
      const Float4 v4 = Float4::load(v + i);
      (kScalarFirst ? op(s4, v4) : op(v4, s4)).store(out + i);
    }
  }
#endif
  const auto& sc = toCompute(s);
  for (; i < n; ++i) {
    out[i] = static_cast<TO>(kScalarFirst ? op(sc, toCompute(v[i])) : op(toCompute(v[i]), sc));
  }
}

// Short contiguous runs that repeat along the last outer dim (x[N,H,W,3] - mean[3], boxes[N,4] * scale[4])
// would spend their time in loop overhead; instead the repeating input is tiled once into a buffer that
// lines up with whole chunks of the block, and each chunk is one long binaryRun. Returns false when the plan
// has no such shape.
template <class TA, class TB, class TO, class Op>
bool periodicBinary(const BroadcastPlan& plan, const TA* a, const TB* b, TO* out, const Op& op) {
  constexpr int64_t kShortRun = 32, kTileElements = 1024;
  const int64_t n = plan.inner;
  if constexpr (std::is_same_v<TA, std::string>) {
    return false;
  } else {
    if (n >= kShortRun || plan.outer.empty() || plan.step[0] == 0 || plan.step[1] == 0) return false;
    const int64_t last = plan.outer.back(), sa = plan.strides[0].back(), sb = plan.strides[1].back();
    const bool aRepeats = sa == 0 && sb == n, bRepeats = sb == 0 && sa == n;
    if (!aRepeats && !bRepeats) return false;
    const int64_t reps = std::min(last, std::max<int64_t>(1, kTileElements / n));
    const int64_t chunk = reps * n, blockSize = last * n;
    // unique_ptr arrays rather than vectors: std::vector<bool> has no data().
    std::unique_ptr<TA[]> tileA;
    std::unique_ptr<TB[]> tileB;
    if (aRepeats) tileA = std::make_unique<TA[]>(static_cast<size_t>(chunk));
    if (bRepeats) tileB = std::make_unique<TB[]>(static_cast<size_t>(chunk));
    int64_t tiledFrom = -1;
    forEachBlock(plan, [&](int64_t o, const auto& offsets) {
      const int64_t from = aRepeats ? offsets[0] : offsets[1];
      if (from != tiledFrom) {  // the repeating run changed: re-tile it
        for (int64_t r = 0; r < reps; ++r) {
          if (aRepeats) {
            std::copy_n(a + from, n, tileA.get() + r * n);
          } else {
            std::copy_n(b + from, n, tileB.get() + r * n);
          }
        }
        tiledFrom = from;
      }
      for (int64_t start = 0; start < blockSize; start += chunk) {
        const int64_t len = std::min(chunk, blockSize - start);
        if (aRepeats) {
          binaryRun(tileA.get(), b + offsets[1] + start, out + o + start, len, op);
        } else {
          binaryRun(a + offsets[0] + start, tileB.get(), out + o + start, len, op);
        }
      }
    });
    return true;
  }
}

// out[i] = op(a[ia], b[ib]) through ComputeType over a two-input plan, with a dedicated loop per run shape
// (vector-vector, scalar-vector, vector-scalar), chosen once per call, so the common cases vectorize.
template <class TA, class TB, class TO, class Op>
void broadcastBinary(const BroadcastPlan& plan, const TA* a, const TB* b, TO* out, const Op& op) {
  const int64_t n = plan.inner;
  if (plan.step[0] != 0 && plan.step[1] != 0) {
    if (periodicBinary(plan, a, b, out, op)) return;
    forEachRun(plan, [&](int64_t o, const auto& offsets) { binaryRun(a + offsets[0], b + offsets[1], out + o, n, op); });
  } else if (plan.step[1] != 0) {
    forEachRun(plan, [&](int64_t o, const auto& offsets) {
      scalarRun<true>(a[offsets[0]], b + offsets[1], out + o, n, op);
    });
  } else if (plan.step[0] != 0) {
    forEachRun(plan, [&](int64_t o, const auto& offsets) {
      scalarRun<false>(b[offsets[1]], a + offsets[0], out + o, n, op);
    });
  } else {
    forEachRun(plan, [&](int64_t o, const auto& offsets) {
      const TO value = static_cast<TO>(op(toCompute(a[offsets[0]]), toCompute(b[offsets[1]])));
      std::fill_n(out + o, n, value);
    });
  }
}

// Prefixes a failed Status with the op type ("Add: shapes 3 and 2 do not broadcast"); every failure of these
// kernels is a problem with the node's inputs or attributes, hence INVALID_ARGUMENT.
inline Status withOpType(const std::string& opType, const Status& status) {
  return status.isOk() ? status : invalidArgument(opType + ": " + status.message());
}

// An op functor built from the node's attributes when it takes them.
template <class Op>
Op makeOp(const ir::Node& node) {
  if constexpr (std::is_constructible_v<Op, const ir::Node&>) {
    return Op(node);
  } else {
    return Op{};
  }
}

// Ops with kIntegerDivision reject integer zero divisors up front (they would trap).
template <class Op>
constexpr bool kDividesIntegers = requires { Op::kIntegerDivision; };

// Two inputs of one type T broadcast to an output of type T, or bool when Op is a predicate.
template <class Op, class Types>
class BinaryKernel : public Kernel {
 public:
  explicit BinaryKernel(const KernelInfo& info)
      : opType_(info.node.opType),
        legacy_(LegacyBroadcast::fromNode(info.node, info.opset)),
        op_(makeOp<Op>(info.node)),
        pool_(info.threadPool) {}

  Status compute(KernelContext& ctx) override { return withOpType(opType_, run(ctx)); }

 private:
  Status run(KernelContext& ctx) {
    const Tensor* a = ctx.input(0);
    const Tensor* b = ctx.input(1);
    if (a == nullptr || b == nullptr) return invalidArgument("expects two inputs");
    if (a->dtype() != b->dtype()) {
      return invalidArgument(std::string("inputs have different element types ") + dataTypeName(a->dtype()) +
                             " and " + dataTypeName(b->dtype()));
    }
    KILN_ASSIGN_OR_RETURN(const Shape bShape, legacy_.alignB(a->shape(), b->shape()));
    KILN_ASSIGN_OR_RETURN(const Shape outShape, broadcastShapes(a->shape(), bShape));
    KILN_ASSIGN_OR_RETURN(const BroadcastPlan plan, planBroadcast({&a->shape(), &bShape}, outShape));
    return dispatchList(Types{}, a->dtype(), [&]<class T>() -> Status {
      using C = ComputeType<T>;
      using TO = ResultStorage<T, decltype(op_(std::declval<C>(), std::declval<C>()))>;
      if constexpr (kDividesIntegers<Op> && std::is_integral_v<T>) {
        const T* divisor = b->data<T>();
        for (int64_t i = 0, n = b->numel(); i < n; ++i) {
          if (divisor[i] == 0) return invalidArgument("integer division by zero");
        }
      }
      Tensor& out = ctx.allocateUninitializedOutput(0, DataTypeOf<TO>::value, outShape);
      const T* aData = elements<T>(*a);
      const T* bData = elements<T>(*b);
      TO* outData = elements<TO>(out);
      parallelOverPlan(pool_, plan, [&](const BroadcastPlan& slice, const auto& offsets, int64_t outOffset) {
        broadcastBinary(slice, aData + offsets[0], bData + offsets[1], outData + outOffset, op_);
      });
      return Status::ok();
    });
  }

  std::string opType_;
  LegacyBroadcast legacy_;
  Op op_;
  ThreadPool* pool_;
};

// One input of type T mapped to an output of type T, or bool when Op is a predicate.
template <class Op, class Types>
class UnaryKernel : public Kernel {
 public:
  explicit UnaryKernel(const KernelInfo& info)
      : opType_(info.node.opType), op_(makeOp<Op>(info.node)), pool_(info.threadPool) {}

  Status compute(KernelContext& ctx) override { return withOpType(opType_, run(ctx)); }

 private:
  Status run(KernelContext& ctx) {
    const Tensor* x = ctx.input(0);
    if (x == nullptr) return invalidArgument("expects one input");
    return dispatchList(Types{}, x->dtype(), [&]<class T>() -> Status {
      using TO = ResultStorage<T, decltype(op_(std::declval<ComputeType<T>>()))>;
      Tensor& out = ctx.allocateUninitializedOutput(0, DataTypeOf<TO>::value, x->shape());
      const T* in = x->data<T>();
      TO* result = out.data<TO>();
      const int64_t grain = x->numel() < kParallelElements ? x->numel() : kParallelElements / 4;
      parallelFor(pool_, x->numel(), std::max<int64_t>(grain, 1), [&](int64_t begin, int64_t end) {
        mapUnary(in + begin, result + begin, end - begin, op_);
      });
      return Status::ok();
    });
  }

  std::string opType_;
  Op op_;
  ThreadPool* pool_;
};

// exp, tanh and erf: the vectorizable approximations for float and Float4, libm for double.
inline float expOf(float x) { return fastExp(x); }
inline double expOf(double x) { return std::exp(x); }
inline float tanhOf(float x) { return fastTanh(x); }
inline double tanhOf(double x) { return std::tanh(x); }
inline float erfOf(float x) { return fastErf(x); }
inline double erfOf(double x) { return std::erf(x); }
#if KILN_HAVE_FLOAT4
inline Float4 expOf(Float4 x) { return fastExp(x); }
inline Float4 tanhOf(Float4 x) { return fastTanh(x); }
inline Float4 erfOf(Float4 x) { return fastErf(x); }
#endif

// The single value of a one-element tensor, converted to T (Clip bounds and similar scalar inputs).
template <class T>
Result<T> readScalarAs(const Tensor& tensor, const std::string& what) {
  if (tensor.numel() != 1) {
    return invalidArgument(what + " must be a scalar, got shape " + shapeToString(tensor.shape()));
  }
  T value{};
  Status status = dispatchType<KILN_NUMERIC_TYPES, bool>(tensor.dtype(), [&]<class S>() {
    value = static_cast<T>(static_cast<ComputeType<T>>(static_cast<ComputeType<S>>(tensor.data<S>()[0])));
    return Status::ok();
  });
  if (!status.isOk()) return invalidArgument(what + ": " + status.message());
  return value;
}

}  // namespace kiln::cpu::elementwise
