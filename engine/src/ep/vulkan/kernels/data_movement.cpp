// Vulkan kernels: data movement that is one strided copy (shaders/copy_strided.comp): Transpose, Slice,
// Expand, Tile, Concat, Split, DepthToSpace and SpaceToDepth. Each op only computes the output shape and the source
// strides; the copy merges contiguous dimensions first, so most layouts dispatch with rank 1-3. uint8/int8 tensors
// move as bytes where the device has 8-bit storage (else those nodes stay with the CPU EP). Pad, Gather
// and Cast live in pad.cpp, gather.cpp and cast.cpp and register through registerDataMovementKernels.
#include <algorithm>

#include "ep/vulkan/kernel_registry.h"
#include "ep/vulkan/kernel_utils.h"
#include "ops/shape_rules.h"
#include "ops/split_sizes.h"

namespace kiln::vk {

void registerPadKernels(std::vector<KernelEntry>& out);     // pad.cpp
void registerGatherKernels(std::vector<KernelEntry>& out);  // gather.cpp
void registerCastKernels(std::vector<KernelEntry>& out);    // cast.cpp

namespace {

constexpr uint32_t kLocal = 64;
constexpr uint32_t kChunk = 8;  // output elements per invocation (see copy_strided.comp)

// 32-bit words per element for the element types the copy moves (0: not handled); float16 moves as 16-bit
// halves (ELEM16, needs 16-bit storage), uint8/int8 as bytes (ELEM8, needs 8-bit storage).
bool isByte(DataType type) { return type == DataType::UINT8 || type == DataType::INT8; }
uint32_t wordsOf(DataType type) {
  if (type == DataType::FLOAT || type == DataType::INT32 || type == DataType::FLOAT16 || isByte(type)) return 1;
  if (type == DataType::INT64) return 2;
  return 0;
}

// One strided copy: for every coordinate c of `dims`, dst[dstOffset + c·dstStrides] = src[srcOffset +
// c·srcStrides] (source coordinates wrap at srcDims when `tile`).
struct CopyPlan {
  std::vector<int64_t> dims, srcStrides, dstStrides, srcDims;
  int64_t srcOffset = 0, dstOffset = 0;
  bool tile = false;
};

// Drops size-1 dimensions and merges neighbours that are contiguous in both source and destination.
void simplify(CopyPlan& plan) {
  CopyPlan out = plan;
  out.dims.clear(), out.srcStrides.clear(), out.dstStrides.clear(), out.srcDims.clear();
  for (size_t k = 0; k < plan.dims.size(); ++k) {
    if (plan.dims[k] == 1) continue;
    const int64_t srcDim = plan.tile ? plan.srcDims[k] : plan.dims[k];
    if (!out.dims.empty()) {
      const size_t last = out.dims.size() - 1;
      const bool wraps = plan.tile && (srcDim != plan.dims[k] || out.srcDims[last] != out.dims[last]);
      if (!wraps && out.srcStrides[last] == plan.srcStrides[k] * plan.dims[k] &&
          out.dstStrides[last] == plan.dstStrides[k] * plan.dims[k]) {
        out.dims[last] *= plan.dims[k];
        out.srcDims[last] = out.dims[last];
        out.srcStrides[last] = plan.srcStrides[k];
        out.dstStrides[last] = plan.dstStrides[k];
        continue;
      }
    }
    out.dims.push_back(plan.dims[k]);
    out.srcStrides.push_back(plan.srcStrides[k]);
    out.dstStrides.push_back(plan.dstStrides[k]);
    out.srcDims.push_back(srcDim);
  }
  plan = std::move(out);
}

Status recordCopy(RecordContext& ctx, uint32_t shader, const BufferRange& src, const BufferRange& dst,
                  CopyPlan plan) {
  const int64_t count = shapeSize(plan.dims);
  if (count == 0) return Status::ok();
  simplify(plan);
  if (plan.dims.size() > kMaxRank) {
    return Status(StatusCode::NOT_IMPLEMENTED, "strided copy of rank " + std::to_string(plan.dims.size()) +
                                                   " after merging dimensions (the shader takes " +
                                                   std::to_string(kMaxRank) + ")");
  }
  std::vector<uint32_t> dims(plan.dims.begin(), plan.dims.end()),
      srcDims(plan.srcDims.begin(), plan.srcDims.end());
  uint32_t rowStride = 0;
  const auto groups = linearGroups((static_cast<uint64_t>(count) + kChunk - 1) / kChunk, kLocal, &rowStride);
  PushConstants push;
  push.u32(count).u32(rowStride).u32(plan.dims.size()).i32(plan.srcOffset).i32(plan.dstOffset);
  push.u32Array(dims, kMaxRank, 1).i32Array(plan.srcStrides, kMaxRank).i32Array(plan.dstStrides, kMaxRank);
  push.u32Array(srcDims, kMaxRank, 1);
  const BufferRange buffers[] = {src, dst};
  return ctx.dispatch(shader, buffers, push.data(), push.size(), groups);
}

ShaderVariant copyVariant(DataType type, bool tile) {
  ShaderVariant variant{"copy_strided", {}, 2, kLocal};
  variant.define("WORDS", static_cast<int64_t>(std::max<uint32_t>(wordsOf(type), 1)))
      .define("TILE", tile ? 1 : 0);
  variant.define("CHUNK", static_cast<int64_t>(kChunk));
  if (type == DataType::FLOAT16) variant.define("ELEM16", 1);
  if (isByte(type)) variant.define("ELEM8", 1);
  return variant;
}

// The output shape and the copy from input 0 into a contiguous output of that shape.
struct Plan {
  Shape shape;
  CopyPlan copy;
};
using PlanRule = std::function<Result<Plan>(const RecordContext&, const Shape&)>;

// Ops that copy input 0 into a fresh contiguous output along a plan.
class StridedCopyKernel final : public VkKernel {
 public:
  StridedCopyKernel(const KernelCreateInfo& info, PlanRule rule, bool tile) : rule_(std::move(rule)) {
    shader_ = useShader(copyVariant(info.inputType(0), tile));
  }
  Status record(RecordContext& ctx) override {
    KILN_ASSIGN_OR_RETURN(const VkTensor* x, ctx.deviceInput(0));
    KILN_ASSIGN_OR_RETURN(Plan plan, rule_(ctx, x->shape));
    KILN_ASSIGN_OR_RETURN(const VkTensor* y, ctx.allocateOutput(0, x->dtype, plan.shape));
    plan.copy.dstStrides = contiguousStrides(plan.copy.dims);
    if (plan.copy.srcDims.empty()) plan.copy.srcDims = plan.copy.dims;
    return recordCopy(ctx, shader_, x->range(), y->range(), std::move(plan.copy));
  }

