// Vulkan kernel: TopK (every opset: k an attribute before 10, input 1 from 10, largest from 11) on shaders/topk.comp,
// so a decoder's top-k sampling over its logits stays on the device. float32 and float16 values (16-bit storage),
// any axis; int64 indices. Ties keep the lower index first and the output is always sorted, as on the CPU EP
// (allowed for sorted=0). k is read on the host; a k known at compile time above kMaxK stays on the CPU EP, whose
// partial sort is cheaper than the shader's k rounds.
#include <algorithm>
#include <string>

#include "ep/vulkan/kernel_registry.h"
#include "ep/vulkan/kernel_utils.h"

namespace kiln::vk {
namespace {

// One workgroup per row: wide enough that a 50k-entry vocabulary is 200 elements per invocation.
constexpr uint32_t kLocal = 256;
// The largest k the support check accepts: each output element costs the shader a workgroup reduction round.
constexpr int64_t kMaxK = 256;

class TopKKernel final : public VkKernel {
 public:
  explicit TopKKernel(const KernelCreateInfo& info)
      : kFromInput_(info.opset >= 10), attrK_(info.node.attrInt("k", -1)), axis_(info.node.attrInt("axis", -1)),
        indicesWanted_(info.node.outputs.size() > 1 && !info.node.outputs[1].empty()) {
    ShaderVariant variant{"topk", {}, 3, kLocal};
    variant.define("LARGEST", info.node.attrInt("largest", 1) != 0 ? 1 : 0);
    shader_ = useShader(storedAs(variant, floatStorage(info)));
  }

  Status record(RecordContext& ctx) override {
    KILN_ASSIGN_OR_RETURN(const VkTensor* x, ctx.deviceInput(0));
    int64_t k = attrK_;
    if (kFromInput_) {
      KILN_ASSIGN_OR_RETURN(auto kValues, hostInts(ctx.input(1), "TopK k"));
      if (kValues.size() != 1) return Status(StatusCode::INVALID_ARGUMENT, "TopK k must hold one value");
      k = kValues[0];
    }
    const int64_t rank = static_cast<int64_t>(x->shape.size());
    KILN_ASSIGN_OR_RETURN(const int64_t axis, normalizeAxis(axis_, rank, "TopK axis"));
    const int64_t n = x->shape[static_cast<size_t>(axis)];
    if (k < 0 || k > n) {
      return Status(StatusCode::INVALID_ARGUMENT,
                    "TopK k = " + std::to_string(k) + " is outside [0, " + std::to_string(n) + "]");
    }
    int64_t outer = 1, inner = 1;
    for (int64_t d = 0; d < axis; ++d) outer *= x->shape[static_cast<size_t>(d)];
    for (int64_t d = axis + 1; d < rank; ++d) inner *= x->shape[static_cast<size_t>(d)];
    Shape shape = x->shape;
    shape[static_cast<size_t>(axis)] = k;
    KILN_ASSIGN_OR_RETURN(const VkTensor* values, ctx.allocateOutput(0, x->dtype, shape));
    BufferRange indices;
    const uint64_t count = static_cast<uint64_t>(shapeSize(shape));
    if (indicesWanted_) {
      KILN_ASSIGN_OR_RETURN(const VkTensor* out, ctx.allocateOutput(1, DataType::INT64, shape));
      indices = out->range();
    } else if (count > 0) {
      KILN_ASSIGN_OR_RETURN(indices, ctx.scratch(count * 8));
    }
    if (count == 0) return Status::ok();
    const int64_t rows = outer * inner;
    uint32_t rowStride = 0;
    const auto groups = linearGroups(static_cast<uint64_t>(rows), 1, &rowStride);  // one workgroup per row
    PushConstants push;
    push.u32(rows).u32(rowStride).u32(n).u32(inner).u32(k);
    const BufferRange buffers[] = {x->range(), values->range(), indices};
    return ctx.dispatch(shader_, buffers, push.data(), push.size(), groups);
  }

 private:
  bool kFromInput_;
  int64_t attrK_;
  int64_t axis_;
  bool indicesWanted_;
  uint32_t shader_ = 0;
};

// float32 values, or float16 where the device stores 16-bit values; k on the host and, when known, at most kMaxK.
NodeSupport checkTopK(const SupportQuery& q) {
  const DataType type = q.inputType(0);
  if (type == DataType::FLOAT16 && !q.device.storageBuffer16Bit) {
    return unsupported("float16 needs storageBuffer16BitAccess, which the device lacks (the node runs on the CPU EP)");
  }
  if (type != DataType::FLOAT && type != DataType::FLOAT16) {
    return unsupported("input is " + std::string(dataTypeName(type)) + " (the Vulkan kernel reads float32 or float16)");
  }
  int64_t k = -1;  // unknown until run time
  if (q.opset < 10) {
    k = q.node.attrInt("k", -1);
  } else {
    NodeSupport s = requireHostInput(q, 1, "k");
    if (!s.supported) return s;
    const Tensor* constant = q.constantInputs.size() > 1 ? q.constantInputs[1] : nullptr;
    if (constant && constant->dtype() == DataType::INT64 && constant->numel() == 1) k = constant->data<int64_t>()[0];
  }
  if (k > kMaxK) {
    return unsupported("k = " + std::to_string(k) + " is above " + std::to_string(kMaxK) +
                       ", the most the Vulkan kernel takes (one workgroup reduction per output element; the CPU "
                       "EP's partial sort is cheaper)");
  }
  return supported();
}

}  // namespace

void registerTopKKernels(std::vector<KernelEntry>& out) {
  out.push_back({"TopK", 1, 1 << 30, checkTopK, [](const KernelCreateInfo& info) -> Result<std::unique_ptr<VkKernel>> {
                   return std::unique_ptr<VkKernel>(new TopKKernel(info));
                 }});
}

}  // namespace kiln::vk
