// Softmax, LogSoftmax and Hardmax. Before opset 13 the input is coerced to 2-D at `axis` (default 1) and the
// op runs over the whole trailing block; from opset 13 it runs over the single axis `axis` (default -1).
#include <cmath>
#include <string>
#include <vector>

#include "ep/cpu/kernel_registry.h"
#include "ep/cpu/kernels/data_movement.h"

namespace kiln::cpu {
namespace {

enum class SoftmaxOp { Softmax, LogSoftmax, Hardmax };

// The common case of a contiguous (innermost) axis: one row of n elements at a time.
template <SoftmaxOp Op, class T>
void softmaxRows(const T* x, T* y, int64_t rows, int64_t n) {
  using C = ComputeType<T>;
  std::vector<C> exps(static_cast<size_t>(n));
  for (int64_t r = 0; r < rows; ++r) {
    const T* in = x + r * n;
    T* out = y + r * n;
    C maximum = static_cast<C>(in[0]);
    int64_t argmax = 0;
    for (int64_t k = 1; k < n; ++k) {
      const C v = static_cast<C>(in[k]);
      if (v > maximum) {
        maximum = v;
        argmax = k;
      }
    }
    if constexpr (Op == SoftmaxOp::Hardmax) {
      for (int64_t k = 0; k < n; ++k) out[k] = T(static_cast<C>(k == argmax ? 1 : 0));
      continue;
    }
    C sum = 0;
    for (int64_t k = 0; k < n; ++k) {
      const C e = std::exp(static_cast<C>(in[k]) - maximum);
      exps[static_cast<size_t>(k)] = e;
      sum += e;
    }
    if constexpr (Op == SoftmaxOp::Softmax) {
      const C scale = C(1) / sum;
      for (int64_t k = 0; k < n; ++k) out[k] = T(exps[static_cast<size_t>(k)] * scale);
    } else {
      const C shift = maximum + std::log(sum);
      for (int64_t k = 0; k < n; ++k) out[k] = T(static_cast<C>(in[k]) - shift);
    }
  }
}

// Applies Op to `outer` blocks of [n, inner] elements, reducing over n. Works row by row over the inner
// dimension so that memory is walked contiguously whatever the axis.
template <SoftmaxOp Op, class T>
void softmaxTyped(const T* x, T* y, int64_t outer, int64_t n, int64_t inner) {
  using C = ComputeType<T>;
  if (inner == 1) {
    softmaxRows<Op, T>(x, y, outer, n);
    return;
  }
  std::vector<C> maxima(static_cast<size_t>(inner)), sums(static_cast<size_t>(inner));
  std::vector<int64_t> argmax(static_cast<size_t>(inner));
  std::vector<C> exps(Op == SoftmaxOp::Softmax ? static_cast<size_t>(n * inner) : 0);  // kept at C precision
  for (int64_t o = 0; o < outer; ++o) {
    const T* in = x + o * n * inner;
    T* out = y + o * n * inner;
    for (int64_t i = 0; i < inner; ++i) {
      maxima[static_cast<size_t>(i)] = static_cast<C>(in[i]);
      argmax[static_cast<size_t>(i)] = 0;
    }
    for (int64_t k = 1; k < n; ++k) {
      for (int64_t i = 0; i < inner; ++i) {
        const C v = static_cast<C>(in[k * inner + i]);
        if (v > maxima[static_cast<size_t>(i)]) {
          maxima[static_cast<size_t>(i)] = v;
          argmax[static_cast<size_t>(i)] = k;
        }
      }
    }
    if constexpr (Op == SoftmaxOp::Hardmax) {
      for (int64_t k = 0; k < n; ++k) {
        for (int64_t i = 0; i < inner; ++i) {
          out[k * inner + i] = T(static_cast<C>(argmax[static_cast<size_t>(i)] == k ? 1 : 0));
        }
      }
      continue;
    }
    std::fill(sums.begin(), sums.end(), C(0));
    for (int64_t k = 0; k < n; ++k) {
      for (int64_t i = 0; i < inner; ++i) {
        const C e = std::exp(static_cast<C>(in[k * inner + i]) - maxima[static_cast<size_t>(i)]);
        sums[static_cast<size_t>(i)] += e;
        if constexpr (Op == SoftmaxOp::Softmax) exps[static_cast<size_t>(k * inner + i)] = e;
      }
    }
    for (int64_t i = 0; i < inner; ++i) {
      C& s = sums[static_cast<size_t>(i)];
      s = Op == SoftmaxOp::Softmax ? C(1) / s : std::log(s);
    }
    for (int64_t k = 0; k < n; ++k) {
      for (int64_t i = 0; i < inner; ++i) {
        const size_t at = static_cast<size_t>(k * inner + i);
        if constexpr (Op == SoftmaxOp::Softmax) {
          out[at] = T(exps[at] * sums[static_cast<size_t>(i)]);
        } else {
          out[at] = T(static_cast<C>(in[at]) - maxima[static_cast<size_t>(i)] - sums[static_cast<size_t>(i)]);
        }
      }
    }
  }
}

template <SoftmaxOp Op>
class SoftmaxKernel final : public Kernel {
 public:
  explicit SoftmaxKernel(const KernelInfo& info)
      : label_(info.node.opType),
        coerce2d_(info.opset < 13),
        axis_(info.node.attrInt("axis", info.opset < 13 ? 1 : -1)) {}

  Status compute(KernelContext& ctx) override {
    const Tensor* data = ctx.input(0);
    if (!data) return nodeError(label_, "missing input");
    const int64_t rank = static_cast<int64_t>(data->rank());
    const int64_t axis = axis_ < 0 ? axis_ + rank : axis_;
    // Opset < 13 allows axis == rank (an empty trailing block of size 1).
    if (axis < 0 || axis > rank || (!coerce2d_ && axis == rank && rank > 0)) {
      return nodeError(label_, "axis " + std::to_string(axis_) + " is out of range for rank " + std::to_string(rank));
    }
    int64_t outer = 1, n = 1, inner = 1;
    for (int64_t d = 0; d < rank; ++d) {
      const int64_t size = data->dim(static_cast<size_t>(d));
      if (d < axis) {
        outer *= size;
      } else if (d == axis || coerce2d_) {
        n *= size;
      } else {
        inner *= size;
      }
    }
    Tensor& out = ctx.allocateOutput(0, data->dtype(), data->shape());
    if (data->numel() == 0) return Status::ok();
    Status status = dispatchType<KILN_FLOAT_TYPES>(data->dtype(), [&]<class T>() {
      softmaxTyped<Op, T>(data->data<T>(), out.data<T>(), outer, n, inner);
      return Status::ok();
    });
    return status.isOk() ? status : nodeError(label_, status.message());
  }

 private:
  std::string label_;
  bool coerce2d_;
  int64_t axis_;
};

}  // namespace

void registerSoftmaxKernels(KernelRegistry& registry) {
  registry.add("Softmax", 1, kAnyOpset, makeFactory<SoftmaxKernel<SoftmaxOp::Softmax>>());
  registry.add("LogSoftmax", 1, kAnyOpset, makeFactory<SoftmaxKernel<SoftmaxOp::LogSoftmax>>());
  registry.add("Hardmax", 1, kAnyOpset, makeFactory<SoftmaxKernel<SoftmaxOp::Hardmax>>());
}

}  // namespace kiln::cpu