 private:
  PlanRule rule_;
  uint32_t shader_ = 0;
};

// Output dims `dims` reading input dims in order `perm` of a contiguous input of shape `in`.
Plan permutePlan(const Shape& in, const std::vector<int64_t>& perm) {
  const auto strides = contiguousStrides(in);
  Plan plan;
  for (int64_t axis : perm) {
    plan.shape.push_back(in[static_cast<size_t>(axis)]);
    plan.copy.srcStrides.push_back(strides[static_cast<size_t>(axis)]);
  }
  plan.copy.dims = plan.shape;
  return plan;
}

Result<Plan> transposePlan(const std::vector<int64_t>& permAttr, const Shape& in) {
  const int64_t rank = static_cast<int64_t>(in.size());
  std::vector<int64_t> perm = permAttr;
  if (perm.empty()) {
    for (int64_t i = rank; i-- > 0;) perm.push_back(i);
  }
  std::vector<bool> seen(in.size(), false);
  if (static_cast<int64_t>(perm.size()) != rank)
    return Status(StatusCode::INVALID_ARGUMENT, "Transpose perm length differs from the rank");
  for (int64_t& axis : perm) {
    KILN_ASSIGN_OR_RETURN(axis, normalizeAxis(axis, rank, "Transpose perm entry"));
    if (seen[static_cast<size_t>(axis)])
      return Status(StatusCode::INVALID_ARGUMENT, "Transpose perm repeats an axis");
    seen[static_cast<size_t>(axis)] = true;
  }
  return permutePlan(in, perm);
}

// Slice with ONNX clamping (as the CPU EP's slice.cpp): negative indices count from the end, negative steps
// walk backwards.
Result<Plan> slicePlan(std::vector<int64_t> starts, std::vector<int64_t> ends, std::vector<int64_t> axes,
                       std::vector<int64_t> steps, const Shape& in) {
  if (starts.size() != ends.size())
    return Status(StatusCode::INVALID_ARGUMENT, "Slice starts and ends differ in length");
  if (axes.empty()) {
    for (size_t i = 0; i < starts.size(); ++i) axes.push_back(static_cast<int64_t>(i));
  }
  if (steps.empty()) steps.assign(starts.size(), 1);
  if (axes.size() != starts.size() || steps.size() != starts.size()) {
    return Status(StatusCode::INVALID_ARGUMENT, "Slice starts, ends, axes and steps differ in length");
  }
  const int64_t rank = static_cast<int64_t>(in.size());
  const auto inStrides = contiguousStrides(in);
  Plan plan;
  plan.shape = in;
  std::vector<int64_t> step(in.size(), 1);
  std::vector<bool> seen(in.size(), false);
  for (size_t i = 0; i < axes.size(); ++i) {
    KILN_ASSIGN_OR_RETURN(int64_t axis, normalizeAxis(axes[i], rank, "Slice axis"));
    if (seen[static_cast<size_t>(axis)]) return Status(StatusCode::INVALID_ARGUMENT, "Slice axes repeat");
    seen[static_cast<size_t>(axis)] = true;
    const int64_t dim = in[static_cast<size_t>(axis)], s = steps[i];
    if (s == 0) return Status(StatusCode::INVALID_ARGUMENT, "Slice steps must be non-zero");
    const ops::SliceAxis range = ops::resolveSliceAxis(starts[i], ends[i], s, dim);
    plan.shape[static_cast<size_t>(axis)] = range.count;
    step[static_cast<size_t>(axis)] = s;
    plan.copy.srcOffset += range.start * inStrides[static_cast<size_t>(axis)];
  }
  for (size_t d = 0; d < in.size(); ++d) plan.copy.srcStrides.push_back(step[d] * inStrides[d]);
  plan.copy.dims = plan.shape;
  return plan;
}

// DepthToSpace / SpaceToDepth: a 6-D view of the NCHW input, permuted (as the CPU EP's transpose.cpp).
Result<Plan> blockPlan(const Shape& in, int64_t b, bool toSpace, bool crd) {
  if (in.size() != 4)
    return Status(StatusCode::INVALID_ARGUMENT, "expects a 4-D input, got " + shapeToString(in));
  if (b <= 0) return Status(StatusCode::INVALID_ARGUMENT, "blocksize must be positive");
  const int64_t n = in[0], c = in[1], h = in[2], w = in[3];
  Shape view, outShape;
  std::vector<int64_t> perm;
  if (toSpace) {
    if (c % (b * b) != 0)
      return Status(StatusCode::INVALID_ARGUMENT, "channels are not divisible by blocksize^2");
    const int64_t oc = c / (b * b);
    view = crd ? Shape{n, oc, b, b, h, w} : Shape{n, b, b, oc, h, w};
    perm = crd ? std::vector<int64_t>{0, 1, 4, 2, 5, 3} : std::vector<int64_t>{0, 3, 4, 1, 5, 2};
    outShape = {n, oc, h * b, w * b};
  } else {
    if (h % b != 0 || w % b != 0)
      return Status(StatusCode::INVALID_ARGUMENT, "height or width is not divisible by blocksize");
    view = {n, c, h / b, b, w / b, b};
    perm = {0, 3, 5, 1, 2, 4};
    outShape = {n, c * b * b, h / b, w / b};
  }
  Plan plan = permutePlan(view, perm);
  plan.shape = outShape;
  return plan;
}

// Concat: each input is copied into its band of the output along `axis`.
class ConcatKernel final : public VkKernel {
 public:
  explicit ConcatKernel(const KernelCreateInfo& info) : axis_(info.node.attrInt("axis", 0)) {
    shader_ = useShader(copyVariant(info.inputType(0), false));
  }
  Status record(RecordContext& ctx) override {
    const VkTensor* first = nullptr;
    for (size_t i = 0; i < ctx.inputCount() && !first; ++i) first = ctx.input(i);
    if (!first) return Status(StatusCode::INVALID_ARGUMENT, "Concat has no inputs");
    const int64_t rank = static_cast<int64_t>(first->shape.size());
    KILN_ASSIGN_OR_RETURN(const int64_t axis, normalizeAxis(axis_, rank, "Concat axis"));
    Shape shape = first->shape;
    shape[static_cast<size_t>(axis)] = 0;
    for (size_t i = 0; i < ctx.inputCount(); ++i) {
      const VkTensor* in = ctx.input(i);
      if (!in) continue;
      bool matches = in->shape.size() == shape.size() && in->dtype == first->dtype;
      for (int64_t d = 0; matches && d < rank; ++d)
        matches = d == axis || in->shape[static_cast<size_t>(d)] == shape[static_cast<size_t>(d)];
      if (!matches)
        return Status(StatusCode::INVALID_ARGUMENT, "Concat input " + shapeToString(in->shape) +
                                                        " does not match " + shapeToString(first->shape));
      shape[static_cast<size_t>(axis)] += in->shape[static_cast<size_t>(axis)];
    }
    KILN_ASSIGN_OR_RETURN(const VkTensor* y, ctx.allocateOutput(0, first->dtype, shape));
    const auto outStrides = contiguousStrides(shape);
    int64_t at = 0;
    for (size_t i = 0; i < ctx.inputCount(); ++i) {
      if (!ctx.input(i) || ctx.input(i)->elementCount() == 0) continue;
      KILN_ASSIGN_OR_RETURN(const VkTensor* in, ctx.deviceInput(i));
      CopyPlan plan;
      plan.dims = in->shape;
      plan.srcDims = in->shape;
      plan.srcStrides = contiguousStrides(in->shape);
      plan.dstStrides = outStrides;
      plan.dstOffset = at * outStrides[static_cast<size_t>(axis)];
      at += in->shape[static_cast<size_t>(axis)];
      KILN_RETURN_IF_ERROR(recordCopy(ctx, shader_, in->range(), y->range(), std::move(plan)));
    }
    return Status::ok();
  }

