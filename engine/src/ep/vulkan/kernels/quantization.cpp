// Vulkan kernels: QuantizeLinear, DequantizeLinear (per tensor and per axis, uint8/int8; DequantizeLinear
// also int32 x without a zero point) and DynamicQuantizeLinear (uint8), shaders/quantize.comp and
// shaders/dynamic_range.comp. Results are bit-identical to the CPU EP's (engine/src/ep/cpu/kernels/
// quantize_linear.cpp): the same float operations in the same order, division correctly rounded
// (shaders/quantize_math.glsl). 8-bit tensors are device values like any other, four elements to a 32-bit
// word, so no 8-bit storage feature is needed. Float32 x, scales and outputs only (float16/bfloat16 scales of
// opset 19 and blocked quantization stay with the CPU EP).
#include "ep/vulkan/kernel_registry.h"
#include "ep/vulkan/kernel_utils.h"

namespace kiln::vk {
namespace {

constexpr uint32_t kLocal = 64;
constexpr uint32_t kReducePerInvocation =
    16;  // x elements each invocation of dynamic_range.comp's PASS 0 reads

bool isQuantized8(DataType type) { return type == DataType::UINT8 || type == DataType::INT8; }

std::string typeName(DataType type) {
  return type == DataType::UNDEFINED ? std::string("of unknown type") : dataTypeName(type);
}

// QuantizeLinear's output type as the CPU EP decides it: the zero point's (`zeroPointType`, UNDEFINED without
// one), else uint8. An output_dtype attribute (opset 21) naming another type without a zero point gives
// UNDEFINED: the node is left to the CPU EP.
DataType quantizedType(const ir::Node& node, DataType zeroPointType) {
  if (zeroPointType != DataType::UNDEFINED) return zeroPointType;
  const int64_t attribute = node.attrInt("output_dtype", 0);
  return attribute == 0 || attribute == static_cast<int64_t>(DataType::UINT8) ? DataType::UINT8
                                                                              : DataType::UNDEFINED;
}

// Where each element's scale and zero point come from: element i uses parameter (i / inner) % channels.
struct QuantLayout {
  uint64_t inner = 1, channels = 1;
};

// The layout of `scale` (and `zeroPoint`) over x, checked as the CPU EP checks it.
Result<QuantLayout> resolveLayout(const std::string& op, const VkTensor& x, const VkTensor& scale,
                                  const VkTensor* zeroPoint, int64_t axisAttr, bool perAxis) {
  auto fail = [&](const std::string& what) { return Status(StatusCode::INVALID_ARGUMENT, op + ": " + what); };
  if (zeroPoint && zeroPoint->elementCount() != scale.elementCount()) {
    return fail("zero point " + shapeToString(zeroPoint->shape) + " must match scale " +
                shapeToString(scale.shape));
  }
  QuantLayout layout;
  layout.inner = static_cast<uint64_t>(std::max<int64_t>(x.elementCount(), 1));
  if (scale.elementCount() == 1 && scale.shape.size() <= 1) return layout;
  if (!perAxis) return fail("scale " + shapeToString(scale.shape) + " must be a scalar at opset 10");
  if (scale.shape.size() != 1)
    return fail("scale must be a scalar or 1-D, got " + shapeToString(scale.shape));
  KILN_ASSIGN_OR_RETURN(const int64_t axis,
                        normalizeAxis(axisAttr, static_cast<int64_t>(x.shape.size()), op + " axis"));
  if (scale.elementCount() != x.shape[static_cast<size_t>(axis)]) {
    return fail("scale has " + std::to_string(scale.elementCount()) + " values but x " +
                shapeToString(x.shape) + " has " + std::to_string(x.shape[static_cast<size_t>(axis)]) +
                " along axis " + std::to_string(axis));
  }
  layout.channels = static_cast<uint64_t>(scale.elementCount());
  layout.inner = static_cast<uint64_t>(shapeSize(Shape(x.shape.begin() + axis + 1, x.shape.end())));
  return layout;
}

// The variant of quantize.comp for QuantizeLinear (`quantize`, 8-bit output of `type`) or DequantizeLinear
// (input of `type`).
ShaderVariant quantizeVariant(bool quantize, DataType type, bool dynamic) {
  ShaderVariant variant{"quantize", {}, 4, kLocal};
  variant.define("QUANTIZE", quantize ? 1 : 0)
      .define("SIGNED", type == DataType::INT8 ? 1 : 0)
      .define("X_INT32", type == DataType::INT32 ? 1 : 0)
      .define("DYNAMIC", dynamic ? 1 : 0);
  return variant;
}

// Records quantize.comp over `count` elements (one invocation per 32-bit word of the 8-bit tensor).
Status recordQuantize(RecordContext& ctx, uint32_t shader, uint64_t count, const QuantLayout& layout,
                      bool hasZeroPoint, const BufferRange& x, const BufferRange& scale,
                      const BufferRange& zeroPoint, const BufferRange& y) {
  if (count == 0) return Status::ok();
  uint32_t rowStride = 0;
  const auto groups = linearGroups((count + 3) / 4, kLocal, &rowStride);
  PushConstants push;
  push.u32(count).u32(rowStride).u32(layout.inner).u32(layout.channels).u32(hasZeroPoint ? 1 : 0);
  const BufferRange buffers[] = {x, scale, zeroPoint, y};
  return ctx.dispatch(shader, buffers, push.data(), push.size(), groups);
}

// QuantizeLinear (`quantize`) and DequantizeLinear.
class LinearQuantizeKernel final : public VkKernel {
 public:
  LinearQuantizeKernel(const KernelCreateInfo& info, bool quantize)
      : op_(info.node.opType),
        quantize_(quantize),
        axis_(info.node.attrInt("axis", 1)),
        perAxis_(info.opset >= 13) {
    const bool hasZeroPoint = info.node.inputs.size() > 2 && !info.node.inputs[2].empty();
    // QuantizeLinear's output type is its zero point's (else output_dtype's, else uint8); DequantizeLinear's
    // x type decides.
    type_ = quantize ? quantizedType(info.node, hasZeroPoint ? info.inputType(2) : DataType::UNDEFINED)
                     : info.inputType(0);
    shader_ = useShader(quantizeVariant(quantize, type_, false));
  }

