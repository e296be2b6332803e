// Reduce* kernels (Sum, Mean, Max, Min, Prod, L1, L2, LogSum, LogSumExp, SumSquare) over any set of axes.
// The other kernels of the reduction family (ArgMax/ArgMin, Softmax/LogSoftmax/Hardmax, CumSum, TopK) live in
// arg_reduce.cpp, softmax.cpp, cumsum.cpp and topk.cpp and register through registerReductionKernels.
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "ep/cpu/kernel_registry.h"
#include "ep/cpu/kernels/data_movement.h"

namespace kiln::cpu {

void registerArgReduceKernels(KernelRegistry& registry);  // arg_reduce.cpp
void registerSoftmaxKernels(KernelRegistry& registry);    // softmax.cpp
void registerCumSumKernels(KernelRegistry& registry);     // cumsum.cpp
void registerTopKKernels(KernelRegistry& registry);       // topk.cpp

namespace {

enum class ReduceOp { Sum, Mean, Max, Min, Prod, L1, L2, LogSum, LogSumExp, SumSquare };

// Accumulation type: double for floating types (better sums than float, and what the converters go through),
// the element type itself for integers (wrapping like the reference implementations).
template <class T>
using AccType = std::conditional_t<std::is_integral_v<T>, T, double>;

template <class T>
T fromAcc(AccType<T> value) {
  if constexpr (std::is_same_v<T, Float16> || std::is_same_v<T, BFloat16>) {
    return T(static_cast<float>(value));
  } else {
    return static_cast<T>(value);
  }
}

// The input's dimensions with size-1 dims dropped and neighbours of the same kind (reduced or kept) merged;
// outStrides are the strides into the (kept-only) output, 0 on reduced dims.
struct ReduceLayout {
  std::vector<int64_t> dims;
  std::vector<int64_t> outStrides;
  std::vector<bool> reduced;
};

ReduceLayout makeLayout(const Shape& shape, const std::vector<bool>& reducedAxes) {
  ReduceLayout layout;
  for (size_t i = 0; i < shape.size(); ++i) {
    if (shape[i] == 1) continue;
    if (!layout.dims.empty() && layout.reduced.back() == reducedAxes[i]) {
      layout.dims.back() *= shape[i];
    } else {
      layout.dims.push_back(shape[i]);
      layout.reduced.push_back(reducedAxes[i]);
    }
  }
  if (layout.dims.empty()) {
    layout.dims.push_back(1);
    layout.reduced.push_back(false);
  }
  layout.outStrides.assign(layout.dims.size(), 0);
  int64_t stride = 1;
  for (size_t i = layout.dims.size(); i-- > 0;) {
    if (layout.reduced[i]) continue;
    layout.outStrides[i] = stride;
    stride *= layout.dims[i];
  }
  return layout;
}

// Calls fn(outIndex, inIndex) for every input element, in input order. Input must be non-empty.
template <class F>
void forEachReduce(const ReduceLayout& layout, F&& fn) {
  const size_t outerRank = layout.dims.size() - 1;
  const int64_t inner = layout.dims.back();
  const bool innerReduced = layout.reduced.back();
  int64_t total = 1;
  for (int64_t d : layout.dims) total *= d;
  std::vector<int64_t> index(outerRank, 0);
  int64_t out = 0;
  for (int64_t in = 0; in < total; in += inner) {
    if (innerReduced) {
      for (int64_t j = 0; j < inner; ++j) fn(out, in + j);
    } else {
      for (int64_t j = 0; j < inner; ++j) fn(out + j, in + j);
    }
    for (size_t d = outerRank; d-- > 0;) {
      out += layout.outStrides[d];
      if (++index[d] < layout.dims[d]) break;
      out -= layout.outStrides[d] * layout.dims[d];
      index[d] = 0;
    }
  }
}

template <class A>
A magnitude(A x) {
  if constexpr (std::is_unsigned_v<A>) {
    return x;
  } else {
    return x < 0 ? -x : x;
  }
}

template <ReduceOp Op, class T>
void reduceTyped(const Tensor& in, const ReduceLayout& layout, int64_t count, Tensor& out) {
  using A = AccType<T>;
  const int64_t outSize = out.numel();
  constexpr bool kFloat = !std::is_integral_v<T>;
  A init = 0;
  if constexpr (Op == ReduceOp::Prod) init = 1;
  if constexpr (Op == ReduceOp::Max || Op == ReduceOp::LogSumExp) {
    init = kFloat ? -std::numeric_limits<A>::infinity() : std::numeric_limits<A>::lowest();
  }
  if constexpr (Op == ReduceOp::Min) init = kFloat ? std::numeric_limits<A>::infinity() : std::numeric_limits<A>::max();
  std::vector<A> acc(static_cast<size_t>(outSize), init);
  const T* x = in.data<T>();
  const bool empty = in.numel() == 0;
  auto value = [x](int64_t i) { return static_cast<A>(static_cast<ComputeType<T>>(x[i])); };
  std::vector<A> shift;  // LogSumExp: per-output maximum, subtracted before exp for stability
  if constexpr (Op == ReduceOp::LogSumExp) {
    if (!empty) {
      forEachReduce(layout, [&](int64_t o, int64_t i) {
        const A v = value(i);
        if (v > acc[o]) acc[o] = v;
      });
    }
    shift.resize(acc.size());
    for (size_t o = 0; o < acc.size(); ++o) {
      shift[o] = std::isfinite(static_cast<double>(acc[o])) ? acc[o] : 0;
      acc[o] = 0;
    }
  }
  if (!empty) {
    forEachReduce(layout, [&](int64_t o, int64_t i) {
      const A v = value(i);
      A& a = acc[static_cast<size_t>(o)];
      if constexpr (Op == ReduceOp::Sum || Op == ReduceOp::Mean || Op == ReduceOp::LogSum) {
        a += v;
      } else if constexpr (Op == ReduceOp::SumSquare || Op == ReduceOp::L2) {
        a += v * v;
      } else if constexpr (Op == ReduceOp::L1) {
        a += magnitude(v);
      } else if constexpr (Op == ReduceOp::Prod) {
        a *= v;
      } else if constexpr (Op == ReduceOp::Max) {
        if (v > a || v != v) a = v;  // v != v: NaN propagates
      } else if constexpr (Op == ReduceOp::Min) {
        if (v < a || v != v) a = v;
      } else if constexpr (Op == ReduceOp::LogSumExp) {
        a += static_cast<A>(std::exp(static_cast<double>(v) - static_cast<double>(shift[static_cast<size_t>(o)])));
      }
    });
  }
  T* y = out.data<T>();
  for (int64_t o = 0; o < outSize; ++o) {
    A a = acc[static_cast<size_t>(o)];
    if constexpr (Op == ReduceOp::Mean) {
      if (kFloat || count != 0) a = a / static_cast<A>(count);
    } else if constexpr (Op == ReduceOp::L2) {
      a = static_cast<A>(std::sqrt(static_cast<double>(a)));
    } else if constexpr (Op == ReduceOp::LogSum) {
      a = static_cast<A>(std::log(static_cast<double>(a)));
    } else if constexpr (Op == ReduceOp::LogSumExp) {
      a = static_cast<A>(std::log(static_cast<double>(a)) + static_cast<double>(shift[static_cast<size_t>(o)]));
    }
    y[o] = fromAcc<T>(a);
  }
}

// Axes come from the `axes` attribute, or from input 1 for ReduceSum at opset 13+ and every Reduce op at 18+.
// Empty axes reduce everything unless noop_with_empty_axes is set.
template <ReduceOp Op>
class ReduceKernel final : public Kernel {
 public:
  explicit ReduceKernel(const KernelInfo& info)
      : label_(info.node.opType),
        axesFromInput_(info.opset >= 18 || (Op == ReduceOp::Sum && info.opset >= 13)),
        attrAxes_(info.node.attrInts("axes")),
        keepDims_(info.node.attrInt("keepdims", 1) != 0),
        noopWithEmptyAxes_(info.node.attrInt("noop_with_empty_axes", 0) != 0) {}

