// Kernels that select or reorder existing elements by a data-dependent rule: Compress (by a boolean mask),
// NonZero (coordinates of non-zero elements) and ReverseSequence (per-batch prefix reversal).
#include <algorithm>
#include <string>
#include <vector>

#include "ep/cpu/kernel_registry.h"
#include "ep/cpu/kernels/data_movement.h"

namespace kiln::cpu {
namespace {

// Compress: keeps the slices along `axis` (or the elements of the flattened input without one) whose
// condition entry is true; a condition shorter than the axis drops the rest.
class CompressKernel final : public Kernel {
 public:
  explicit CompressKernel(const KernelInfo& info)
      : label_(info.node.opType), hasAxis_(info.node.hasAttribute("axis")), axis_(info.node.attrInt("axis", 0)) {}

  Status compute(KernelContext& ctx) override {
    const Tensor* data = ctx.input(0);
    if (!data || !ctx.hasInput(1)) return nodeError(label_, "needs inputs 'input' and 'condition'");
    const Tensor& condition = *ctx.input(1);
    if (condition.dtype() != DataType::BOOL) return nodeError(label_, "condition must be bool");
    if (condition.rank() != 1) return nodeError(label_, "condition must be 1-D");
    int64_t outer = 1, n = data->numel(), inner = 1;
    int64_t axis = 0;
    if (hasAxis_) {
      const int64_t rank = static_cast<int64_t>(data->rank());
      axis = axis_ < 0 ? axis_ + rank : axis_;
      if (axis < 0 || axis >= rank) return nodeError(label_, "axis " + std::to_string(axis_) + " is out of range");
      n = data->dim(static_cast<size_t>(axis));
      for (int64_t d = 0; d < axis; ++d) outer *= data->dim(static_cast<size_t>(d));
      for (int64_t d = axis + 1; d < rank; ++d) inner *= data->dim(static_cast<size_t>(d));
    }
    const bool* mask = condition.data<bool>();
    const int64_t limit = std::min(n, condition.numel());
    std::vector<int64_t> kept;
    for (int64_t i = 0; i < limit; ++i) {
      if (mask[i]) kept.push_back(i);
    }
    const int64_t m = static_cast<int64_t>(kept.size());
    Shape outShape{m};
    if (hasAxis_) {
      outShape = data->shape();
      outShape[static_cast<size_t>(axis)] = m;
    }
    Tensor& out = ctx.allocateOutput(0, data->dtype(), outShape);
    if (out.numel() == 0) return Status::ok();
    return dispatchStorage(data->dtype(), [&]<class S>() {
      const S* src = elementsOf<S>(*data);
      S* dst = mutableElementsOf<S>(out);
      for (int64_t o = 0; o < outer; ++o) {
        for (int64_t j = 0; j < m; ++j) {
          const S* from = src + (o * n + kept[static_cast<size_t>(j)]) * inner;
          std::copy(from, from + inner, dst + (o * m + j) * inner);
        }
      }
      return Status::ok();
    });
  }

 private:
  std::string label_;
  bool hasAxis_;
  int64_t axis_;
};

// NonZero: int64 [rank, count] coordinates in row-major order. A scalar counts as a 1-element vector
// (as numpy and ONNX Runtime do).
class NonZeroKernel final : public Kernel {
 public:
  explicit NonZeroKernel(const KernelInfo& info) : label_(info.node.opType) {}

