// Vulkan kernels: comparisons of float32 (or float16) tensors and logic on bool tensors, writing bool (one byte per element,
// through 8-bit storage). Variants of shaders/compare.comp; broadcasting as the binary ops.
#include "ep/vulkan/kernel_registry.h"
#include "ep/vulkan/kernel_utils.h"

namespace kiln::vk {
namespace {

constexpr uint32_t kLocal = 64;

struct CompareOp {
  const char* opType;
  const char* expression;  // of x (and y)
  bool boolInputs;
  bool unary = false;
  int64_t since = 7;
};

const CompareOp kCompareOps[] = {
    {"Equal", "x == y", false, false, 11},  // float Equal arrived in opset 11
    {"Less", "x < y", false},
    {"Greater", "x > y", false},
    {"LessOrEqual", "x <= y", false, false, 12},
    {"GreaterOrEqual", "x >= y", false, false, 12},
    {"And", "x && y", true},
    {"Or", "x || y", true},
    {"Xor", "x != y", true},
    {"Not", "!x", true, true, 1},
};

class CompareKernel final : public VkKernel {
 public:
  CompareKernel(const CompareOp& op, bool boolInputs, DataType storage) : unary_(op.unary) {
    for (int grid = 0; grid < 2; ++grid) {
      ShaderVariant variant{"compare", {}, op.unary ? 2u : 3u, kLocal};
      variant.define(op.unary ? "OP(x)" : "OP(x, y)", std::string("(") + op.expression + ")")
          .define("INPUT_BOOL", boolInputs ? 1 : 0)
          .define("UNARY", op.unary ? 1 : 0)
          .define("GRID", grid);
      (grid ? shaders_.grid : shaders_.general) = useShader(storedAs(variant, storage));
    }
  }

  Status record(RecordContext& ctx) override {
    KILN_ASSIGN_OR_RETURN(const VkTensor* a, ctx.deviceInput(0));
    std::vector<const VkTensor*> inputs = {a};
    Shape shape = a->shape;
    if (!unary_) {
      KILN_ASSIGN_OR_RETURN(const VkTensor* b, ctx.deviceInput(1));
      auto merged = broadcastShapes(a->shape, b->shape);
      if (!merged.isOk()) {
        return Status(StatusCode::INVALID_ARGUMENT, "shapes " + shapeToString(a->shape) + " and " +
                                                        shapeToString(b->shape) + " do not broadcast");
      }
      shape = *merged;
      inputs.push_back(b);
    }
    KILN_ASSIGN_OR_RETURN(const VkTensor* out, ctx.allocateOutput(0, DataType::BOOL, shape));
    return recordBroadcast(ctx, shaders_, inputs, *out, kLocal);
  }

 private:
  bool unary_;
  BroadcastShaders shaders_;
};

NodeSupport checkCompare(const SupportQuery& q, const CompareOp& op) {
  if (!q.device.storageBuffer8Bit) return unsupported("the device lacks 8-bit storage buffers (bool tensors)");
  const size_t inputs = op.unary ? 1 : 2;
  for (size_t i = 0; i < inputs; ++i) {
    const DataType type = q.inputType(i);
    const bool half = type == DataType::FLOAT16 && deviceStoresFloat16(q.device) && q.inputType(0) == type;
    const bool ok = op.boolInputs ? type == DataType::BOOL : type == DataType::FLOAT || half;
    if (!ok) {
      return unsupported("input " + std::to_string(i) + " is " +
                         (type == DataType::UNDEFINED ? std::string("of unknown type") : dataTypeName(type)) +
                         (op.boolInputs ? " (the Vulkan kernel takes bool)" : " (the Vulkan kernel takes float32 or float16)"));
    }
    NodeSupport rank = requireRankAtMost(q, i);
    if (!rank.supported) return rank;
  }
  return supported();
}

}  // namespace

void registerCompareKernels(std::vector<KernelEntry>& out) {
  for (const CompareOp& op : kCompareOps) {
    out.push_back({op.opType, op.since, 1 << 30, [&op](const SupportQuery& q) { return checkCompare(q, op); },
                   [&op](const KernelCreateInfo& info) -> Result<std::unique_ptr<VkKernel>> {
                     const DataType storage = op.boolInputs ? DataType::FLOAT : floatStorage(info);
                     return std::unique_ptr<VkKernel>(new CompareKernel(op, op.boolInputs, storage));
                   }});
  }
}

}  // namespace kiln::vk
