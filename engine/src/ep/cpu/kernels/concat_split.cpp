// Concat and Split: block copies along one axis, for every element type.
#include <algorithm>
#include <string>
#include <vector>

#include "ep/cpu/kernel_registry.h"
#include "ep/cpu/kernels/data_movement.h"
#include "ops/split_sizes.h"

namespace kiln::cpu {
namespace {

// Concat: inputs agree on every dimension but `axis` (required from opset 4, default 1 before).
class ConcatKernel final : public Kernel {
 public:
  explicit ConcatKernel(const KernelInfo& info) : label_(info.node.opType), axis_(info.node.attrInt("axis", 1)) {}

  Status compute(KernelContext& ctx) override {
    std::vector<const Tensor*> inputs;
    for (size_t i = 0; i < ctx.inputCount(); ++i) {
      if (ctx.hasInput(i)) inputs.push_back(ctx.input(i));
    }
    if (inputs.empty()) return nodeError(label_, "needs at least one input");
    // Prefer a non-empty input as the reference so that stray empty 1-D inputs do not dictate the rank.
    const Tensor* ref = inputs[0];
    for (const Tensor* t : inputs) {
      if (t->numel() != 0) {
        ref = t;
        break;
      }
    }
    const int64_t rank = static_cast<int64_t>(ref->rank());
    if (rank == 0) return nodeError(label_, "cannot concatenate scalars");
    const int64_t axis = axis_ < 0 ? axis_ + rank : axis_;
    if (axis < 0 || axis >= rank) return nodeError(label_, "axis " + std::to_string(axis_) + " is out of range");
    Shape outShape = ref->shape();
    outShape[static_cast<size_t>(axis)] = 0;
    std::vector<const Tensor*> parts;
    for (const Tensor* t : inputs) {
      if (t->dtype() != ref->dtype()) return nodeError(label_, "inputs have different element types");
      if (static_cast<int64_t>(t->rank()) != rank) {
        if (t->numel() == 0) continue;  // tolerated: an empty placeholder of another rank adds nothing
        return nodeError(label_, "inputs have different ranks");
      }
      for (int64_t d = 0; d < rank; ++d) {
        if (d != axis && t->dim(static_cast<size_t>(d)) != ref->dim(static_cast<size_t>(d))) {
          return nodeError(label_, "input shapes " + shapeToString(t->shape()) + " and " +
                                       shapeToString(ref->shape()) + " differ outside the concat axis");
        }
      }
      outShape[static_cast<size_t>(axis)] += t->dim(static_cast<size_t>(axis));
      parts.push_back(t);
    }
    int64_t outer = 1, inner = 1;
    for (int64_t d = 0; d < axis; ++d) outer *= outShape[static_cast<size_t>(d)];
    for (int64_t d = axis + 1; d < rank; ++d) inner *= outShape[static_cast<size_t>(d)];
    Tensor& out = ctx.allocateUninitializedOutput(0, ref->dtype(), outShape);
    const int64_t outRow = outShape[static_cast<size_t>(axis)] * inner;
    return dispatchStorage(ref->dtype(), [&]<class S>() {
      S* dst = mutableElementsOf<S>(out);
      int64_t offset = 0;
      for (const Tensor* t : parts) {
        const int64_t row = t->dim(static_cast<size_t>(axis)) * inner;
        if (row == 0) continue;
        const S* src = elementsOf<S>(*t);
        for (int64_t o = 0; o < outer; ++o) std::copy(src + o * row, src + (o + 1) * row, dst + o * outRow + offset);
        offset += row;
      }
      return Status::ok();
    });
  }

 private:
  std::string label_;
  int64_t axis_;
};

// Split: sizes from the `split` attribute (before opset 13; also an optional input at opset 1) or input 1
// (opset 13+); equal parts when absent.
class SplitKernel final : public Kernel {
 public:
  explicit SplitKernel(const KernelInfo& info)
      : label_(info.node.opType),
        opset_(info.opset),
        axis_(info.node.attrInt("axis", 0)),
        attrSplit_(info.node.attrInts("split")) {}

  Status compute(KernelContext& ctx) override {
    const Tensor* data = ctx.input(0);
    if (!data) return nodeError(label_, "missing input");
    const int64_t rank = static_cast<int64_t>(data->rank());
    const int64_t axis = axis_ < 0 ? axis_ + rank : axis_;
    if (axis < 0 || axis >= rank) return nodeError(label_, "axis " + std::to_string(axis_) + " is out of range");
    const int64_t dimSize = data->dim(static_cast<size_t>(axis));
    const int64_t count = static_cast<int64_t>(ctx.outputCount());
    std::vector<int64_t> sizes = attrSplit_;
    if ((opset_ >= 13 || opset_ < 2) && ctx.hasInput(1)) {
      KILN_ASSIGN_OR_RETURN(sizes, readIndexInput(label_, *ctx.input(1), "input 'split'"));
    }
    auto resolved = ops::splitSizes(std::move(sizes), opset_, dimSize, count);
    if (!resolved.isOk()) return nodeError(label_, resolved.status().message());
    sizes = std::move(resolved).value();
    int64_t outer = 1, inner = 1;
    for (int64_t d = 0; d < axis; ++d) outer *= data->dim(static_cast<size_t>(d));
    for (int64_t d = axis + 1; d < rank; ++d) inner *= data->dim(static_cast<size_t>(d));
    const int64_t inRow = dimSize * inner;
    return dispatchStorage(data->dtype(), [&]<class S>() {
      const S* src = elementsOf<S>(*data);
      int64_t offset = 0;
      for (size_t i = 0; i < sizes.size(); ++i) {
        Shape shape = data->shape();
        shape[static_cast<size_t>(axis)] = sizes[i];
        Tensor& out = ctx.allocateOutput(i, data->dtype(), shape);
        S* dst = mutableElementsOf<S>(out);
        const int64_t row = sizes[i] * inner;
        if (row > 0) {
          for (int64_t o = 0; o < outer; ++o) {
            std::copy(src + o * inRow + offset, src + o * inRow + offset + row, dst + o * row);
          }
        }
        offset += row;
      }
      return Status::ok();
    });
  }

 private:
  std::string label_;
  int64_t opset_;
  int64_t axis_;
  std::vector<int64_t> attrSplit_;
};

}  // namespace

void registerConcatSplitKernels(KernelRegistry& registry) {
  registry.add("Concat", 1, kAnyOpset, makeFactory<ConcatKernel>());
  registry.add("Split", 1, kAnyOpset, makeFactory<SplitKernel>());
}

}  // namespace kiln::cpu