  Status record(RecordContext& ctx) override {
    KILN_ASSIGN_OR_RETURN(const VkTensor* x, ctx.deviceInput(0));
    KILN_ASSIGN_OR_RETURN(const VkTensor* scale, ctx.deviceInput(1));
    const VkTensor* zeroPoint = nullptr;
    if (ctx.input(2) && type_ != DataType::INT32) {
      KILN_ASSIGN_OR_RETURN(zeroPoint, ctx.deviceInput(2));
    }
    KILN_ASSIGN_OR_RETURN(QuantLayout layout, resolveLayout(op_, *x, *scale, zeroPoint, axis_, perAxis_));
    KILN_ASSIGN_OR_RETURN(const VkTensor* y,
                          ctx.allocateOutput(0, quantize_ ? type_ : DataType::FLOAT, x->shape));
    return recordQuantize(ctx, shader_, static_cast<uint64_t>(x->elementCount()), layout,
                          zeroPoint != nullptr, x->range(), scale->range(),
                          zeroPoint ? zeroPoint->range() : scale->range(), y->range());
  }

 private:
  std::string op_;
  bool quantize_;
  int64_t axis_;
  bool perAxis_;
  DataType type_ = DataType::UINT8;  // the 8-bit (or int32) side's element type
  uint32_t shader_ = 0;
};

// DynamicQuantizeLinear: the range reduction (two passes of dynamic_range.comp: per-workgroup pairs, then one
// invocation that also computes y_scale and y_zero_point), then quantize.comp reading the parameters from the
// device. Nothing returns to the host in between.
class DynamicQuantizeKernel final : public VkKernel {
 public:
  DynamicQuantizeKernel() {
    ShaderVariant pairs{"dynamic_range", {}, 2, kLocal};
    pairs.define("PASS", 0).define("PER_INVOCATION", std::to_string(kReducePerInvocation) + "u");
    pairsShader_ = useShader(pairs);
    ShaderVariant params{"dynamic_range", {}, 3, 1};
    params.define("PASS", 1).define("PER_INVOCATION", std::to_string(kReducePerInvocation) + "u");
    paramsShader_ = useShader(params);
    quantizeShader_ = useShader(quantizeVariant(true, DataType::UINT8, true));
  }

  Status record(RecordContext& ctx) override {
    KILN_ASSIGN_OR_RETURN(const VkTensor* x, ctx.deviceInput(0));
    KILN_ASSIGN_OR_RETURN(const VkTensor* y, ctx.allocateOutput(0, DataType::UINT8, x->shape));
    KILN_ASSIGN_OR_RETURN(const VkTensor* scale, ctx.allocateOutput(1, DataType::FLOAT, {}));
    KILN_ASSIGN_OR_RETURN(const VkTensor* zeroPoint, ctx.allocateOutput(2, DataType::UINT8, {}));
    const uint64_t count = static_cast<uint64_t>(x->elementCount());
    const uint64_t perGroup = uint64_t{kLocal} * kReducePerInvocation;
    const uint64_t pairCount = (count + perGroup - 1) / perGroup;
    KILN_ASSIGN_OR_RETURN(BufferRange pairs, ctx.scratch(std::max<uint64_t>(pairCount, 1) * 8));
    if (pairCount > 0) {
      uint32_t rowStride = 0;
      const auto groups = linearGroups(pairCount * kLocal, kLocal, &rowStride);
      PushConstants push;
      push.u32(count).u32(rowStride);
      const BufferRange buffers[] = {x->range(), pairs};
      KILN_RETURN_IF_ERROR(ctx.dispatch(pairsShader_, buffers, push.data(), push.size(), groups));
    }
    PushConstants push;
    push.u32(pairCount).u32(1);
    const BufferRange paramBuffers[] = {pairs, scale->range(), zeroPoint->range()};
    KILN_RETURN_IF_ERROR(ctx.dispatch(paramsShader_, paramBuffers, push.data(), push.size(), {1, 1, 1}));
    QuantLayout layout;
    layout.inner = std::max<uint64_t>(count, 1);
    return recordQuantize(ctx, quantizeShader_, count, layout, true, x->range(), scale->range(),
                          zeroPoint->range(), y->range());
  }

