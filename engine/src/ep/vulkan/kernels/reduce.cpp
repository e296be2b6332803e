// Vulkan kernels: Reduce* (any set of axes, axes as an attribute or as a host input), Softmax and LogSoftmax
// (the opset < 13 "coerce to 2-D at axis" form and the opset >= 13 single-axis form). The op table below is the
// shader variants of shaders/reduce.comp; softmax.comp has one variant per op and dispatch mode.
#include <algorithm>
#include <string>

#include "ep/vulkan/kernel_registry.h"
#include "ep/vulkan/kernel_utils.h"

namespace kiln::vk {
namespace {

constexpr uint32_t kThreadLocal = 64;   // one invocation per output
constexpr uint32_t kGroupLocal = 128;   // one workgroup per output / row
constexpr uint32_t kMaxGroupsX = 65535;
constexpr size_t kMaxGroups = 4;        // kept / reduced dim groups the shader takes (enough for rank 8)
// Dispatch modes of reduce.comp and softmax.comp: which invocations share one output (or row).
constexpr int kThreadMode = 0, kGroupMode = 1, kSubgroupMode = 2;

// `blocks` workgroups laid out in x, spilling into y past 65535; `rowStride` receives the workgroups per y row.
std::array<uint32_t, 3> blockGroups(int64_t blocks, uint32_t* rowStride) {
  *rowStride = static_cast<uint32_t>(std::min<int64_t>(blocks, kMaxGroupsX));
  return {*rowStride, static_cast<uint32_t>((blocks + *rowStride - 1) / *rowStride), 1};
}

struct ReduceOp {
  const char* opType;
  const char* init;        // identity of `combine`
  const char* accumulate;  // of a, v
  const char* combine;     // ADD, MUL, MAX, MIN
  const char* finish;      // of a, count, shift
  int64_t axesInputSince;  // opset from which axes come from input 1
  bool logSumExp = false;
};

const ReduceOp kReduceOps[] = {
    {"ReduceSum", "0.0", "a + v", "ADD", "a", 13},
    {"ReduceMean", "0.0", "a + v", "ADD", "a / count", 18},
    {"ReduceMax", "-kInf", "maxNan(a, v)", "MAX", "a", 18},
    {"ReduceMin", "kInf", "minNan(a, v)", "MIN", "a", 18},
    {"ReduceProd", "1.0", "a * v", "MUL", "a", 18},
    {"ReduceL1", "0.0", "a + abs(v)", "ADD", "a", 18},
    {"ReduceL2", "0.0", "a + v * v", "ADD", "sqrt(a)", 18},
    {"ReduceSumSquare", "0.0", "a + v * v", "ADD", "a", 18},
    {"ReduceLogSum", "0.0", "a + v", "ADD", "log(a)", 18},
    {"ReduceLogSumExp", "0.0", "a + exp(v - shift)", "ADD", "log(a) + shift", 18, true},
};

// The input's dims with size-1 dims dropped and neighbours of the same kind merged (they are contiguous with
// each other), split into kept groups (which index the output, in order) and reduced groups.
struct ReduceLayout {
  std::vector<uint32_t> keptDims, keptStrides, redDims, redStrides;
};

ReduceLayout makeLayout(const Shape& shape, const std::vector<bool>& reduced) {
  const std::vector<int64_t> strides = contiguousStrides(shape);
  std::vector<int64_t> dims, groupStrides;
  std::vector<bool> kinds;
  for (size_t d = 0; d < shape.size(); ++d) {
    if (shape[d] == 1) continue;
    if (!dims.empty() && kinds.back() == reduced[d]) {
      dims.back() *= shape[d];
      groupStrides.back() = strides[d];
    } else {
      dims.push_back(shape[d]);
      groupStrides.push_back(strides[d]);
      kinds.push_back(reduced[d]);
    }
  }
  ReduceLayout layout;
  for (size_t g = 0; g < dims.size(); ++g) {
    auto& d = kinds[g] ? layout.redDims : layout.keptDims;
    auto& s = kinds[g] ? layout.redStrides : layout.keptStrides;
    d.push_back(static_cast<uint32_t>(dims[g]));
    s.push_back(static_cast<uint32_t>(groupStrides[g]));
  }
  return layout;
}

class ReduceKernel final : public VkKernel {
 public:
  ReduceKernel(const KernelCreateInfo& info, const ReduceOp& op)
      : label_(op.opType),
        axesFromInput_(info.opset >= op.axesInputSince),
        attrAxes_(info.node.attrInts("axes")),
        keepDims_(info.node.attrInt("keepdims", 1) != 0),
        noopWithEmptyAxes_(info.node.attrInt("noop_with_empty_axes", 0) != 0) {
    for (int mode = 0; mode < 3; ++mode) {
      if (mode == kSubgroupMode && !info.device.subgroupArithmetic) break;
      ShaderVariant variant{"reduce", {}, 2, mode == kThreadMode ? kThreadLocal : kGroupLocal};
      variant.define("INIT", op.init)
          .define("ACCUMULATE(a, v)", std::string("(") + op.accumulate + ")")
          .define("FINISH(a)", std::string("(") + op.finish + ")")
          .define(std::string("COMBINE_") + op.combine)
          .define("LOG_SUM_EXP", op.logSumExp ? 1 : 0)
          .define("MODE", mode);
      shaders_[mode] = useShader(storedAs(variant, floatStorage(info)));
    }
    outputsPerSubgroupGroup_ = std::max<uint32_t>(1, kGroupLocal / std::max<uint32_t>(1, info.device.subgroupSize));
    hasSubgroupMode_ = info.device.subgroupArithmetic;
  }