 private:
  int64_t axis_;
  uint32_t shader_ = 0;
};

// Split: each output is copied out of its band of the input along `axis` (sizes: ops/split_sizes.h).
class SplitKernel final : public VkKernel {
 public:
  explicit SplitKernel(const KernelCreateInfo& info)
      : opset_(info.opset), axis_(info.node.attrInt("axis", 0)), attrSplit_(info.node.attrInts("split")) {
    shader_ = useShader(copyVariant(info.inputType(0), false));
  }
  Status record(RecordContext& ctx) override {
    KILN_ASSIGN_OR_RETURN(const VkTensor* x, ctx.deviceInput(0));
    const int64_t rank = static_cast<int64_t>(x->shape.size());
    KILN_ASSIGN_OR_RETURN(const int64_t axis, normalizeAxis(axis_, rank, "Split axis"));
    std::vector<int64_t> sizes = attrSplit_;
    if ((opset_ >= 13 || opset_ < 2) && ctx.input(1)) {
      KILN_ASSIGN_OR_RETURN(sizes, hostInts(ctx.input(1), "Split split"));
    }
    auto resolved = ops::splitSizes(std::move(sizes), opset_, x->shape[static_cast<size_t>(axis)],
                                    static_cast<int64_t>(ctx.outputCount()));
    if (!resolved.isOk()) return Status(StatusCode::INVALID_ARGUMENT, "Split: " + resolved.status().message());
    const auto strides = contiguousStrides(x->shape);
    int64_t at = 0;
    for (size_t i = 0; i < resolved->size(); ++i) {
      Shape shape = x->shape;
      shape[static_cast<size_t>(axis)] = (*resolved)[i];
      KILN_ASSIGN_OR_RETURN(const VkTensor* y, ctx.allocateOutput(i, x->dtype, shape));
      CopyPlan plan;
      plan.dims = shape;
      plan.srcDims = shape;
      plan.srcStrides = strides;
      plan.dstStrides = contiguousStrides(shape);
      plan.srcOffset = at * strides[static_cast<size_t>(axis)];
      at += (*resolved)[i];
      KILN_RETURN_IF_ERROR(recordCopy(ctx, shader_, x->range(), y->range(), std::move(plan)));
    }
    return Status::ok();
  }