 private:
  uint32_t pairsShader_ = 0, paramsShader_ = 0, quantizeShader_ = 0;
};

// Shared support rules: float32 scale, no blocked quantization.
NodeSupport scaleSupport(const SupportQuery& q) {
  if (q.node.attrInt("block_size", 0) != 0) return unsupported("blocked quantization (block_size)");
  if (q.inputType(1) != DataType::FLOAT) {
    return unsupported("scale is " + typeName(q.inputType(1)) + " (the Vulkan kernel takes float32)");
  }
  return supported();
}

NodeSupport quantizeSupport(const SupportQuery& q) {
  NodeSupport s = scaleSupport(q);
  if (!s.supported) return s;
  if (q.inputType(0) != DataType::FLOAT)
    return unsupported("x is " + typeName(q.inputType(0)) + " (float32 only)");
  if (q.hasInput(2) && q.inputType(2) == DataType::UNDEFINED)
    return unsupported("y_zero_point's type is unknown");
  const DataType out = quantizedType(q.node, q.hasInput(2) ? q.inputType(2) : DataType::UNDEFINED);
  if (!isQuantized8(out))
    return unsupported("y is " + typeName(out) + " (the Vulkan kernel writes uint8 or int8)");
  if (q.outputType(0) != DataType::UNDEFINED && q.outputType(0) != out) {
    return unsupported("output type differs from the zero point's");
  }
  return supported();
}

NodeSupport dequantizeSupport(const SupportQuery& q) {
  NodeSupport s = scaleSupport(q);
  if (!s.supported) return s;
  const DataType x = q.inputType(0);
  if (!isQuantized8(x) && x != DataType::INT32) {
    return unsupported("x is " + typeName(x) + " (the Vulkan kernel reads uint8, int8 or int32)");
  }
  if (q.hasInput(2) && q.inputType(2) != x) return unsupported("x_zero_point's type differs from x's");
  if (x == DataType::INT32 && q.hasInput(2)) {
    const Tensor* zp = q.constantInputs.size() > 2 ? q.constantInputs[2] : nullptr;
    bool zero = zp != nullptr;
    for (int64_t i = 0; zero && i < zp->numel(); ++i) zero = zp->data<int32_t>()[i] == 0;
    if (!zero) return unsupported("int32 x with a zero point that is not a constant 0");
  }
  if (q.outputType(0) != DataType::UNDEFINED && q.outputType(0) != DataType::FLOAT) {
    return unsupported("y is " + typeName(q.outputType(0)) + " (the Vulkan kernel writes float32)");
  }
  return supported();
}

NodeSupport dynamicQuantizeSupport(const SupportQuery& q) {
  if (q.inputType(0) != DataType::FLOAT)
    return unsupported("x is " + typeName(q.inputType(0)) + " (float32 only)");
  return supported();
}

}  // namespace

void registerQuantizationKernels(std::vector<KernelEntry>& out) {
  out.push_back({"QuantizeLinear", 10, 1 << 30, quantizeSupport,
                 [](const KernelCreateInfo& info) -> Result<std::unique_ptr<VkKernel>> {
                   return std::unique_ptr<VkKernel>(new LinearQuantizeKernel(info, true));
                 }});
  out.push_back({"DequantizeLinear", 10, 1 << 30, dequantizeSupport,
                 [](const KernelCreateInfo& info) -> Result<std::unique_ptr<VkKernel>> {
                   return std::unique_ptr<VkKernel>(new LinearQuantizeKernel(info, false));
                 }});
  out.push_back({"DynamicQuantizeLinear", 11, 1 << 30, dynamicQuantizeSupport,
                 [](const KernelCreateInfo&) -> Result<std::unique_ptr<VkKernel>> {
                   return std::unique_ptr<VkKernel>(new DynamicQuantizeKernel());
                 }});
}

}  // namespace kiln::vk