  Status compute(KernelContext& ctx) override {
    const Tensor* data = ctx.input(0);
    if (!data) return nodeError(label_, "missing input 'data'");
    std::vector<int64_t> axes = attrAxes_;
    if (axesFromInput_) {
      axes.clear();
      if (ctx.hasInput(1)) {
        KILN_ASSIGN_OR_RETURN(axes, readIndexInput(label_, *ctx.input(1), "input 'axes'"));
      }
    }
    const int64_t rank = static_cast<int64_t>(data->rank());
    std::vector<bool> reduced(static_cast<size_t>(rank), axes.empty() && !noopWithEmptyAxes_);
    for (int64_t axis : axes) {
      const int64_t a = axis < 0 ? axis + rank : axis;
      if (a < 0 || a >= rank) {
        return nodeError(label_, "axis " + std::to_string(axis) + " is out of range for rank " + std::to_string(rank));
      }
      reduced[static_cast<size_t>(a)] = true;
    }
    Shape outShape;
    int64_t count = 1;
    for (int64_t d = 0; d < rank; ++d) {
      const int64_t size = data->dim(static_cast<size_t>(d));
      if (reduced[static_cast<size_t>(d)]) {
        count *= size;
        if (keepDims_) outShape.push_back(1);
      } else {
        outShape.push_back(size);
      }
    }
    const ReduceLayout layout = makeLayout(data->shape(), reduced);
    Tensor& out = ctx.allocateOutput(0, data->dtype(), outShape);
    if (data->dtype() == DataType::BOOL && (Op == ReduceOp::Max || Op == ReduceOp::Min)) {
      // ReduceMax/Min-20 on bool: any/all. Bools are bytes of 0 or 1, so the uint8 reduction computes it; an empty
      // ReduceMin leaves uint8's 255, normalized to true.
      reduceTyped<Op, uint8_t>(*data, layout, count, out);
      auto* y = out.data<uint8_t>();
      for (int64_t i = 0; i < out.numel(); ++i) y[i] = y[i] != 0;
      return Status::ok();
    }
    Status status = dispatchType<KILN_NUMERIC_TYPES>(data->dtype(), [&]<class T>() {
      reduceTyped<Op, T>(*data, layout, count, out);
      return Status::ok();
    });
    return status.isOk() ? status : nodeError(label_, status.message());
  }

