// CenterCropPad (opset 18): crops or zero-pads each of `axes` (default: all) to the length `shape` gives, keeping
// the centre. Like ONNX's reference, the odd element of an uneven crop or pad goes to the end: the kept or placed
// range starts at floor(|input - target| / 2). Any element type but string; negative axes count from the end.
#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "ep/cpu/kernel_registry.h"
#include "ep/cpu/kernel_utils.h"
#include "ep/cpu/kernels/data_movement.h"

namespace kiln::cpu {
namespace {

class CenterCropPadKernel : public Kernel {
 public:
  explicit CenterCropPadKernel(const KernelInfo& info)
      : label_(info.node.label()), axes_(info.node.attrInts("axes")), hasAxes_(info.node.hasAttribute("axes")) {}

  Status compute(KernelContext& ctx) override {
    const Tensor* x = ctx.input(0);
    const Tensor* shapeInput = ctx.input(1);
    if (!x || !shapeInput) return nodeError(label_, "inputs input_data and shape are required");
    if (x->dtype() == DataType::STRING) return notImplemented(label_ + ": string tensors are not supported");
    KILN_ASSIGN_OR_RETURN(std::vector<int64_t> target, readIndexInput(label_, *shapeInput, "shape"));
    const int64_t rank = static_cast<int64_t>(x->rank());
    std::vector<int64_t> axes = axes_;
    if (!hasAxes_) {
      for (int64_t a = 0; a < rank; ++a) axes.push_back(a);
    }
    if (axes.size() != target.size()) {
      return nodeError(label_, "shape has " + std::to_string(target.size()) + " values for " +
                                   std::to_string(axes.size()) + " axes");
    }
    const Shape& in = x->shape();
    Shape out = in;
    std::vector<int64_t> inStart(in.size(), 0), outStart(in.size(), 0), copy(in.begin(), in.end());
    std::vector<bool> seen(in.size(), false);
    for (size_t i = 0; i < axes.size(); ++i) {
      auto axis = normalizeAxis(axes[i], rank);
      if (!axis.isOk()) return nodeError(label_, axis.status().message());
      const size_t a = static_cast<size_t>(*axis);
      if (seen[a]) return nodeError(label_, "axis " + std::to_string(axes[i]) + " is repeated");
      seen[a] = true;
      if (target[i] < 0) return nodeError(label_, "shape value " + std::to_string(target[i]) + " is negative");
      out[a] = target[i];
      copy[a] = std::min(in[a], target[i]);
      (in[a] > target[i] ? inStart[a] : outStart[a]) = std::abs(in[a] - target[i]) / 2;
    }
    Tensor& y = ctx.allocateOutput(0, x->dtype(), out);
    const int64_t count = shapeSize(Shape(copy.begin(), copy.end()));
    if (count == 0) return Status::ok();
    const size_t element = dataTypeSize(x->dtype());
    const std::vector<int64_t> inStrides = stridesOf(in), outStrides = stridesOf(out);
    const auto* src = static_cast<const uint8_t*>(x->rawData());
    auto* dst = static_cast<uint8_t*>(y.rawData());
    std::vector<int64_t> index(in.size(), 0);
    for (int64_t n = 0; n < count; ++n) {
      int64_t from = 0, to = 0;
      for (size_t d = 0; d < in.size(); ++d) {
        from += (index[d] + inStart[d]) * inStrides[d];
        to += (index[d] + outStart[d]) * outStrides[d];
      }
      std::memcpy(dst + to * static_cast<int64_t>(element), src + from * static_cast<int64_t>(element), element);
      for (size_t d = in.size(); d-- > 0;) {
        if (++index[d] < copy[d]) break;
        index[d] = 0;
      }
    }
    return Status::ok();
  }

 private:
  std::string label_;
  std::vector<int64_t> axes_;
  bool hasAxes_;
};

}  // namespace

void registerCenterCropPadKernels(KernelRegistry& registry) {
  registry.add("CenterCropPad", 18, kAnyOpset, makeFactory<CenterCropPadKernel>());
}

}  // namespace kiln::cpu
