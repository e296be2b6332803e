// Vulkan kernel: Pad (constant, reflect, edge, wrap) for float32, float16 and int32 data (uint8/int8 with
// 8-bit storage), shaders/pad.comp. Pads come
// from attributes before opset 11 and from host inputs after (axes from 18). Negative pads crop: the crop
// becomes the shader's source offset and kept extent, so the shader only pads.
#include <cstring>

#include "ep/vulkan/kernel_registry.h"
#include "ep/vulkan/kernel_utils.h"

namespace kiln::vk {
namespace {

constexpr uint32_t kLocal = 64;
constexpr uint32_t kChunk = 8;  // output elements per invocation (see pad.comp)

enum PadMode : uint32_t { kConstant = 0, kReflect = 1, kEdge = 2, kWrap = 3 };

bool isByte(DataType type) { return type == DataType::UINT8 || type == DataType::INT8; }

int modeOf(const std::string& name) {
  if (name == "constant") return kConstant;
  if (name == "reflect") return kReflect;
  if (name == "edge") return kEdge;
  if (name == "wrap") return kWrap;
  return -1;
}

class PadKernel final : public VkKernel {
 public:
  explicit PadKernel(const KernelCreateInfo& info) : opset_(info.opset) {
    ShaderVariant variant{"pad", {}, 2, kLocal};
    mode_ = static_cast<uint32_t>(modeOf(info.node.attrString("mode", "constant")));
    variant.define("CHUNK", static_cast<int64_t>(kChunk)).define("MODE", static_cast<int64_t>(mode_));
    if (info.inputType(0) == DataType::FLOAT16) variant.define("ELEM16", 1);
    if (isByte(info.inputType(0))) variant.define("ELEM8", 1);
    shader_ = useShader(variant);
    attrPads_ = info.node.attrInts(opset_ < 2 ? "paddings" : "pads");
    attrValue_ = info.node.attrFloat("value", 0.0f);
  }

  Status record(RecordContext& ctx) override {
    KILN_ASSIGN_OR_RETURN(const VkTensor* x, ctx.deviceInput(0));
    const int64_t rank = static_cast<int64_t>(x->shape.size());
    std::vector<int64_t> pads = attrPads_, axes;
    if (opset_ >= 11) {
      KILN_ASSIGN_OR_RETURN(pads, hostInts(ctx.input(1), "Pad pads"));
      if (ctx.input(3)) {
        KILN_ASSIGN_OR_RETURN(axes, hostInts(ctx.input(3), "Pad axes"));
      }
    }
    if (axes.empty()) {
      for (int64_t d = 0; d < rank; ++d) axes.push_back(d);
    }
    if (pads.size() != 2 * axes.size()) {
      return Status(StatusCode::INVALID_ARGUMENT, "Pad expects " + std::to_string(2 * axes.size()) +
                                                      " pads, got " + std::to_string(pads.size()));
    }
    std::vector<int64_t> before(x->shape.size(), 0), after(x->shape.size(), 0);
    for (size_t k = 0; k < axes.size(); ++k) {
      KILN_ASSIGN_OR_RETURN(int64_t axis, normalizeAxis(axes[k], rank, "Pad axis"));
      before[static_cast<size_t>(axis)] = pads[k];
      after[static_cast<size_t>(axis)] = pads[k + axes.size()];
    }
    KILN_ASSIGN_OR_RETURN(uint32_t valueBits, padValue(ctx, x->dtype));
    // Crop first (negative pads), then pad the kept range [lo, hi) of every axis.
    const auto strides = contiguousStrides(x->shape);
    Shape outShape(x->shape.size());
    std::vector<int64_t> kept(x->shape.size()), padBefore(x->shape.size());
    int64_t srcOffset = 0;
    for (size_t d = 0; d < x->shape.size(); ++d) {
      const int64_t lo = std::max<int64_t>(0, -before[d]), hi = x->shape[d] - std::max<int64_t>(0, -after[d]);
      outShape[d] = x->shape[d] + before[d] + after[d];
      if (outShape[d] < 0) return Status(StatusCode::INVALID_ARGUMENT, "Pad crops more than the dimension");
      kept[d] = std::max<int64_t>(hi - lo, 0);
      padBefore[d] = std::max<int64_t>(0, before[d]);
      if (kept[d] == 0 && outShape[d] > 0 && mode_ != kConstant) {
        return Status(StatusCode::INVALID_ARGUMENT,
                      "Pad cannot pad an empty axis in reflect, edge or wrap mode");
      }
      srcOffset += lo * strides[d];
    }
    KILN_ASSIGN_OR_RETURN(const VkTensor* y, ctx.allocateOutput(0, x->dtype, outShape));
    const int64_t count = shapeSize(outShape);
    if (count == 0) return Status::ok();
    std::vector<uint32_t> dims(outShape.begin(), outShape.end());
    uint32_t rowStride = 0;
    const auto groups =
        linearGroups((static_cast<uint64_t>(count) + kChunk - 1) / kChunk, kLocal, &rowStride);
    PushConstants push;
    push.u32(count).u32(rowStride).u32(dims.size()).u32(valueBits).i32(srcOffset);
    push.u32Array(dims, kMaxRank, 1)
        .i32Array(kept, kMaxRank, 1)
        .i32Array(padBefore, kMaxRank)
        .i32Array(strides, kMaxRank);
    const BufferRange buffers[] = {x->range(), y->range()};
    return ctx.dispatch(shader_, buffers, push.data(), push.size(), groups);
  }