 private:
  std::string label_;
  bool axesFromInput_;
  std::vector<int64_t> attrAxes_;
  bool keepDims_;
  bool noopWithEmptyAxes_;
};

}  // namespace

void registerReductionKernels(KernelRegistry& registry) {
  registry.add("ReduceSum", 1, kAnyOpset, makeFactory<ReduceKernel<ReduceOp::Sum>>());
  registry.add("ReduceMean", 1, kAnyOpset, makeFactory<ReduceKernel<ReduceOp::Mean>>());
  registry.add("ReduceMax", 1, kAnyOpset, makeFactory<ReduceKernel<ReduceOp::Max>>());
  registry.add("ReduceMin", 1, kAnyOpset, makeFactory<ReduceKernel<ReduceOp::Min>>());
  registry.add("ReduceProd", 1, kAnyOpset, makeFactory<ReduceKernel<ReduceOp::Prod>>());
  registry.add("ReduceL1", 1, kAnyOpset, makeFactory<ReduceKernel<ReduceOp::L1>>());
  registry.add("ReduceL2", 1, kAnyOpset, makeFactory<ReduceKernel<ReduceOp::L2>>());
  registry.add("ReduceLogSum", 1, kAnyOpset, makeFactory<ReduceKernel<ReduceOp::LogSum>>());
  registry.add("ReduceLogSumExp", 1, kAnyOpset, makeFactory<ReduceKernel<ReduceOp::LogSumExp>>());
  registry.add("ReduceSumSquare", 1, kAnyOpset, makeFactory<ReduceKernel<ReduceOp::SumSquare>>());
  registerArgReduceKernels(registry);
  registerSoftmaxKernels(registry);
  registerCumSumKernels(registry);
  registerTopKKernels(registry);
}

}  // namespace kiln::cpu
