// Vulkan kernels: MaxPool (without the Indices output) and AveragePool over 1 or 2 spatial dims (1-D as height
// 1), GlobalAveragePool and GlobalMaxPool over any rank, float32 or float16 storage (shaders/pool2d.comp); MaxPool
// also on uint8/int8 where the device has 8-bit storage. Window geometry
// (auto_pad, pads, ceil_mode, dilations) is resolved exactly as the CPU EP does.
#include "ep/vulkan/kernel_registry.h"
#include "ep/vulkan/kernel_utils.h"
#include "ops/window_geometry.h"

namespace kiln::vk {
namespace {

constexpr uint32_t kLocal = 64;

bool isByte(DataType type) { return type == DataType::UINT8 || type == DataType::INT8; }

class PoolKernel final : public VkKernel {
 public:
  PoolKernel(const KernelCreateInfo& info, bool average)
      : attrs_(ops::WindowAttributes::read(info.node)),
        countIncludePad_(info.node.attrInt("count_include_pad", 0) != 0) {
    ShaderVariant variant{"pool2d", {}, 2, kLocal};
    variant.define("GLOBAL", 0).define("AVERAGE", average ? 1 : 0);
    const DataType type = info.inputType(0);
    if (isByte(type)) {  // uint8/int8 MaxPool: Q8 defines only, so the float variants' keys are unchanged
      shader_ = useShader(variant.define("Q8", 1).define("SIGNED", type == DataType::INT8 ? 1 : 0));
    } else {
      shader_ = useShader(storedAs(variant, floatStorage(info)));
    }
  }

  Status record(RecordContext& ctx) override {
    KILN_ASSIGN_OR_RETURN(const VkTensor* x, ctx.deviceInput(0));
    const Shape& xs = x->shape;
    if (xs.size() != 3 && xs.size() != 4) {
      return Status(StatusCode::NOT_IMPLEMENTED, "Vulkan pooling takes 1 or 2 spatial dims, got " + shapeToString(xs));
    }
    if (attrs_.kernelShape.size() != xs.size() - 2) {
      return Status(StatusCode::INVALID_ARGUMENT, "kernel_shape must have one value per spatial dimension");
    }
    const std::vector<int64_t> spatial(xs.begin() + 2, xs.end());
    KILN_ASSIGN_OR_RETURN(ops::WindowGeometry g, ops::resolveForwardWindow(attrs_, spatial, attrs_.kernelShape));
    Shape ys = {xs[0], xs[1]};
    ys.insert(ys.end(), g.out.begin(), g.out.end());
    KILN_ASSIGN_OR_RETURN(const VkTensor* y, ctx.allocateOutput(0, x->dtype, ys));
    // 1-D pools run with height 1.
    auto hw = [&](const std::vector<int64_t>& v, int64_t fill) {
      return v.size() == 1 ? std::array<int64_t, 2>{fill, v[0]} : std::array<int64_t, 2>{v[0], v[1]};
    };
    const auto in = hw(g.in, 1), out = hw(g.out, 1), k = hw(g.kernel, 1), s = hw(g.strides, 1),
               d = hw(g.dilations, 1), pb = hw(g.padBegin, 0), pe = hw(g.padEnd, 0);
    uint32_t rowStride = 0;
    const auto groups = linearGroups(static_cast<uint64_t>(y->elementCount()), kLocal, &rowStride);
    PushConstants push;
    push.u32(y->elementCount()).u32(rowStride).u32(in[0]).u32(in[1]).u32(out[0]).u32(out[1]);
    push.u32(k[0]).u32(k[1]).u32(s[0]).u32(s[1]).u32(d[0]).u32(d[1]).i32(pb[0]).i32(pb[1]).i32(pe[0]).i32(pe[1]);
    push.u32(countIncludePad_ ? 1 : 0);
    const BufferRange buffers[] = {x->range(), y->range()};
    return ctx.dispatch(shader_, buffers, push.data(), push.size(), groups);
  }

