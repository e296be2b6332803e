// Pad: constant, reflect, edge and wrap modes; pads as attributes (opset 1-10) or inputs (11+, axes from 18);
// negative pads crop.
#include <string>
#include <vector>

#include "ep/cpu/kernel_registry.h"
#include "ep/cpu/kernel_utils.h"
#include "ep/cpu/kernels/data_movement.h"

namespace kiln::cpu {

void registerPadKernels(KernelRegistry& registry);

namespace {

enum class PadMode { CONSTANT, REFLECT, EDGE, WRAP };

// For each output index along one axis: the input index it copies, or -1 for the constant value.
// Cropping (negative pads) happens first, so reflect/edge/wrap work on the kept range [lo, hi).
Result<std::vector<int64_t>> axisIndexMap(int64_t inDim, int64_t before, int64_t after, PadMode mode,
                                          const std::string& label) {
  const int64_t outDim = inDim + before + after;
  if (outDim < 0) return invalidArgument(label + ": pads crop more than the dimension " + std::to_string(inDim));
  const int64_t lo = std::max<int64_t>(0, -before), hi = inDim - std::max<int64_t>(0, -after);
  const int64_t kept = hi - lo;
  std::vector<int64_t> map(static_cast<size_t>(outDim));
  for (int64_t o = 0; o < outDim; ++o) {
    const int64_t i = o - before;
    if (i >= lo && i < hi) {
      map[o] = i;
      continue;
    }
    if (mode == PadMode::CONSTANT) {
      map[o] = -1;
      continue;
    }
    if (kept <= 0) return invalidArgument(label + ": cannot pad an empty axis in edge, reflect or wrap mode");
    if (mode == PadMode::EDGE) {
      map[o] = std::clamp(i, lo, hi - 1);
    } else if (mode == PadMode::WRAP) {
      map[o] = lo + (((i - lo) % kept) + kept) % kept;
    } else if (kept == 1) {
      map[o] = lo;
    } else {  // reflect without repeating the edge; repeats when the pad exceeds the axis, as numpy does
      const int64_t period = 2 * (kept - 1);
      int64_t j = (((i - lo) % period) + period) % period;
      if (j >= kept) j = period - j;
      map[o] = lo + j;
    }
  }
  return map;
}

template <class S>
void padElements(const Tensor& input, const std::vector<std::vector<int64_t>>& maps, const S& value,
                 Tensor& output) {
  const size_t rank = maps.size();
  const S* src = elementsOf<S>(input);
  S* dst = mutableElementsOf<S>(output);
  const std::vector<int64_t> inStrides = stridesOf(input.shape());
  const std::vector<int64_t>& last = maps[rank - 1];
  const int64_t rowLength = static_cast<int64_t>(last.size());
  const int64_t rows = rowLength == 0 ? 0 : output.numel() / rowLength;
  std::vector<int64_t> index(rank - 1, 0);
  for (int64_t row = 0; row < rows; ++row) {
    int64_t base = 0;
    bool constantRow = false;
    for (size_t d = 0; d + 1 < rank; ++d) {
      const int64_t m = maps[d][index[d]];
      if (m < 0) {
        constantRow = true;
        break;
      }
      base += m * inStrides[d];
    }
    S* out = dst + row * rowLength;
    if (constantRow) {
      std::fill_n(out, rowLength, value);
    } else {
      const S* in = src + base;
      for (int64_t j = 0; j < rowLength; ++j) out[j] = last[j] < 0 ? value : in[last[j]];
    }
    for (size_t d = rank - 1; d-- > 0;) {
      if (++index[d] < static_cast<int64_t>(maps[d].size())) break;
      index[d] = 0;
    }
  }
}

class PadKernel final : public Kernel {
 public:
  explicit PadKernel(const KernelInfo& info) : label_(info.node.label()), opset_(info.opset) {
    attrPads_ = info.node.attrInts(opset_ < 2 ? "paddings" : "pads");
    attrValue_ = info.node.attrFloat("value", 0.0f);
    modeName_ = info.node.attrString("mode", "constant");
  }
  Status init(const KernelInfo&) {
    if (modeName_ == "constant") {
      mode_ = PadMode::CONSTANT;
    } else if (modeName_ == "reflect") {
      mode_ = PadMode::REFLECT;
    } else if (modeName_ == "edge") {
      mode_ = PadMode::EDGE;
    } else if (modeName_ == "wrap") {
      mode_ = PadMode::WRAP;
    } else {
      return invalidArgument(label_ + ": unknown mode '" + modeName_ + "'");
    }
    return Status::ok();
  }