  Status record(RecordContext& ctx) override {
    KILN_ASSIGN_OR_RETURN(const VkTensor* x, ctx.deviceInput(0));
    std::vector<int64_t> axes = attrAxes_;
    if (axesFromInput_) {
      axes.clear();
      if (ctx.input(1)) {
        KILN_ASSIGN_OR_RETURN(axes, hostInts(ctx.input(1), label_ + " axes"));
      }
    }
    // Empty axes reduce everything, or with noop_with_empty_axes nothing: each output then reduces one element,
    // which still applies the op's transform (|x| for ReduceL1, x * x for ReduceSumSquare), as the CPU EP does.
    const int64_t rank = static_cast<int64_t>(x->shape.size());
    std::vector<bool> reduced(x->shape.size(), axes.empty() && !noopWithEmptyAxes_);
    for (int64_t axis : axes) {
      KILN_ASSIGN_OR_RETURN(const int64_t a, normalizeAxis(axis, rank, label_ + " axis"));
      reduced[static_cast<size_t>(a)] = true;
    }
    Shape outShape;
    int64_t count = 1;
    for (size_t d = 0; d < x->shape.size(); ++d) {
      if (reduced[d]) {
        count *= x->shape[d];
        if (keepDims_) outShape.push_back(1);
      } else {
        outShape.push_back(x->shape[d]);
      }
    }
    KILN_ASSIGN_OR_RETURN(const VkTensor* y, ctx.allocateOutput(0, x->dtype, outShape));
    const int64_t outCount = y->elementCount();
    if (outCount == 0) return Status::ok();
    const ReduceLayout layout = makeLayout(x->shape, reduced);
    if (layout.keptDims.size() > kMaxGroups || layout.redDims.size() > kMaxGroups) {
      return Status(StatusCode::NOT_IMPLEMENTED, label_ + " over " + shapeToString(x->shape) +
                                                     " alternates kept and reduced dims too often");
    }
    // Which invocations share an output: none for short reductions, and for strided ones with enough outputs
    // (neighbouring invocations then read neighbouring addresses); a subgroup for medium reductions (no
    // barriers); a whole workgroup for long reductions with few outputs.
    const bool innermostReduced = !layout.redStrides.empty() && layout.redStrides.back() == 1;
    int mode = kThreadMode;
    if (count >= 32 && (innermostReduced || outCount <= 2048)) {
      const bool subgroupFits = hasSubgroupMode_ && (count <= 4096 || outCount >= 1024);
      mode = subgroupFits ? kSubgroupMode : count >= 128 ? kGroupMode : kThreadMode;
    }
    uint32_t rowStride = 0;
    std::array<uint32_t, 3> groups{};
    if (mode == kThreadMode) {
      groups = linearGroups(static_cast<uint64_t>(outCount), kThreadLocal, &rowStride);
    } else {
      const int64_t perGroup = mode == kSubgroupMode ? outputsPerSubgroupGroup_ : 1;
      groups = blockGroups((outCount + perGroup - 1) / perGroup, &rowStride);
    }
    PushConstants push;
    push.u32(outCount).u32(count).u32(rowStride);
    push.u32(layout.keptDims.size()).u32Array(layout.keptDims, kMaxGroups, 1).u32Array(layout.keptStrides, kMaxGroups);
    push.u32(layout.redDims.size()).u32Array(layout.redDims, kMaxGroups, 1).u32Array(layout.redStrides, kMaxGroups);
    push.u32(outputsPerSubgroupGroup_);
    // An empty input is never read (the loops run zero times); bind the output in its place.
    const BufferRange buffers[] = {x->elementCount() ? x->range() : y->range(), y->range()};
    return ctx.dispatch(shaders_[mode], buffers, push.data(), push.size(), groups);
  }

