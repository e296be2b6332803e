// Vulkan kernel: a chain of elementwise ops fused by device_fusions.cpp into one node (domain "kiln",
// FusedElementwise) and one dispatch of shaders/fused.comp.
#include "ep/vulkan/kernel_registry.h"
#include "ep/vulkan/kernel_utils.h"

namespace kiln::vk {
namespace {

constexpr uint32_t kLocal = 64;

class FusedElementwiseKernel final : public WorkgroupTunedKernel {
 public:
  explicit FusedElementwiseKernel(const KernelCreateInfo& info) : WorkgroupTunedKernel(info) {
    ShaderVariant variant{"fused", {}, 2, kLocal};
    variant.define("FUNCTIONS", info.node.attrString("kiln_functions", ""))
        .define("EXPRESSION", info.node.attrString("kiln_expression", "v"));
    shader_ = useTunedShader(storedAs(variant, floatStorage(info)));
  }

  Status record(RecordContext& ctx) override {
    KILN_ASSIGN_OR_RETURN(const VkTensor* x, ctx.deviceInput(0));
    KILN_ASSIGN_OR_RETURN(const VkTensor* y, ctx.allocateOutput(0, x->dtype, x->shape));
    uint32_t rowStride = 0;
    const auto groups = linearGroups(static_cast<uint64_t>(x->elementCount()), localSize(), &rowStride);
    PushConstants push;
    push.u32(x->elementCount()).u32(rowStride);
    const BufferRange buffers[] = {x->range(), y->range()};
    return ctx.dispatch(shader(shader_), buffers, push.data(), push.size(), groups);
  }

 private:
  uint32_t shader_ = 0;
};

}  // namespace

void registerFusedKernels(std::vector<KernelEntry>& out) {
  out.emplace_back("FusedElementwise", 1, 1 << 30, [](const SupportQuery& q) { return requireFloat(q, {0}); },
                   [](const KernelCreateInfo& info) -> Result<std::unique_ptr<VkKernel>> {
                     return std::unique_ptr<VkKernel>(new FusedElementwiseKernel(info));
                   },
                   kKilnDomain);
}

}  // namespace kiln::vk