  Status compute(KernelContext& ctx) override {
    if (!ctx.hasInput(0)) return invalidArgument(label_ + ": missing data input");
    const Tensor& x = *ctx.input(0);
    const int64_t rank = static_cast<int64_t>(x.rank());
    std::vector<int64_t> pads = attrPads_;
    std::vector<int64_t> axes;
    if (opset_ >= 11) {
      if (!ctx.hasInput(1)) return invalidArgument(label_ + ": missing pads input");
      KILN_ASSIGN_OR_RETURN(pads, readIndexInput(label_, *ctx.input(1), "pads"));
      if (ctx.hasInput(3)) {
        KILN_ASSIGN_OR_RETURN(axes, readIndexInput(label_, *ctx.input(3), "axes"));
      }
    }
    if (axes.empty()) {
      for (int64_t d = 0; d < rank; ++d) axes.push_back(d);
    }
    if (pads.size() != 2 * axes.size()) {
      return invalidArgument(label_ + ": expected " + std::to_string(2 * axes.size()) + " pads for rank " +
                             std::to_string(rank) + ", got " + std::to_string(pads.size()));
    }
    std::vector<int64_t> before(rank, 0), after(rank, 0);
    for (size_t k = 0; k < axes.size(); ++k) {
      KILN_ASSIGN_OR_RETURN(int64_t axis, normalizeAxis(axes[k], rank));
      before[axis] = pads[k];
      after[axis] = pads[k + axes.size()];
    }
    if (rank == 0) {
      ctx.setOutput(0, x);
      return Status::ok();
    }
    Shape outShape(rank);
    std::vector<std::vector<int64_t>> maps(rank);
    for (int64_t d = 0; d < rank; ++d) {
      KILN_ASSIGN_OR_RETURN(maps[d], axisIndexMap(x.dim(d), before[d], after[d], mode_, label_));
      outShape[d] = static_cast<int64_t>(maps[d].size());
    }
    KILN_ASSIGN_OR_RETURN(Tensor value, constantValue(ctx, x.dtype()));
    Tensor& out = ctx.allocateOutput(0, x.dtype(), outShape);
    return dispatchStorage(x.dtype(), [&]<class S>() {
      padElements<S>(x, maps, elementsOf<S>(value)[0], out);
      return Status::ok();
    });
  }

 private:
  // The pad value as a one-element tensor of the data's type (zero / empty string when not given).
  Result<Tensor> constantValue(KernelContext& ctx, DataType type) const {
    if (opset_ >= 11 && ctx.hasInput(2) && mode_ == PadMode::CONSTANT) {
      const Tensor& value = *ctx.input(2);
      if (value.dtype() != type) return invalidArgument(label_ + ": constant_value must have the data's type");
      if (value.numel() != 1) return invalidArgument(label_ + ": constant_value must be a scalar");
      return value;
    }
    Tensor value(type, {1});
    if (opset_ < 11 && attrValue_ != 0.0f) {
      KILN_RETURN_IF_ERROR(dispatchType<KILN_NUMERIC_TYPES>(type, [&]<class T>() {
        value.data<T>()[0] = static_cast<T>(static_cast<ComputeType<T>>(attrValue_));
        return Status::ok();
      }));
    }
    return value;
  }

  std::string label_;
  int64_t opset_;
  std::vector<int64_t> attrPads_;
  float attrValue_;
  std::string modeName_;
  PadMode mode_ = PadMode::CONSTANT;
};

}  // namespace

void registerPadKernels(KernelRegistry& registry) {
  registry.add("Pad", 1, kAnyOpset, [](const KernelInfo& info) -> Result<std::unique_ptr<Kernel>> {
    auto kernel = std::make_unique<PadKernel>(info);
    KILN_RETURN_IF_ERROR(kernel->init(info));
    return std::unique_ptr<Kernel>(std::move(kernel));
  });
}

}  // namespace kiln::cpu