 private:
  int64_t opset_, axis_;
  std::vector<int64_t> attrSplit_;
  uint32_t shader_ = 0;
};

// Support: the data input's type is one the copy moves, its rank fits, and the listed parameters are on the
// host.
SupportCheck copySupport(std::vector<size_t> hostInputs, size_t maxRank = kMaxRank) {
  return [hostInputs, maxRank](const SupportQuery& q) {
    const DataType type = q.inputType(0);
    if (wordsOf(type) == 0) {
      return unsupported("data is " +
                         (type == DataType::UNDEFINED ? std::string("of unknown type") : dataTypeName(type)) +
                         " (the Vulkan copy takes float32, float16, int32, int64, uint8 or int8)");
    }
    if (type == DataType::FLOAT16 && !deviceStoresFloat16(q.device))
      return unsupported("float16 needs storageBuffer16BitAccess, which the device lacks");
    if (isByte(type) && !q.device.storageBuffer8Bit)
      return unsupported("moving 8-bit elements needs storageBuffer8BitAccess, which the device lacks");
    if (q.outputType(0) != DataType::UNDEFINED && q.outputType(0) != type)
      return unsupported("output type differs from the input's");
    NodeSupport s = requireRankAtMost(q, 0, maxRank);
    for (size_t i : hostInputs) {
      if (s.supported) s = requireHostInput(q, i, "a shape parameter");
    }
    return s;
  };
}

KernelEntry copyEntry(const char* op, int64_t since, SupportCheck check,
                      std::function<PlanRule(const KernelCreateInfo&)> makeRule, bool tile = false) {
  return {op, since, 1 << 30, std::move(check),
          [makeRule, tile](const KernelCreateInfo& info) -> Result<std::unique_ptr<VkKernel>> {
            return std::unique_ptr<VkKernel>(new StridedCopyKernel(info, makeRule(info), tile));
          }};
}

}  // namespace

void registerDataMovementKernels(std::vector<KernelEntry>& out) {
  out.push_back(copyEntry("Transpose", 1, copySupport({}), [](const KernelCreateInfo& info) -> PlanRule {
    const std::vector<int64_t> perm = info.node.attrInts("perm");
    return [perm](const RecordContext&, const Shape& in) { return transposePlan(perm, in); };
  }));

  out.push_back(
      copyEntry("Slice", 1, copySupport({1, 2, 3, 4}), [](const KernelCreateInfo& info) -> PlanRule {
        const bool fromInputs = info.opset >= 10;
        const auto starts = info.node.attrInts("starts"), ends = info.node.attrInts("ends"),
                   axes = info.node.attrInts("axes");
        return [=](const RecordContext& ctx, const Shape& in) -> Result<Plan> {
          if (!fromInputs) return slicePlan(starts, ends, axes, {}, in);
          KILN_ASSIGN_OR_RETURN(auto s, hostInts(ctx.input(1), "Slice starts"));
          KILN_ASSIGN_OR_RETURN(auto e, hostInts(ctx.input(2), "Slice ends"));
          std::vector<int64_t> a, st;
          if (ctx.input(3)) {
            KILN_ASSIGN_OR_RETURN(a, hostInts(ctx.input(3), "Slice axes"));
          }
          if (ctx.input(4)) {
            KILN_ASSIGN_OR_RETURN(st, hostInts(ctx.input(4), "Slice steps"));
          }
          return slicePlan(std::move(s), std::move(e), std::move(a), std::move(st), in);
        };
      }));

  out.push_back(copyEntry("Expand", 8, copySupport({1}), [](const KernelCreateInfo&) -> PlanRule {
    return [](const RecordContext& ctx, const Shape& in) -> Result<Plan> {
      KILN_ASSIGN_OR_RETURN(auto target, hostInts(ctx.input(1), "Expand shape"));
      auto shape = broadcastShapes(in, target);
      if (!shape.isOk())
        return Status(StatusCode::INVALID_ARGUMENT,
                      "Expand cannot broadcast " + shapeToString(in) + " to " + shapeToString(target));
      Plan plan;
      plan.shape = *shape;
      plan.copy.dims = *shape;
      for (uint32_t s : broadcastStrides(in, *shape)) plan.copy.srcStrides.push_back(s);
      return plan;
    };
  }));

  // Tile (opset 6+: `repeats` per axis): the source coordinate wraps at the input's size.
  out.push_back(copyEntry(
      "Tile", 6, copySupport({1}),
      [](const KernelCreateInfo&) -> PlanRule {
        return [](const RecordContext& ctx, const Shape& in) -> Result<Plan> {
          KILN_ASSIGN_OR_RETURN(auto repeats, hostInts(ctx.input(1), "Tile repeats"));
          if (repeats.size() != in.size())
            return Status(StatusCode::INVALID_ARGUMENT, "Tile repeats length differs from the rank");
          Plan plan;
          for (size_t d = 0; d < in.size(); ++d) {
            if (repeats[d] < 0)
              return Status(StatusCode::INVALID_ARGUMENT, "Tile repeats must be non-negative");
            plan.shape.push_back(in[d] * repeats[d]);
          }
          plan.copy.dims = plan.shape;
          plan.copy.srcDims = in;
          plan.copy.srcStrides = contiguousStrides(in);
          plan.copy.tile = true;
          return plan;
        };
      },
      true));

  for (const bool toSpace : {true, false}) {
    out.push_back(copyEntry(toSpace ? "DepthToSpace" : "SpaceToDepth", 1, copySupport({}, 4),
                            [toSpace](const KernelCreateInfo& info) -> PlanRule {
                              const int64_t block = info.node.attrInt("blocksize", 0);
                              const bool crd = info.node.attrString("mode", "DCR") == "CRD";
                              return [=](const RecordContext&, const Shape& in) {
                                return blockPlan(in, block, toSpace, crd);
                              };
                            }));
  }

  out.push_back({"Concat", 4, 1 << 30,
                 [](const SupportQuery& q) {
                   NodeSupport s = copySupport({})(q);
                   for (size_t i = 1; i < q.node.inputs.size() && s.supported; ++i) {
                     if (q.hasInput(i) && q.inputType(i) != q.inputType(0))
                       s = unsupported("Concat inputs differ in type");
                   }
                   return s;
                 },
                 [](const KernelCreateInfo& info) -> Result<std::unique_ptr<VkKernel>> {
                   return std::unique_ptr<VkKernel>(new ConcatKernel(info));
                 }});

  out.push_back({"Split", 2, 1 << 30, copySupport({1}),
                 [](const KernelCreateInfo& info) -> Result<std::unique_ptr<VkKernel>> {
                   return std::unique_ptr<VkKernel>(new SplitKernel(info));
                 }});

  registerPadKernels(out);
  registerGatherKernels(out);
  registerCastKernels(out);
}

}  // namespace kiln::vk