 private:
  std::string label_;
  bool axesFromInput_;
  std::vector<int64_t> attrAxes_;
  bool keepDims_, noopWithEmptyAxes_;
  bool hasSubgroupMode_ = false;
  uint32_t outputsPerSubgroupGroup_ = 1;
  uint32_t shaders_[3] = {};
};

class SoftmaxKernel final : public VkKernel {
 public:
  SoftmaxKernel(const KernelCreateInfo& info, bool log)
      : label_(info.node.opType), coerce2d_(info.opset < 13), axis_(info.node.attrInt("axis", coerce2d_ ? 1 : -1)) {
    for (int mode = 0; mode < 3; ++mode) {
      if (mode == kSubgroupMode && !info.device.subgroupArithmetic) break;
      ShaderVariant variant{"softmax", {}, 2, mode == kThreadMode ? kThreadLocal : kGroupLocal};
      variant.define("LOG", log ? 1 : 0).define("MODE", mode);
      shaders_[mode] = useShader(storedAs(variant, floatStorage(info)));
    }
    rowsPerSubgroupGroup_ = std::max<uint32_t>(1, kGroupLocal / std::max<uint32_t>(1, info.device.subgroupSize));
    hasSubgroupMode_ = info.device.subgroupArithmetic;
  }

  Status record(RecordContext& ctx) override {
    KILN_ASSIGN_OR_RETURN(const VkTensor* x, ctx.deviceInput(0));
    const int64_t rank = static_cast<int64_t>(x->shape.size());
    const int64_t axis = axis_ < 0 ? axis_ + rank : axis_;
    // Opset < 13 allows axis == rank (a trailing block of size 1).
    if (axis < 0 || axis > rank || (!coerce2d_ && axis == rank && rank > 0)) {
      return Status(StatusCode::INVALID_ARGUMENT,
                    label_ + " axis " + std::to_string(axis_) + " is out of range for rank " + std::to_string(rank));
    }
    int64_t outer = 1, n = 1, inner = 1;
    for (int64_t d = 0; d < rank; ++d) {
      const int64_t size = x->shape[static_cast<size_t>(d)];
      if (d < axis) {
        outer *= size;
      } else if (d == axis || coerce2d_) {
        n *= size;
      } else {
        inner *= size;
      }
    }
    KILN_ASSIGN_OR_RETURN(const VkTensor* y, ctx.allocateOutput(0, x->dtype, x->shape));
    if (x->elementCount() == 0) return Status::ok();
    const int64_t columns = outer * inner;
    // Rows along contiguous memory (inner == 1) are shared by a subgroup or a workgroup, as in ReduceKernel.
    int mode = kThreadMode;
    if (inner == 1 && n >= 32) {
      const bool subgroupFits = hasSubgroupMode_ && (n <= 4096 || columns >= 1024);
      mode = subgroupFits ? kSubgroupMode : n >= 128 ? kGroupMode : kThreadMode;
    }
    uint32_t rowStride = 0;
    std::array<uint32_t, 3> groups{};
    if (mode == kThreadMode) {
      groups = linearGroups(static_cast<uint64_t>(columns), kThreadLocal, &rowStride);
    } else {
      const int64_t perGroup = mode == kSubgroupMode ? rowsPerSubgroupGroup_ : 1;
      groups = blockGroups((columns + perGroup - 1) / perGroup, &rowStride);
    }
    PushConstants push;
    push.u32(columns).u32(n).u32(inner).u32(rowStride).u32(rowsPerSubgroupGroup_);
    const BufferRange buffers[] = {x->range(), y->range()};
    return ctx.dispatch(shaders_[mode], buffers, push.data(), push.size(), groups);
  }

 private:
  std::string label_;
  bool coerce2d_;
  int64_t axis_;
  bool hasSubgroupMode_ = false;
  uint32_t rowsPerSubgroupGroup_ = 1;
  uint32_t shaders_[3] = {};
};

NodeSupport checkReduce(const SupportQuery& q, const ReduceOp& op) {
  NodeSupport s = requireFloat(q, {0});
  if (s.supported) s = requireRankAtMost(q, 0);
  if (s.supported && q.opset >= op.axesInputSince) s = requireHostInput(q, 1, "the axes");
  return s;
}

}  // namespace

void registerReduceKernels(std::vector<KernelEntry>& out) {
  for (const ReduceOp& op : kReduceOps) {
    out.push_back({op.opType, 1, 1 << 30, [&op](const SupportQuery& q) { return checkReduce(q, op); },
                   [&op](const KernelCreateInfo& info) -> Result<std::unique_ptr<VkKernel>> {
                     return std::unique_ptr<VkKernel>(new ReduceKernel(info, op));
                   }});
  }
  for (const bool log : {false, true}) {
    out.push_back({log ? "LogSoftmax" : "Softmax", 1, 1 << 30,
                   [](const SupportQuery& q) { return requireFloat(q, {0}); },
                   [log](const KernelCreateInfo& info) -> Result<std::unique_ptr<VkKernel>> {
                     return std::unique_ptr<VkKernel>(new SoftmaxKernel(info, log));
                   }});
  }
}

}  // namespace kiln::vk
