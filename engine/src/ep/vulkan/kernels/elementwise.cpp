// Vulkan kernels: elementwise unary ops (one shader, the op as a define), binary ops with broadcasting,
// variadic Sum/Mean/Max/Min, Clip, PRelu and Where. The op tables below are the variants.
#include "ep/vulkan/kernels/elementwise.h"

#include <cmath>
#include <cstring>

#include "ep/vulkan/kernel_registry.h"
#include "ep/vulkan/kernel_utils.h"

namespace kiln::vk {
namespace {

constexpr uint32_t kLocal = 64;

struct UnaryOp {
  const char* opType;
  const char* expression;  // of v, alpha, beta, gamma
  float alpha = 0, beta = 0, gamma = 0;  // attribute defaults
  const char* alphaAttr = nullptr;
  const char* betaAttr = nullptr;
  const char* gammaAttr = nullptr;
  int64_t since = 1;
};

const UnaryOp kUnaryOps[] = {
    {"Relu", "max(v, 0.0)"},
    {"Sigmoid", "1.0 / (1.0 + exp(-v))"},
    {"Tanh", "tanh(clamp(v, -15.0, 15.0))"},
    {"Erf", "erf_approx(v)"},
    {"Exp", "exp(v)"},
    {"Log", "log(v)"},
    {"Sqrt", "sqrt(v)"},
    {"Neg", "-v"},
    {"Abs", "abs(v)"},
    {"Reciprocal", "1.0 / v"},
    {"Floor", "floor(v)"},
    {"Ceil", "ceil(v)"},
    {"Round", "roundEven(v)"},
    {"Sign", "sign(v)"},
    {"Sin", "sin(v)"},
    {"Cos", "cos(v)"},
    {"Tan", "tan(v)"},
    {"Asin", "asin(v)"},
    {"Acos", "acos(v)"},
    {"Atan", "atan(v)"},
    {"Sinh", "sinh(v)"},
    {"Cosh", "cosh(v)"},
    {"Asinh", "asinh(v)"},
    {"Acosh", "acosh(v)"},
    {"Atanh", "atanh(v)"},
    {"Softplus", "softplus(v)"},
    {"Softsign", "v / (1.0 + abs(v))"},
    {"HardSwish", "v * clamp(v / 6.0 + 0.5, 0.0, 1.0)", 0, 0, 0, nullptr, nullptr, nullptr, 14},
    {"Mish", "v * tanh(clamp(softplus(v), -15.0, 15.0))", 0, 0, 0, nullptr, nullptr, nullptr, 18},
    {"Elu", "v >= 0.0 ? v : alpha * (exp(v) - 1.0)", 1.0f, 0, 0, "alpha"},
    {"Celu", "max(0.0, v) + min(0.0, alpha * (exp(v / alpha) - 1.0))", 1.0f, 0, 0, "alpha", nullptr, nullptr, 12},
    {"Selu", "v > 0.0 ? gamma * v : gamma * (alpha * exp(v) - alpha)", 1.67326319217681884765625f, 0,
     1.05070102214813232421875f, "alpha", nullptr, "gamma"},
    {"LeakyRelu", "v >= 0.0 ? v : alpha * v", 0.01f, 0, 0, "alpha"},
    {"HardSigmoid", "clamp(alpha * v + beta, 0.0, 1.0)", 0.2f, 0.5f, 0, "alpha", "beta"},
    {"ThresholdedRelu", "v > alpha ? v : 0.0", 1.0f, 0, 0, "alpha", nullptr, nullptr, 10},
    {"Clip", "clamp(v, alpha, beta)"},
};

// A unary op, or Clip (whose bounds come from attributes before opset 11 and from host inputs after).
class UnaryKernel final : public WorkgroupTunedKernel {
 public:
  UnaryKernel(const KernelCreateInfo& info, const UnaryOp& op)
      : WorkgroupTunedKernel(info), op_(op), opset_(info.opset) {
    ShaderVariant variant{"unary", {}, 2, kLocal};
    variant.define("OP(v)", std::string("(") + op.expression + ")");
    shader_ = useTunedShader(storedAs(variant, floatStorage(info)));
    alpha_ = op.alphaAttr ? info.node.attrFloat(op.alphaAttr, op.alpha) : op.alpha;
    beta_ = op.betaAttr ? info.node.attrFloat(op.betaAttr, op.beta) : op.beta;
    gamma_ = op.gammaAttr ? info.node.attrFloat(op.gammaAttr, op.gamma) : op.gamma;
    if (std::string(op.opType) == "Clip" && opset_ < 11) {
      alpha_ = info.node.attrFloat("min", -INFINITY);
      beta_ = info.node.attrFloat("max", INFINITY);
    }
  }

