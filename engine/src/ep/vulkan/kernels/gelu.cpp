// Vulkan kernels: the Gelu family on shaders/unary.comp, so a transformer's MLP activation stays on the device:
//  - Gelu (ai.onnx, opset 20): x Phi(x) exactly (approximate="none") or with the tanh approximation ("tanh");
//  - com.microsoft Gelu (exact), BiasGelu (exact, of x + bias), FastGelu (tanh form, of x + bias when a bias is
//    given) and QuickGelu (x sigmoid(alpha x), alpha 1.702 unless given).
// A bias is [hidden], x's last dimension, added before the activation in the same pass (BIAS variant).
#include <string>

#include "ep/vulkan/kernel_registry.h"
#include "ep/vulkan/kernel_utils.h"

namespace kiln::vk {
namespace {

constexpr uint32_t kLocal = 64;
constexpr const char* kExactGelu = "0.5 * v * (1.0 + erf_approx(v * 0.7071067811865476))";
constexpr const char* kTanhGelu =
    "0.5 * v * (1.0 + tanh(clamp(0.7978845608028654 * (v + 0.044715 * v * v * v), -15.0, 15.0)))";
constexpr const char* kQuickGelu = "v / (1.0 + exp(-alpha * v))";

enum class Bias { kNone, kOptional, kRequired };

class GeluKernel final : public VkKernel {
 public:
  GeluKernel(const KernelCreateInfo& info, const std::string& expression, Bias bias, float alpha)
      : opType_(info.node.opType), alpha_(alpha),
        hasBias_(bias != Bias::kNone && info.node.inputs.size() > 1 && !info.node.inputs[1].empty()) {
    ShaderVariant variant{"unary", {}, hasBias_ ? 3u : 2u, kLocal};
    variant.define("OP(v)", "(" + expression + ")").define("BIAS", hasBias_ ? 1 : 0);
    shader_ = useShader(storedAs(variant, floatStorage(info)));
  }

  Status record(RecordContext& ctx) override {
    KILN_ASSIGN_OR_RETURN(const VkTensor* x, ctx.deviceInput(0));
    std::vector<BufferRange> buffers{x->range()};
    int64_t biasCount = 1;
    if (hasBias_) {
      KILN_ASSIGN_OR_RETURN(const VkTensor* bias, ctx.deviceInput(1));
      if (x->shape.empty() || bias->shape != Shape{x->shape.back()}) {
        return Status(StatusCode::INVALID_ARGUMENT, opType_ + ": bias " + shapeToString(bias->shape) + " must be [" +
                                                        (x->shape.empty() ? std::string("?") : std::to_string(x->shape.back())) +
                                                        "], X's last dimension");
      }
      biasCount = std::max<int64_t>(1, bias->elementCount());
      buffers.push_back(bias->range());
    }
    KILN_ASSIGN_OR_RETURN(const VkTensor* y, ctx.allocateOutput(0, x->dtype, x->shape));
    if (x->elementCount() == 0) return Status::ok();
    buffers.push_back(y->range());
    uint32_t rowStride = 0;
    const auto groups = linearGroups(static_cast<uint64_t>(x->elementCount()), kLocal, &rowStride);
    PushConstants push;
    push.u32(x->elementCount()).u32(rowStride).f32(alpha_).f32(0).f32(0).u32(biasCount);
    return ctx.dispatch(shader_, buffers, push.data(), push.size(), groups);
  }

 private:
  std::string opType_;
  float alpha_;
  bool hasBias_;
  uint32_t shader_ = 0;
};

KernelFactory gelu(std::string expression, Bias bias) {
  return [expression, bias](const KernelCreateInfo& info) -> Result<std::unique_ptr<VkKernel>> {
    const float alpha = info.node.attrFloat("alpha", 1.702f);
    return std::unique_ptr<VkKernel>(new GeluKernel(info, expression, bias, alpha));
  };
}

NodeSupport checkGelu(const SupportQuery& q, Bias bias) {
  if (bias == Bias::kRequired && !q.hasInput(1)) return unsupported("BiasGelu without its bias");
  return requireFloat(q, {0, 1});
}

}  // namespace

void registerGeluKernels(std::vector<KernelEntry>& out) {
  out.push_back({"Gelu", 20, 1 << 30,
                 [](const SupportQuery& q) {
                   const std::string mode = q.node.attrString("approximate", "none");
                   if (mode != "none" && mode != "tanh") return unsupported("approximate='" + mode + "'");
                   return requireFloat(q, {0});
                 },
                 [](const KernelCreateInfo& info) -> Result<std::unique_ptr<VkKernel>> {
                   const bool tanhForm = info.node.attrString("approximate", "none") == "tanh";
                   return std::unique_ptr<VkKernel>(new GeluKernel(info, tanhForm ? kTanhGelu : kExactGelu, Bias::kNone, 0));
                 }});
  const std::string ms = ir::kMicrosoftDomain;
  out.push_back({"Gelu", 1, 1 << 30, [](const SupportQuery& q) { return checkGelu(q, Bias::kNone); },
                 gelu(kExactGelu, Bias::kNone), ms});
  out.push_back({"BiasGelu", 1, 1 << 30, [](const SupportQuery& q) { return checkGelu(q, Bias::kRequired); },
                 gelu(kExactGelu, Bias::kRequired), ms});
  out.push_back({"FastGelu", 1, 1 << 30, [](const SupportQuery& q) { return checkGelu(q, Bias::kOptional); },
                 gelu(kTanhGelu, Bias::kOptional), ms});
  out.push_back({"QuickGelu", 1, 1 << 30, [](const SupportQuery& q) { return checkGelu(q, Bias::kNone); },
                 gelu(kQuickGelu, Bias::kNone), ms});
}

}  // namespace kiln::vk
