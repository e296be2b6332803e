// Vulkan kernel: Trilu (opset 14) on shaders/trilu.comp, the triangle masks of attention (causal masks built in
// the graph) kept on the device. float32, float16 (16-bit storage), int32 and int64; k, when given, is read on the
// host.
#include <algorithm>

#include "ep/vulkan/kernel_registry.h"
#include "ep/vulkan/kernel_utils.h"

namespace kiln::vk {
namespace {

constexpr uint32_t kLocal = 64;

class TriluKernel final : public VkKernel {
 public:
  explicit TriluKernel(const KernelCreateInfo& info) {
    ShaderVariant variant{"trilu", {}, 2, kLocal};
    variant.define("UPPER", info.node.attrInt("upper", 1) != 0 ? 1 : 0);
    const DataType type = info.inputType(0);
    if (type == DataType::INT32 || type == DataType::INT64) {
      variant.define("WORDS", type == DataType::INT64 ? 2 : 1);
      shader_ = useShader(variant);
    } else {
      shader_ = useShader(storedAs(variant, floatStorage(info)));
    }
  }

  Status record(RecordContext& ctx) override {
    KILN_ASSIGN_OR_RETURN(const VkTensor* x, ctx.deviceInput(0));
    if (x->shape.size() < 2) {
      return Status(StatusCode::INVALID_ARGUMENT, "Trilu input " + shapeToString(x->shape) + " has rank below 2");
    }
    int64_t k = 0;
    if (ctx.input(1)) {
      KILN_ASSIGN_OR_RETURN(auto values, hostInts(ctx.input(1), "Trilu k"));
      if (values.size() != 1) return Status(StatusCode::INVALID_ARGUMENT, "Trilu k must hold one value");
      k = values[0];
    }
    const int64_t rows = x->shape[x->shape.size() - 2], cols = x->shape.back();
    // Beyond the matrix, every diagonal shift keeps all or nothing: clamp so the 32-bit push constant is exact.
    k = std::clamp<int64_t>(k, -rows - 1, cols + 1);
    KILN_ASSIGN_OR_RETURN(const VkTensor* y, ctx.allocateOutput(0, x->dtype, x->shape));
    if (x->elementCount() == 0) return Status::ok();
    uint32_t rowStride = 0;
    const auto groups = linearGroups(static_cast<uint64_t>(x->elementCount()), kLocal, &rowStride);
    PushConstants push;
    push.u32(x->elementCount()).u32(rowStride).u32(rows).u32(cols).i32(k);
    const BufferRange buffers[] = {x->range(), y->range()};
    return ctx.dispatch(shader_, buffers, push.data(), push.size(), groups);
  }

 private:
  uint32_t shader_ = 0;
};

}  // namespace

void registerTriluKernels(std::vector<KernelEntry>& out) {
  out.push_back({"Trilu", 14, 1 << 30,
                 [](const SupportQuery& q) {
                   const DataType type = q.inputType(0);
                   const bool integer = type == DataType::INT32 || type == DataType::INT64;
                   NodeSupport s = integer ? supported() : requireFloat(q, {0});
                   if (s.supported) s = requireHostInput(q, 1, "k");
                   return s;
                 },
                 [](const KernelCreateInfo& info) -> Result<std::unique_ptr<VkKernel>> {
                   return std::unique_ptr<VkKernel>(new TriluKernel(info));
                 }});
}

}  // namespace kiln::vk
