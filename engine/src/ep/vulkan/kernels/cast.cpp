// Vulkan kernels: Cast and CastLike between float32, int32, int64 and float16 (where the device has 16-bit
// storage), and from uint8/int8 (packed four to a word) to those, shaders/cast.comp. Same-type casts are a buffer
// copy. Other types (double, bool, strings, casts to 8-bit, ...) stay with the CPU EP.
#include "ep/vulkan/kernel_registry.h"
#include "ep/vulkan/kernel_utils.h"

namespace kiln::vk {
namespace {

constexpr uint32_t kLocal = 64;

// The shader's type code, or -1.
int typeCode(DataType type) {
  switch (type) {
    case DataType::FLOAT16:
      return 3;
    case DataType::FLOAT:
      return 0;
    case DataType::INT32:
      return 1;
    case DataType::INT64:
      return 2;
    case DataType::UINT8:
      return 4;
    case DataType::INT8:
      return 5;
    default:
      return -1;
  }
}

class CastKernel final : public VkKernel {
 public:
  CastKernel(DataType from, DataType to) : to_(to), same_(from == to) {
    if (!same_) {
      ShaderVariant variant{"cast", {}, 2, kLocal};
      variant.define("SRC_TYPE", static_cast<int64_t>(typeCode(from)))
          .define("DST_TYPE", static_cast<int64_t>(typeCode(to)));
      shader_ = useShader(variant);
    }
  }

  Status record(RecordContext& ctx) override {
    KILN_ASSIGN_OR_RETURN(const VkTensor* x, ctx.deviceInput(0));
    KILN_ASSIGN_OR_RETURN(const VkTensor* y, ctx.allocateOutput(0, to_, x->shape));
    const uint64_t count = static_cast<uint64_t>(x->elementCount());
    if (count == 0) return Status::ok();
    if (same_) return ctx.copy(x->range(), y->range(), count * dataTypeSize(to_));
    uint32_t rowStride = 0;
    const auto groups = linearGroups(count, kLocal, &rowStride);
    PushConstants push;
    push.u32(count).u32(rowStride);
    const BufferRange buffers[] = {x->range(), y->range()};
    return ctx.dispatch(shader_, buffers, push.data(), push.size(), groups);
  }

 private:
  DataType to_;
  bool same_;
  uint32_t shader_ = 0;
};

// Cast's target comes from the `to` attribute, CastLike's from its second input.
template <class Info>  // SupportQuery or KernelCreateInfo
DataType targetOf(const Info& info) {
  if (info.node.opType == "CastLike") return info.inputType(1);
  return static_cast<DataType>(info.node.attrInt("to", 0));
}

NodeSupport castSupport(const SupportQuery& q) {
  const DataType from = q.inputType(0), to = targetOf(q);
  if (typeCode(from) < 0 || typeCode(to) < 0 || (typeCode(to) >= 4 && from != to)) {
    return unsupported(std::string("cast from ") + dataTypeName(from) + " to " + dataTypeName(to) +
                       " (the Vulkan Cast converts float32, float16, int32 and int64, and uint8/int8 to those)");
  }
  if ((from == DataType::FLOAT16 || to == DataType::FLOAT16) && !deviceStoresFloat16(q.device)) {
    return unsupported("cast to or from float16 needs storageBuffer16BitAccess, which the device lacks");
  }
  return supported();
}

Result<std::unique_ptr<VkKernel>> createCast(const KernelCreateInfo& info) {
  return std::unique_ptr<VkKernel>(
      new CastKernel(info.inputType(0), targetOf(info)));
}

}  // namespace

void registerCastKernels(std::vector<KernelEntry>& out) {
  out.push_back({"Cast", 6, 1 << 30, castSupport, createCast});
  out.push_back({"CastLike", 15, 1 << 30, castSupport, createCast});
}

}  // namespace kiln::vk