  Status compute(KernelContext& ctx) override {
    const Tensor* data = ctx.input(0);
    if (!data) return nodeError(label_, "missing input");
    const int64_t total = data->numel();
    std::vector<int64_t> positions;
    Status status = dispatchType<KILN_NUMERIC_TYPES, bool>(data->dtype(), [&]<class T>() {
      const T* x = data->data<T>();
      for (int64_t i = 0; i < total; ++i) {
        if (static_cast<ComputeType<T>>(x[i]) != ComputeType<T>(0)) positions.push_back(i);
      }
      return Status::ok();
    });
    if (!status.isOk()) return nodeError(label_, status.message());
    Shape shape = data->rank() == 0 ? Shape{1} : data->shape();
    const int64_t rank = static_cast<int64_t>(shape.size());
    const int64_t count = static_cast<int64_t>(positions.size());
    Tensor& out = ctx.allocateOutput(0, DataType::INT64, {rank, count});
    int64_t* y = out.data<int64_t>();
    for (int64_t j = 0; j < count; ++j) {
      int64_t rest = positions[static_cast<size_t>(j)];
      for (int64_t d = rank; d-- > 0;) {
        y[d * count + j] = rest % shape[static_cast<size_t>(d)];
        rest /= shape[static_cast<size_t>(d)];
      }
    }
    return Status::ok();
  }

 private:
  std::string label_;
};

// ReverseSequence: for each batch b, reverses the first sequence_lens[b] steps along time_axis.
// batch_axis and time_axis are 0 and 1 in some order, so the remaining dims form contiguous blocks.
class ReverseSequenceKernel final : public Kernel {
 public:
  explicit ReverseSequenceKernel(const KernelInfo& info)
      : label_(info.node.opType),
        batchAxis_(info.node.attrInt("batch_axis", 1)),
        timeAxis_(info.node.attrInt("time_axis", 0)) {}

  Status compute(KernelContext& ctx) override {
    const Tensor* data = ctx.input(0);
    if (!data || !ctx.hasInput(1)) return nodeError(label_, "needs inputs 'input' and 'sequence_lens'");
    if (data->rank() < 2) return nodeError(label_, "input must have rank >= 2");
    if (!((batchAxis_ == 0 && timeAxis_ == 1) || (batchAxis_ == 1 && timeAxis_ == 0))) {
      return nodeError(label_, "batch_axis and time_axis must be 0 and 1 in some order");
    }
    KILN_ASSIGN_OR_RETURN(std::vector<int64_t> lens, readIndexInput(label_, *ctx.input(1), "sequence_lens"));
    const int64_t batches = data->dim(static_cast<size_t>(batchAxis_));
    const int64_t steps = data->dim(static_cast<size_t>(timeAxis_));
    if (static_cast<int64_t>(lens.size()) != batches) return nodeError(label_, "sequence_lens must have one entry per batch");
    for (int64_t len : lens) {
      if (len < 0 || len > steps) return nodeError(label_, "sequence length " + std::to_string(len) + " is out of range");
    }
    const std::vector<int64_t> strides = stridesOf(data->shape());
    const int64_t block = strides[1];
    const int64_t batchStride = strides[static_cast<size_t>(batchAxis_)];
    const int64_t timeStride = strides[static_cast<size_t>(timeAxis_)];
    Tensor& out = ctx.allocateOutput(0, data->dtype(), data->shape());
    if (out.numel() == 0) return Status::ok();
    return dispatchStorage(data->dtype(), [&]<class S>() {
      const S* src = elementsOf<S>(*data);
      S* dst = mutableElementsOf<S>(out);
      for (int64_t b = 0; b < batches; ++b) {
        const int64_t len = lens[static_cast<size_t>(b)];
        for (int64_t t = 0; t < steps; ++t) {
          const int64_t from = t < len ? len - 1 - t : t;
          const S* in = src + b * batchStride + from * timeStride;
          std::copy(in, in + block, dst + b * batchStride + t * timeStride);
        }
      }
      return Status::ok();
    });
  }

 private:
  std::string label_;
  int64_t batchAxis_;
  int64_t timeAxis_;
};

}  // namespace

void registerSelectionKernels(KernelRegistry& registry) {
  registry.add("Compress", 9, kAnyOpset, makeFactory<CompressKernel>());
  registry.add("NonZero", 9, kAnyOpset, makeFactory<NonZeroKernel>());
  registry.add("ReverseSequence", 10, kAnyOpset, makeFactory<ReverseSequenceKernel>());
}

}  // namespace kiln::cpu