  Status record(RecordContext& ctx) override {
    KILN_ASSIGN_OR_RETURN(const VkTensor* x, ctx.deviceInput(0));
    float alpha = alpha_, beta = beta_;
    if (std::string(op_.opType) == "Clip" && opset_ >= 11) {
      alpha = -INFINITY;
      beta = INFINITY;
      if (ctx.input(1)) {
        KILN_ASSIGN_OR_RETURN(auto low, hostFloats(ctx.input(1), "Clip min"));
        if (!low.empty()) alpha = low[0];
      }
      if (ctx.input(2)) {
        KILN_ASSIGN_OR_RETURN(auto high, hostFloats(ctx.input(2), "Clip max"));
        if (!high.empty()) beta = high[0];
      }
    }
    KILN_ASSIGN_OR_RETURN(const VkTensor* y, ctx.allocateOutput(0, x->dtype, x->shape));
    uint32_t rowStride = 0;
    const auto groups = linearGroups(static_cast<uint64_t>(x->elementCount()), localSize(), &rowStride);
    PushConstants push;
    push.u32(x->elementCount()).u32(rowStride).f32(alpha).f32(beta).f32(gamma_);
    const BufferRange buffers[] = {x->range(), y->range()};
    return ctx.dispatch(shader(shader_), buffers, push.data(), push.size(), groups);
  }

 private:
  const UnaryOp& op_;
  int64_t opset_;
  uint32_t shader_ = 0;
  float alpha_ = 0, beta_ = 0, gamma_ = 0;
};

struct BinaryOp {
  const char* opType;
  const char* expression;  // of x, y
  int64_t since = 1;
};

const BinaryOp kBinaryOps[] = {
    {"Add", "x + y", 7}, {"Sub", "x - y", 7}, {"Mul", "x * y", 7}, {"Div", "x / y", 7},
    {"Pow", "pow_onnx(x, y)", 7}, {"PRelu", "x < 0.0 ? x * y : x", 7},
    {"Max", "max(x, y)", 8}, {"Min", "min(x, y)", 8}, {"Sum", "x + y", 8}, {"Mean", "x + y", 8},
};

class BinaryKernel final : public WorkgroupTunedKernel {
 public:
  BinaryKernel(const KernelCreateInfo& info, const BinaryOp& op)
      : WorkgroupTunedKernel(info), mean_(std::string(op.opType) == "Mean") {
    // Pow follows C: a negative base with an integral exponent keeps its sign.
    const std::string expression = std::string("(") + op.expression + ")";
    for (int broadcast = 0; broadcast < 3; ++broadcast) {
      ShaderVariant variant{"binary", {}, 3, kLocal};
      variant.define("OP(x, y)", expression).define("BROADCAST", broadcast);
      const uint32_t family = useTunedShader(storedAs(variant, floatStorage(info)));
      (broadcast == 0 ? families_.direct : broadcast == 1 ? families_.general : families_.grid) = family;
    }
    if (mean_) {
      ShaderVariant scale{"unary", {}, 2, kLocal};
      scale.define("OP(v)", "(v * alpha)");
      scale_ = useTunedShader(storedAs(scale, floatStorage(info)));
    }
  }