 private:
  ops::WindowAttributes attrs_;
  bool countIncludePad_;
  uint32_t shader_ = 0;
};

class GlobalPoolKernel final : public VkKernel {
 public:
  GlobalPoolKernel(const KernelCreateInfo& info, bool average) {
    ShaderVariant variant{"pool2d", {}, 2, kLocal};
    variant.define("GLOBAL", 1).define("AVERAGE", average ? 1 : 0);
    shader_ = useShader(storedAs(variant, floatStorage(info)));
  }

  Status record(RecordContext& ctx) override {
    KILN_ASSIGN_OR_RETURN(const VkTensor* x, ctx.deviceInput(0));
    if (x->shape.size() < 2) {
      return Status(StatusCode::INVALID_ARGUMENT, "X must be [N, C, ...], got " + shapeToString(x->shape));
    }
    Shape ys = x->shape;
    std::fill(ys.begin() + 2, ys.end(), 1);
    KILN_ASSIGN_OR_RETURN(const VkTensor* y, ctx.allocateOutput(0, x->dtype, ys));
    const int64_t planes = x->shape[0] * x->shape[1];
    const int64_t planeSize = planes == 0 ? 0 : x->elementCount() / planes;
    // One workgroup per plane: linearGroups with a local size of 1 counts workgroups.
    uint32_t rowStride = 0;
    const auto groups = linearGroups(static_cast<uint64_t>(planes), 1, &rowStride);
    PushConstants push;
    push.u32(planeSize).u32(planes).u32(rowStride);
    const BufferRange buffers[] = {x->range(), y->range()};
    return ctx.dispatch(shader_, buffers, push.data(), push.size(), groups);
  }

 private:
  uint32_t shader_ = 0;
};

NodeSupport checkPool(const SupportQuery& q, bool max) {
  NodeSupport s = supported();
  if (max && isByte(q.inputType(0))) {  // uint8/int8 MaxPool (opset 12) compares bytes: needs 8-bit storage
    if (!q.device.storageBuffer8Bit) {
      return unsupported("8-bit MaxPool needs storageBuffer8BitAccess, which the device lacks");
    }
    if (q.outputType(0) != DataType::UNDEFINED && q.outputType(0) != q.inputType(0)) {
      return unsupported("output type differs from the input's");
    }
  } else {
    s = requireFloat(q, {0});
  }
  if (!s.supported) return s;
  const size_t spatial = q.node.attrInts("kernel_shape").size();
  if (spatial != 1 && spatial != 2) return unsupported("only 1-D and 2-D pooling runs on Vulkan");
  if (max && q.node.outputs.size() > 1 && !q.node.outputs[1].empty()) {
    return unsupported("MaxPool's Indices output is not implemented on Vulkan");
  }
  const std::string autoPad = q.node.attrString("auto_pad", "NOTSET");
  if (!autoPad.empty() && autoPad != "NOTSET" && autoPad != "VALID" && autoPad != "SAME_UPPER" &&
      autoPad != "SAME_LOWER") {
    return unsupported("unknown auto_pad '" + autoPad + "'");
  }
  return supported();
}

template <class K>
KernelFactory factory(bool average) {
  return [average](const KernelCreateInfo& info) -> Result<std::unique_ptr<VkKernel>> {
    return std::unique_ptr<VkKernel>(new K(info, average));
  };
}

}  // namespace

void registerPoolKernels(std::vector<KernelEntry>& out) {
  out.push_back({"MaxPool", 1, 1 << 30, [](const SupportQuery& q) { return checkPool(q, true); },
                 factory<PoolKernel>(false)});
  out.push_back({"AveragePool", 1, 1 << 30, [](const SupportQuery& q) { return checkPool(q, false); },
                 factory<PoolKernel>(true)});
  out.push_back({"GlobalAveragePool", 1, 1 << 30, [](const SupportQuery& q) { return requireFloat(q, {0}); },
                 factory<GlobalPoolKernel>(true)});
  out.push_back({"GlobalMaxPool", 1, 1 << 30, [](const SupportQuery& q) { return requireFloat(q, {0}); },
                 factory<GlobalPoolKernel>(false)});
}

}  // namespace kiln::vk
