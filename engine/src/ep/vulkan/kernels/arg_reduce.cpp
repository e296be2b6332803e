// Vulkan kernels: ArgMax and ArgMin (every opset: negative axes from 11, select_last_index from 12) on shaders/arg_reduce.comp,
// so a graph that picks its token (greedy decoding) or a class keeps the pick on the device. float32 and float16
// inputs; int64 output.
#include <algorithm>
#include <string>

#include "ep/vulkan/kernel_registry.h"
#include "ep/vulkan/kernel_utils.h"

namespace kiln::vk {
namespace {

constexpr uint32_t kLocal = 64;

class ArgReduceKernel final : public VkKernel {
 public:
  ArgReduceKernel(const KernelCreateInfo& info, bool isMax)
      : opType_(info.node.opType), axis_(info.node.attrInt("axis", 0)),
        keepDims_(info.node.attrInt("keepdims", 1) != 0) {
    ShaderVariant variant{"arg_reduce", {}, 2, kLocal};
    variant.define("MAX", isMax ? 1 : 0).define("LAST", info.node.attrInt("select_last_index", 0) != 0 ? 1 : 0);
    shader_ = useShader(storedAs(variant, floatStorage(info)));
  }

  Status record(RecordContext& ctx) override {
    KILN_ASSIGN_OR_RETURN(const VkTensor* x, ctx.deviceInput(0));
    const int64_t rank = static_cast<int64_t>(x->shape.size());
    KILN_ASSIGN_OR_RETURN(const int64_t axis, normalizeAxis(axis_, std::max<int64_t>(rank, 1), opType_ + " axis"));
    const int64_t n = rank == 0 ? 1 : x->shape[static_cast<size_t>(axis)];
    int64_t inner = 1;
    Shape shape;
    for (int64_t d = 0; d < rank; ++d) {
      if (d > axis) inner *= x->shape[static_cast<size_t>(d)];
      if (d != axis) shape.push_back(x->shape[static_cast<size_t>(d)]);
      else if (keepDims_) shape.push_back(1);
    }
    const int64_t count = shapeSize(shape);
    if (n == 0 && count != 0) {
      return Status(StatusCode::INVALID_ARGUMENT, opType_ + ": cannot take the arg extreme of an empty axis");
    }
    KILN_ASSIGN_OR_RETURN(const VkTensor* y, ctx.allocateOutput(0, DataType::INT64, shape));
    if (count == 0) return Status::ok();
    uint32_t rowStride = 0;
    const auto groups = linearGroups(static_cast<uint64_t>(count), kLocal, &rowStride);
    PushConstants push;
    push.u32(count).u32(rowStride).u32(n).u32(std::max<int64_t>(inner, 1));
    const BufferRange buffers[] = {x->range(), y->range()};
    return ctx.dispatch(shader_, buffers, push.data(), push.size(), groups);
  }

 private:
  std::string opType_;
  int64_t axis_;
  bool keepDims_;
  uint32_t shader_ = 0;
};

// A float32 input, or float16 where the device stores 16-bit values; the int64 output is written as words.
NodeSupport checkArgReduce(const SupportQuery& q) {
  const DataType type = q.inputType(0);
  if (type == DataType::FLOAT16 && !q.device.storageBuffer16Bit) {
    return unsupported("float16 needs storageBuffer16BitAccess, which the device lacks (the node runs on the CPU EP)");
  }
  if (type != DataType::FLOAT && type != DataType::FLOAT16) {
    return unsupported("input is " + std::string(dataTypeName(type)) + " (the Vulkan kernel reads float32 or float16)");
  }
  return supported();
}

KernelEntry argEntry(const char* op, bool isMax) {
  return {op, 1, 1 << 30, checkArgReduce,
          [isMax](const KernelCreateInfo& info) -> Result<std::unique_ptr<VkKernel>> {
            return std::unique_ptr<VkKernel>(new ArgReduceKernel(info, isMax));
          }};
}

}  // namespace

void registerArgReduceKernels(std::vector<KernelEntry>& out) {
  out.push_back(argEntry("ArgMax", true));
  out.push_back(argEntry("ArgMin", false));
}

}  // namespace kiln::vk
