// Vulkan kernel: CumSum (opset 11+) on shaders/cumsum.comp, e.g. the position ids an exported decoder computes from
// its attention mask (int64), kept on the device. float32, float16 (16-bit storage), int32 and int64; the axis is
// read on the host.
#include <string>

#include "ep/vulkan/kernel_registry.h"
#include "ep/vulkan/kernel_utils.h"

namespace kiln::vk {
namespace {

constexpr uint32_t kLocal = 64;

class CumSumKernel final : public VkKernel {
 public:
  explicit CumSumKernel(const KernelCreateInfo& info) {
    ShaderVariant variant{"cumsum", {}, 2, kLocal};
    variant.define("EXCLUSIVE", info.node.attrInt("exclusive", 0) != 0 ? 1 : 0)
        .define("REVERSE", info.node.attrInt("reverse", 0) != 0 ? 1 : 0);
    const DataType type = info.inputType(0);
    if (type == DataType::INT64 || type == DataType::INT32) {
      shader_ = useShader(variant.define(type == DataType::INT64 ? "INT64" : "INT32", 1));
    } else {
      shader_ = useShader(storedAs(variant, floatStorage(info)));
    }
  }

  Status record(RecordContext& ctx) override {
    KILN_ASSIGN_OR_RETURN(const VkTensor* x, ctx.deviceInput(0));
    KILN_ASSIGN_OR_RETURN(auto axisValues, hostInts(ctx.input(1), "CumSum axis"));
    if (axisValues.size() != 1) return Status(StatusCode::INVALID_ARGUMENT, "CumSum axis must hold one value");
    const int64_t rank = static_cast<int64_t>(x->shape.size());
    KILN_ASSIGN_OR_RETURN(const int64_t axis, normalizeAxis(axisValues[0], rank, "CumSum axis"));
    int64_t outer = 1, inner = 1;
    for (int64_t d = 0; d < axis; ++d) outer *= x->shape[static_cast<size_t>(d)];
    for (int64_t d = axis + 1; d < rank; ++d) inner *= x->shape[static_cast<size_t>(d)];
    KILN_ASSIGN_OR_RETURN(const VkTensor* y, ctx.allocateOutput(0, x->dtype, x->shape));
    if (x->elementCount() == 0) return Status::ok();
    const int64_t lines = outer * inner;
    uint32_t rowStride = 0;
    const auto groups = linearGroups(static_cast<uint64_t>(lines), kLocal, &rowStride);
    PushConstants push;
    push.u32(lines).u32(rowStride).u32(x->shape[static_cast<size_t>(axis)]).u32(inner);
    const BufferRange buffers[] = {x->range(), y->range()};
    return ctx.dispatch(shader_, buffers, push.data(), push.size(), groups);
  }

 private:
  uint32_t shader_ = 0;
};

NodeSupport checkCumSum(const SupportQuery& q) {
  const DataType type = q.inputType(0);
  NodeSupport s = type == DataType::INT32 || type == DataType::INT64 ? supported() : requireFloat(q, {0});
  if (s.supported) s = requireHostInput(q, 1, "the axis");
  return s;
}

}  // namespace

void registerCumSumKernels(std::vector<KernelEntry>& out) {
  out.push_back({"CumSum", 11, 1 << 30, checkCumSum,
                 [](const KernelCreateInfo& info) -> Result<std::unique_ptr<VkKernel>> {
                   return std::unique_ptr<VkKernel>(new CumSumKernel(info));
                 }});
}

}  // namespace kiln::vk