  Status record(RecordContext& ctx) override {
    KILN_ASSIGN_OR_RETURN(const VkTensor* first, ctx.deviceInput(0));
    if (ctx.inputCount() == 1) {
      // Variadic op of one input: a copy (Mean of one input is the input).
      KILN_ASSIGN_OR_RETURN(const VkTensor* out, ctx.allocateOutput(0, first->dtype, first->shape));
      return ctx.copy(first->range(), out->range(), static_cast<uint64_t>(first->elementCount()) * dataTypeSize(first->dtype));
    }
    Shape shape = first->shape;
    for (size_t i = 1; i < ctx.inputCount(); ++i) {
      const VkTensor* in = ctx.input(i);
      if (!in) continue;
      auto merged = broadcastShapes(shape, in->shape);
      if (!merged.isOk()) {
        return Status(StatusCode::INVALID_ARGUMENT, "shapes " + shapeToString(shape) + " and " +
                                                        shapeToString(in->shape) + " do not broadcast");
      }
      shape = *merged;
    }
    KILN_ASSIGN_OR_RETURN(const VkTensor* out, ctx.allocateOutput(0, first->dtype, shape));
    const VkTensor* accumulated = first;
    const BroadcastShaders shaders{shader(families_.direct), shader(families_.general), shader(families_.grid)};
    for (size_t i = 1; i < ctx.inputCount(); ++i) {
      KILN_ASSIGN_OR_RETURN(const VkTensor* next, ctx.deviceInput(i));
      // Later steps read the output in place: same index, so no hazard inside one dispatch.
      KILN_RETURN_IF_ERROR(recordBroadcast(ctx, shaders, {accumulated, next}, *out, localSize()));
      accumulated = out;
    }
    if (mean_) {
      uint32_t rowStride = 0;
      const auto groups = linearGroups(static_cast<uint64_t>(out->elementCount()), localSize(), &rowStride);
      PushConstants push;
      push.u32(out->elementCount()).u32(rowStride).f32(1.0 / static_cast<double>(ctx.inputCount())).f32(0).f32(0);
      const BufferRange buffers[] = {out->range(), out->range()};
      KILN_RETURN_IF_ERROR(ctx.dispatch(shader(scale_), buffers, push.data(), push.size(), groups));
    }
    return Status::ok();
  }

 private:
  bool mean_;
  BroadcastShaders families_;  // useTunedShader families (shader() gives the selected size's shader)
  uint32_t scale_ = 0;
};

class WhereKernel final : public VkKernel {
 public:
  explicit WhereKernel(const KernelCreateInfo& info) {
    shaders_.general = useShader(storedAs(ShaderVariant{"where", {}, 4, kLocal}, floatStorage(info, 1)));
  }

  Status record(RecordContext& ctx) override {
    KILN_ASSIGN_OR_RETURN(const VkTensor* cond, ctx.deviceInput(0));
    KILN_ASSIGN_OR_RETURN(const VkTensor* x, ctx.deviceInput(1));
    KILN_ASSIGN_OR_RETURN(const VkTensor* y, ctx.deviceInput(2));
    auto shape = broadcastShapes(cond->shape, x->shape);
    if (shape.isOk()) shape = broadcastShapes(*shape, y->shape);
    if (!shape.isOk()) return Status(StatusCode::INVALID_ARGUMENT, "Where inputs do not broadcast");
    KILN_ASSIGN_OR_RETURN(const VkTensor* out, ctx.allocateOutput(0, x->dtype, *shape));
    return recordBroadcast(ctx, shaders_, {cond, x, y}, *out, kLocal);
  }