 private:
  // The constant's bits in the data's type (zero unless given).
  Result<uint32_t> padValue(const RecordContext& ctx, DataType type) const {
    uint32_t bits = 0;
    if (type == DataType::FLOAT || type == DataType::FLOAT16) {
      float value = opset_ < 11 ? attrValue_ : 0.0f;
      if (opset_ >= 11 && ctx.input(2)) {
        KILN_ASSIGN_OR_RETURN(auto values, hostFloats(ctx.input(2), "Pad constant_value"));
        if (!values.empty()) value = values[0];
      }
      if (type == DataType::FLOAT16) return static_cast<uint32_t>(Float16(value).bits);
      std::memcpy(&bits, &value, sizeof bits);
    } else if (isByte(type)) {
      // The 8-bit constant (a QDQ drop's zero point): its byte in the low 8 bits.
      const VkTensor* given = opset_ >= 11 ? ctx.input(2) : nullptr;
      if (!given) return 0u;  // (before opset 11 Pad takes no 8-bit data)
      if (!given->host) return Status(StatusCode::FAIL, "Pad constant_value is not known on the host");
      const Tensor& t = *given->host;
      if (t.dtype() != type) {
        return Status(StatusCode::INVALID_ARGUMENT, "Pad constant_value must be " +
                                                        std::string(dataTypeName(type)) + ", got " +
                                                        dataTypeName(t.dtype()));
      }
      if (t.numel() > 0) bits = static_cast<uint32_t>(*static_cast<const uint8_t*>(t.rawData()));
    } else {
      int32_t value = opset_ < 11 ? static_cast<int32_t>(attrValue_) : 0;
      if (opset_ >= 11 && ctx.input(2)) {
        KILN_ASSIGN_OR_RETURN(auto values, hostInts(ctx.input(2), "Pad constant_value"));
        if (!values.empty()) value = static_cast<int32_t>(values[0]);
      }
      std::memcpy(&bits, &value, sizeof bits);
    }
    return bits;
  }

  int64_t opset_;
  uint32_t shader_ = 0;
  uint32_t mode_ = kConstant;
  std::vector<int64_t> attrPads_;
  float attrValue_ = 0;
};

NodeSupport padSupport(const SupportQuery& q) {
  const DataType type = q.inputType(0);
  const bool half = type == DataType::FLOAT16 && deviceStoresFloat16(q.device);
  const bool bytes = isByte(type) && q.device.storageBuffer8Bit;
  if (type != DataType::FLOAT && type != DataType::INT32 && !half && !bytes) {
    return unsupported("data is " +
                       (type == DataType::UNDEFINED ? std::string("of unknown type") : dataTypeName(type)) +
                       " (the Vulkan Pad takes float32, float16 with 16-bit storage, int32, or uint8/int8 "
                       "with 8-bit storage)");
  }
  const std::string mode = q.node.attrString("mode", "constant");
  if (modeOf(mode) < 0) return unsupported("Pad mode '" + mode + "'");
  NodeSupport s = requireRankAtMost(q, 0);
  for (size_t i = 1; i <= 3 && s.supported; ++i) s = requireHostInput(q, i, "a Pad parameter");
  return s;
}

}  // namespace

void registerPadKernels(std::vector<KernelEntry>& out) {
  out.push_back(
      {"Pad", 1, 1 << 30, padSupport, [](const KernelCreateInfo& info) -> Result<std::unique_ptr<VkKernel>> {
         return std::unique_ptr<VkKernel>(new PadKernel(info));
       }});
}

}  // namespace kiln::vk
