// Slice: starts/ends/axes attributes (opset 1-9) or starts/ends/axes/steps inputs (opset 10+), with negative
// indices, negative steps and Python-style clamping of out-of-range bounds.
#include <algorithm>
#include <string>
#include <vector>

#include "ep/cpu/kernel_registry.h"
#include "ep/cpu/kernels/data_movement.h"
#include "ops/shape_rules.h"

namespace kiln::cpu {
namespace {

class SliceKernel final : public Kernel {
 public:
  explicit SliceKernel(const KernelInfo& info)
      : label_(info.node.opType),
        fromInputs_(info.opset >= 10),
        attrStarts_(info.node.attrInts("starts")),
        attrEnds_(info.node.attrInts("ends")),
        attrAxes_(info.node.attrInts("axes")) {}

  Status compute(KernelContext& ctx) override {
    const Tensor* data = ctx.input(0);
    if (!data) return nodeError(label_, "missing input 'data'");
    std::vector<int64_t> starts = attrStarts_, ends = attrEnds_, axes = attrAxes_, steps;
    if (fromInputs_) {
      if (!ctx.hasInput(1) || !ctx.hasInput(2)) return nodeError(label_, "needs inputs 'starts' and 'ends'");
      KILN_ASSIGN_OR_RETURN(starts, readIndexInput(label_, *ctx.input(1), "input 'starts'"));
      KILN_ASSIGN_OR_RETURN(ends, readIndexInput(label_, *ctx.input(2), "input 'ends'"));
      axes.clear();
      if (ctx.hasInput(3)) {
        KILN_ASSIGN_OR_RETURN(axes, readIndexInput(label_, *ctx.input(3), "input 'axes'"));
      }
      if (ctx.hasInput(4)) {
        KILN_ASSIGN_OR_RETURN(steps, readIndexInput(label_, *ctx.input(4), "input 'steps'"));
      }
    }
    if (starts.size() != ends.size()) return nodeError(label_, "starts and ends have different lengths");
    if (axes.empty()) {
      for (size_t i = 0; i < starts.size(); ++i) axes.push_back(static_cast<int64_t>(i));
    }
    if (steps.empty()) steps.assign(starts.size(), 1);
    if (axes.size() != starts.size() || steps.size() != starts.size()) {
      return nodeError(label_, "starts, ends, axes and steps must have the same length");
    }
    const size_t rank = data->rank();
    std::vector<int64_t> begin(rank, 0), step(rank, 1);
    Shape outShape = data->shape();
    std::vector<bool> seen(rank, false);
    for (size_t i = 0; i < axes.size(); ++i) {
      const int64_t axis = axes[i] < 0 ? axes[i] + static_cast<int64_t>(rank) : axes[i];
      if (axis < 0 || axis >= static_cast<int64_t>(rank)) {
        return nodeError(label_, "axis " + std::to_string(axes[i]) + " is out of range");
      }
      if (seen[static_cast<size_t>(axis)]) return nodeError(label_, "axis " + std::to_string(axes[i]) + " repeats");
      seen[static_cast<size_t>(axis)] = true;
      const int64_t dim = data->dim(static_cast<size_t>(axis));
      const int64_t s = steps[i];
      if (s == 0) return nodeError(label_, "steps must be non-zero");
      const ops::SliceAxis range = ops::resolveSliceAxis(starts[i], ends[i], s, dim);
      begin[static_cast<size_t>(axis)] = range.start;
      step[static_cast<size_t>(axis)] = s;
      outShape[static_cast<size_t>(axis)] = range.count;
    }
    Tensor& out = ctx.allocateUninitializedOutput(0, data->dtype(), outShape);  // copyStrided writes all
    const int64_t total = out.numel();
    if (total == 0) return Status::ok();
    const std::vector<int64_t> inStrides = stridesOf(data->shape());
    int64_t base = 0;
    std::vector<int64_t> strides(rank);
    for (size_t d = 0; d < rank; ++d) {
      base += begin[d] * inStrides[d];
      strides[d] = step[d] * inStrides[d];
    }
    return copyStrided(*data, base, strides, out);
  }

 private:
  std::string label_;
  bool fromInputs_;
  std::vector<int64_t> attrStarts_;
  std::vector<int64_t> attrEnds_;
  std::vector<int64_t> attrAxes_;
};

}  // namespace

void registerSliceKernels(KernelRegistry& registry) { registry.add("Slice", 1, kAnyOpset, makeFactory<SliceKernel>()); }

}  // namespace kiln::cpu