 private:
  BroadcastShaders shaders_;
};

// Every input and output of one float type (float32, or float16 with 16-bit storage), ranks <= kMaxRank.
NodeSupport checkFloatOp(const SupportQuery& q) {
  NodeSupport support = supported();
  for (size_t i = 0; i < q.node.inputs.size() && support.supported; ++i) {
    if (!q.hasInput(i)) continue;
    const DataType type = q.inputType(i);
    if (type != DataType::FLOAT && type != DataType::FLOAT16) {
      support = unsupported("input " + std::to_string(i) + " is " + dataTypeName(type) +
                            " (the Vulkan kernel takes float32 or float16)");
    }
    if (support.supported) support = requireRankAtMost(q, i);
  }
  if (support.supported) support = requireFloat(q, {0});
  for (size_t i = 1; i < q.node.inputs.size() && support.supported; ++i) {
    if (q.hasInput(i) && q.inputType(i) != q.inputType(0)) support = unsupported("inputs differ in type");
  }
  return support;
}

}  // namespace

std::string glslFloat(float value) {
  uint32_t bits = 0;
  std::memcpy(&bits, &value, 4);
  return "uintBitsToFloat(" + std::to_string(bits) + "u)";
}

std::optional<FusableOp> fusableElementwise(const ir::Node& node, int64_t opset, const ir::Graph& graph,
                                            const std::string& name) {
  if (!node.domain.empty() || node.outputs.size() != 1) return std::nullopt;
  for (const UnaryOp& op : kUnaryOps) {
    if (node.opType != op.opType || opset < op.since) continue;
    float alpha = op.alphaAttr ? node.attrFloat(op.alphaAttr, op.alpha) : op.alpha;
    float beta = op.betaAttr ? node.attrFloat(op.betaAttr, op.beta) : op.beta;
    const float gamma = op.gammaAttr ? node.attrFloat(op.gammaAttr, op.gamma) : op.gamma;
    if (node.opType == "Clip") {
      alpha = -INFINITY;
      beta = INFINITY;
      if (opset < 11) {
        alpha = node.attrFloat("min", alpha);
        beta = node.attrFloat("max", beta);
      }
      for (size_t i = 1; i < node.inputs.size() && i < 3; ++i) {
        if (node.inputs[i].empty()) continue;
        auto bound = graph.initializers.find(node.inputs[i]);
        if (bound == graph.initializers.end() || bound->second.numel() != 1) return std::nullopt;
        const DataType type = bound->second.dtype();
        if (type != DataType::FLOAT && type != DataType::FLOAT16) return std::nullopt;
        (i == 1 ? alpha : beta) =
            type == DataType::FLOAT ? bound->second.data<float>()[0] : float(bound->second.data<Float16>()[0]);
      }
    } else if (node.inputs.size() != 1) {
      return std::nullopt;
    }
    auto literal = [](float v) { return std::isinf(v) ? std::string(v > 0 ? "(1.0/0.0)" : "(-1.0/0.0)") : glslFloat(v); };
    return FusableOp{"float " + name + "(float v) { float alpha = " + literal(alpha) + ", beta = " + literal(beta) +
                         ", gamma = " + literal(gamma) + "; return (" + op.expression + "); }",
                     1};
  }
  for (const BinaryOp& op : kBinaryOps) {
    if (node.opType != op.opType || opset < op.since || node.inputs.size() != 2) continue;
    if (node.opType == "Sum" || node.opType == "Mean") return std::nullopt;
    return FusableOp{"float " + name + "(float x, float y) { return (" + op.expression + "); }", 2};
  }
  return std::nullopt;
}

void registerElementwiseKernels(std::vector<KernelEntry>& out) {
  for (const UnaryOp& op : kUnaryOps) {
    const bool clip = std::string(op.opType) == "Clip";
    out.push_back({op.opType, op.since, 1 << 30,
                   [clip](const SupportQuery& q) {
                     NodeSupport s = requireFloat(q, {0});
                     if (s.supported && clip) s = requireHostInput(q, 1, "Clip's min");
                     if (s.supported && clip) s = requireHostInput(q, 2, "Clip's max");
                     return s;
                   },
                   [&op](const KernelCreateInfo& info) -> Result<std::unique_ptr<VkKernel>> {
                     return std::unique_ptr<VkKernel>(new UnaryKernel(info, op));
                   }});
  }
  for (const BinaryOp& op : kBinaryOps) {
    out.push_back({op.opType, op.since, 1 << 30, checkFloatOp,
                   [&op](const KernelCreateInfo& info) -> Result<std::unique_ptr<VkKernel>> {
                     return std::unique_ptr<VkKernel>(new BinaryKernel(info, op));
                   }});
  }
  out.push_back({"Where", 9, 1 << 30,
                 [](const SupportQuery& q) {
                   if (q.inputType(0) != DataType::BOOL) return unsupported("condition is not bool");
                   NodeSupport s = requireFloat(q, {1, 2});
                   for (size_t i = 0; i < 3 && s.supported; ++i) s = requireRankAtMost(q, i);
                   return s;
                 },
                 [](const KernelCreateInfo& info) -> Result<std::unique_ptr<VkKernel>> {
                   return std::unique_ptr<VkKernel>(new WhereKernel(info));
                 }});
}

}  // namespace kiln::vk
