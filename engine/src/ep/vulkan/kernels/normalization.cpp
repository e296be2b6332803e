// Vulkan kernels: BatchNormalization (inference), InstanceNormalization, LayerNormalization and the RMS/skip
// normalizations of transformers (RMSNormalization, SimplifiedLayerNormalization, Skip(Simplified)LayerNormalization),
// all in shaders/normalization.comp. BatchNormalization with constant parameters folds them on the host into one
// per-channel affine map (y = x * a + b, kept in float32) at creation; otherwise the shader computes a and b
// itself. X, Y and the parameter inputs are float32, or float16 storage (shaders/storage.glsl).
#include <algorithm>
#include <cmath>
#include <functional>

#include "ep/vulkan/kernel_registry.h"
#include "ep/vulkan/kernel_utils.h"

namespace kiln::vk {
namespace {

constexpr uint32_t kElementLocal = 64;
constexpr uint32_t kRowLocal = 128;
constexpr uint32_t kMaxGroupsX = 65535;

bool outputRequested(const ir::Node& node, size_t i) { return i < node.outputs.size() && !node.outputs[i].empty(); }
bool hasNodeInput(const ir::Node& node, size_t i) { return i < node.inputs.size() && !node.inputs[i].empty(); }

// Element i of a float32 or float16 tensor, as double.
double valueAt(const Tensor& t, int64_t i) {
  return t.dtype() == DataType::FLOAT16 ? double(float(t.data<Float16>()[i])) : double(t.data<float>()[i]);
}

// Workgroups for one workgroup per row; `rowStride` receives the rows per y row of workgroups.
std::array<uint32_t, 3> rowGroups(int64_t rows, uint32_t* rowStride) {
  *rowStride = static_cast<uint32_t>(std::min<int64_t>(rows, kMaxGroupsX));
  return {*rowStride, static_cast<uint32_t>((rows + *rowStride - 1) / *rowStride), 1};
}

class BatchNormKernel final : public VkKernel {
 public:
  explicit BatchNormKernel(const KernelCreateInfo& info) : epsilon_(info.node.attrFloat("epsilon", 1e-5f)) {
    const auto& c = info.constantInputs;
    packed_ = c.size() >= 5 && c[1] && c[2] && c[3] && c[4];
    if (packed_) {
      const int64_t count = c[1]->numel();
      const bool sameSize = c[2]->numel() == count && c[3]->numel() == count && c[4]->numel() == count;
      channels_ = sameSize ? count : -1;  // -1: record reports the mismatch
      folded_ = addConstant(info, [&] {
        std::vector<float> ab(static_cast<size_t>(2 * count));
        for (int64_t i = 0; i < count && sameSize; ++i) {
          // Folded in double, as the CPU reference does, then rounded once.
          const double a = valueAt(*c[1], i) / std::sqrt(valueAt(*c[4], i) + epsilon_);
          ab[static_cast<size_t>(i)] = static_cast<float>(a);
          ab[static_cast<size_t>(count + i)] = static_cast<float>(valueAt(*c[2], i) - valueAt(*c[3], i) * a);
        }
        return Tensor::fromVector<float>({2 * count}, ab);
      });
      for (size_t i = 1; i <= 4; ++i) absorbInput(i);
    }
    ShaderVariant variant{"normalization", {}, packed_ ? 3u : 6u, kElementLocal};
    variant.define("BATCH_NORM").define("PACKED", packed_ ? 1 : 0);
    shader_ = useShader(storedAs(variant, floatStorage(info)));
  }

  Status record(RecordContext& ctx) override {
    KILN_ASSIGN_OR_RETURN(const VkTensor* x, ctx.deviceInput(0));
    if (x->shape.size() < 2) {
      return Status(StatusCode::INVALID_ARGUMENT, "BatchNormalization X must be [N, C, ...], got " +
                                                      shapeToString(x->shape));
    }
    const int64_t channels = x->shape[1];
    std::vector<BufferRange> buffers{x->range()};
    if (packed_) {
      if (channels_ != channels) {
        return Status(StatusCode::INVALID_ARGUMENT, "BatchNormalization parameters have " +
                                                        std::to_string(channels_) + " values; X " +
                                                        shapeToString(x->shape) + " needs " + std::to_string(channels));
      }
      buffers.push_back(ctx.constant(folded_).range());
    } else {
      for (size_t i = 1; i <= 4; ++i) {
        KILN_ASSIGN_OR_RETURN(const VkTensor* param, ctx.deviceInput(i));
        if (param->elementCount() != channels) {
          return Status(StatusCode::INVALID_ARGUMENT, "BatchNormalization input " + std::to_string(i) + " has " +
                                                          std::to_string(param->elementCount()) +
                                                          " values; X needs " + std::to_string(channels));
        }
        buffers.push_back(param->range());
      }
    }
    KILN_ASSIGN_OR_RETURN(const VkTensor* y, ctx.allocateOutput(0, x->dtype, x->shape));
    const int64_t count = x->elementCount();
    if (count == 0) return Status::ok();
    buffers.push_back(y->range());
    uint32_t rowStride = 0;
    const auto groups = linearGroups(static_cast<uint64_t>(count), kElementLocal, &rowStride);
    PushConstants push;
    push.u32(count).u32(rowStride).u32(channels).u32(count / (x->shape[0] * channels)).f32(epsilon_);
    return ctx.dispatch(shader_, buffers, push.data(), push.size(), groups);
  }

 private:
  float epsilon_;
  bool packed_ = false;
  int64_t channels_ = 0;
  uint32_t folded_ = 0, shader_ = 0;
};

// The row normalization variants (InstanceNormalization and LayerNormalization share them): one workgroup
// per row, and where the device has subgroup arithmetic one subgroup per row.
struct RowShaders {
  uint32_t perGroup = 0, perSubgroup = 0;
  bool hasSubgroup = false;
  uint32_t rowsPerGroup = 1;  // with perSubgroup
};

RowShaders useRowShaders(const KernelCreateInfo& info, ShaderVariant variant,
                         const std::function<uint32_t(ShaderVariant)>& use) {
  RowShaders shaders;
  shaders.perGroup = use(variant);
  shaders.hasSubgroup = info.device.subgroupArithmetic;
  if (shaders.hasSubgroup) {
    shaders.perSubgroup = use(variant.define("SUBGROUP_ROWS"));
    shaders.rowsPerGroup = std::max<uint32_t>(1, kRowLocal / std::max<uint32_t>(1, info.device.subgroupSize));
  }
  return shaders;
}

struct RowNormPush {
  int64_t rows, rowLength, channels, scaleCount, biasCount;
  float epsilon;
  int64_t skipRows = 1;  // SKIP variants: rows of the skip input
};

Status recordRows(RecordContext& ctx, const RowShaders& shaders, const RowNormPush& r,
                  std::vector<BufferRange> buffers) {
  // Many medium rows: a subgroup each (no barriers); few long rows: a workgroup each.
  const bool perSubgroup = shaders.hasSubgroup && (r.rowLength <= 4096 || r.rows >= 1024);
  const int64_t perGroup = perSubgroup ? shaders.rowsPerGroup : 1;
  uint32_t rowStride = 0;
  const auto groups = rowGroups((r.rows + perGroup - 1) / perGroup, &rowStride);
  PushConstants push;
  push.u32(r.rows).u32(r.rowLength).u32(rowStride).u32(r.channels).u32(r.scaleCount).u32(r.biasCount);
  push.f32(r.epsilon).u32(shaders.rowsPerGroup).u32(r.skipRows);
  return ctx.dispatch(perSubgroup ? shaders.perSubgroup : shaders.perGroup, buffers, push.data(), push.size(),
                      groups);
}

class InstanceNormKernel final : public VkKernel {
 public:
  explicit InstanceNormKernel(const KernelCreateInfo& info) : epsilon_(info.node.attrFloat("epsilon", 1e-5f)) {
    ShaderVariant variant{"normalization", {}, 4, kRowLocal};
    variant.define("INSTANCE").define("HAS_BIAS").define("STATS", 0);
    shaders_ = useRowShaders(info, storedAs(variant, floatStorage(info)), [this](ShaderVariant v) { return useShader(std::move(v)); });
  }

  Status record(RecordContext& ctx) override {
    KILN_ASSIGN_OR_RETURN(const VkTensor* x, ctx.deviceInput(0));
    KILN_ASSIGN_OR_RETURN(const VkTensor* scale, ctx.deviceInput(1));
    KILN_ASSIGN_OR_RETURN(const VkTensor* bias, ctx.deviceInput(2));
    if (x->shape.size() < 3) {
      return Status(StatusCode::INVALID_ARGUMENT, "InstanceNormalization input must be [N, C, D1, ...], got " +
                                                      shapeToString(x->shape));
    }
    const int64_t channels = x->shape[1];
    if (scale->elementCount() != channels || bias->elementCount() != channels) {
      return Status(StatusCode::INVALID_ARGUMENT,
                    "InstanceNormalization scale and B must have " + std::to_string(channels) + " values");
    }
    KILN_ASSIGN_OR_RETURN(const VkTensor* y, ctx.allocateOutput(0, x->dtype, x->shape));
    const int64_t rows = x->shape[0] * channels;
    if (x->elementCount() == 0) return Status::ok();
    const RowNormPush r{rows, x->elementCount() / rows, channels, channels, channels, epsilon_};
    return recordRows(ctx, shaders_, r, {x->range(), scale->range(), bias->range(), y->range()});
  }

 private:
  float epsilon_;
  RowShaders shaders_;
};

// Scale/B broadcast over the row [axis, rank) of X: supported when, less leading 1s, their shape is a trailing
// part of X's (so element i of the row reads index i % count).
bool broadcastsAsSuffix(const Shape& param, const Shape& x, int64_t axis) {
  size_t first = 0;
  while (first < param.size() && param[first] == 1) ++first;
  const size_t length = param.size() - first;
  if (length > x.size() - static_cast<size_t>(axis)) return false;
  return std::equal(param.begin() + static_cast<std::ptrdiff_t>(first), param.end(),
                    x.end() - static_cast<std::ptrdiff_t>(length));
}

class LayerNormKernel final : public VkKernel {
 public:
  explicit LayerNormKernel(const KernelCreateInfo& info)
      : axis_(info.node.attrInt("axis", -1)),
        epsilon_(info.node.attrFloat("epsilon", 1e-5f)),
        hasBias_(info.node.inputs.size() > 2 && !info.node.inputs[2].empty()),
        meanOut_(outputRequested(info.node, 1)),
        invStdOut_(outputRequested(info.node, 2)) {
    const bool stats = meanOut_ || invStdOut_;
    ShaderVariant variant{"normalization", {}, stats ? 6u : 4u, kRowLocal};
    variant.define("INSTANCE", 0).define("HAS_BIAS", hasBias_ ? 1 : 0).define("STATS", stats ? 1 : 0);
    shaders_ = useRowShaders(info, storedAs(variant, floatStorage(info)), [this](ShaderVariant v) { return useShader(std::move(v)); });
  }

  Status record(RecordContext& ctx) override {
    KILN_ASSIGN_OR_RETURN(const VkTensor* x, ctx.deviceInput(0));
    KILN_ASSIGN_OR_RETURN(const VkTensor* scale, ctx.deviceInput(1));
    const VkTensor* bias = scale;
    if (hasBias_) {
      KILN_ASSIGN_OR_RETURN(bias, ctx.deviceInput(2));
    }
    const int64_t rank = static_cast<int64_t>(x->shape.size());
    if (rank == 0) return Status(StatusCode::INVALID_ARGUMENT, "LayerNormalization X must have rank >= 1");
    KILN_ASSIGN_OR_RETURN(const int64_t axis, normalizeAxis(axis_, rank, "LayerNormalization axis"));
    for (const VkTensor* param : {scale, bias}) {
      if (!broadcastsAsSuffix(param->shape, x->shape, axis) || param->elementCount() == 0) {
        return Status(StatusCode::NOT_IMPLEMENTED, "LayerNormalization Scale/B " + shapeToString(param->shape) +
                                                       " broadcasts to X " + shapeToString(x->shape) +
                                                       " in a way the Vulkan kernel does not take");
      }
    }
    int64_t rows = 1;
    for (int64_t d = 0; d < axis; ++d) rows *= x->shape[static_cast<size_t>(d)];
    Shape statShape = x->shape;
    std::fill(statShape.begin() + axis, statShape.end(), 1);
    std::vector<BufferRange> buffers{x->range(), scale->range(), bias->range()};
    KILN_ASSIGN_OR_RETURN(const VkTensor* y, ctx.allocateOutput(0, x->dtype, x->shape));
    buffers.push_back(y->range());
    const uint64_t statBytes = static_cast<uint64_t>(std::max<int64_t>(rows, 1)) * 4;
    for (size_t i : {size_t{1}, size_t{2}}) {
      const bool requested = i == 1 ? meanOut_ : invStdOut_;
      if (requested) {
        KILN_ASSIGN_OR_RETURN(const VkTensor* stat, ctx.allocateOutput(i, DataType::FLOAT, statShape));
        buffers.push_back(stat->range());
      } else if (meanOut_ || invStdOut_) {
        KILN_ASSIGN_OR_RETURN(BufferRange unused, ctx.scratch(statBytes));
        buffers.push_back(unused);
      }
    }
    if (x->elementCount() == 0) return Status::ok();
    const RowNormPush r{rows, x->elementCount() / rows, 1, scale->elementCount(), bias->elementCount(), epsilon_};
    return recordRows(ctx, shaders_, r, std::move(buffers));
  }

 private:
  int64_t axis_;
  float epsilon_;
  bool hasBias_, meanOut_, invStdOut_;
  RowShaders shaders_;
};

// The RMS and skip row normalizations of transformers, on the same row shader:
//  - RMSNormalization (opset 23) and SimplifiedLayerNormalization (onnxruntime's, ai.onnx version 1; optional
//    output inv_std_var): RMS over [axis, rank), times scale;
//  - SkipLayerNormalization / SkipSimplifiedLayerNormalization (com.microsoft): the row is input + skip (+ bias),
//    normalized over the last axis (mean/variance, or RMS) times gamma (+ beta); optional outputs mean, inv_std_var
//    and the sum itself. skip is input's shape, or [1, seq, hidden] / [seq, hidden] repeating over the batch.
class RowFamilyKernel final : public VkKernel {
 public:
  enum class Form { kRms, kSimplified, kSkip, kSkipSimplified };

  RowFamilyKernel(const KernelCreateInfo& info, Form form)
      : form_(form),
        axis_(skips() ? -1 : info.node.attrInt("axis", -1)),
        epsilon_(info.node.attrFloat("epsilon", form == Form::kSkip || form == Form::kSkipSimplified ? 1e-12f : 1e-5f)),
        hasBeta_(form == Form::kSkip && hasNodeInput(info.node, 3)),
        hasSkipBias_(skips() && hasNodeInput(info.node, form == Form::kSkip ? 4 : 3)),
        sumOut_(skips() && outputRequested(info.node, 3)) {
    const size_t invStdOutput = skips() ? 2 : 1;
    meanOut_ = skips() && outputRequested(info.node, 1);
    invStdOut_ = form != Form::kRms && outputRequested(info.node, invStdOutput);
    const bool stats = skips() || meanOut_ || invStdOut_;
    ShaderVariant variant{"normalization", {}, skips() ? 9u : (stats ? 6u : 4u), kRowLocal};
    variant.define("INSTANCE", 0).define("HAS_BIAS", hasBeta_ ? 1 : 0).define("STATS", stats ? 1 : 0);
    variant.define("RMS", form == Form::kSkip ? 0 : 1).define("SKIP", skips() ? 1 : 0);
    variant.define("SKIP_BIAS", hasSkipBias_ ? 1 : 0).define("SUM_OUT", sumOut_ ? 1 : 0);
    shaders_ = useRowShaders(info, storedAs(variant, floatStorage(info)),
                             [this](ShaderVariant v) { return useShader(std::move(v)); });
  }

  Status record(RecordContext& ctx) override {
    KILN_ASSIGN_OR_RETURN(const VkTensor* x, ctx.deviceInput(0));
    const size_t scaleInput = skips() ? 2 : 1;
    KILN_ASSIGN_OR_RETURN(const VkTensor* scale, ctx.deviceInput(scaleInput));
    const VkTensor* beta = scale;
    if (hasBeta_) {
      KILN_ASSIGN_OR_RETURN(beta, ctx.deviceInput(3));
    }
    const int64_t rank = static_cast<int64_t>(x->shape.size());
    if (rank == 0) return fail("X must have rank >= 1");
    KILN_ASSIGN_OR_RETURN(const int64_t axis, normalizeAxis(axis_, rank, "axis"));
    int64_t rows = 1;
    for (int64_t d = 0; d < axis; ++d) rows *= x->shape[static_cast<size_t>(d)];
    const int64_t rowLength = rows == 0 ? 0 : x->elementCount() / std::max<int64_t>(rows, 1);
    for (const VkTensor* param : {scale, beta}) {
      const bool exact = skips() ? param->shape == Shape{rowLength} : broadcastsAsSuffix(param->shape, x->shape, axis);
      if (!exact || param->elementCount() == 0) {
        return fail("scale/gamma/beta " + shapeToString(param->shape) + " does not fit X " + shapeToString(x->shape));
      }
    }
    std::vector<BufferRange> buffers{x->range(), scale->range(), beta->range()};
    KILN_ASSIGN_OR_RETURN(const VkTensor* y, ctx.allocateOutput(0, x->dtype, x->shape));
    buffers.push_back(y->range());
    Shape statShape = x->shape;
    std::fill(statShape.begin() + axis, statShape.end(), 1);
    const uint64_t statBytes = static_cast<uint64_t>(std::max<int64_t>(rows, 1)) * 4;
    const bool stats = skips() || meanOut_ || invStdOut_;
    for (const auto& [wanted, output] : {std::pair{meanOut_, size_t{1}}, std::pair{invStdOut_, skips() ? size_t{2} : 1}}) {
      if (!stats) break;
      if (wanted) {
        KILN_ASSIGN_OR_RETURN(const VkTensor* stat, ctx.allocateOutput(output, DataType::FLOAT, statShape));
        buffers.push_back(stat->range());
      } else {
        KILN_ASSIGN_OR_RETURN(BufferRange unused, ctx.scratch(statBytes));
        buffers.push_back(unused);
      }
    }
    int64_t skipRows = 1;
    if (skips()) {
      KILN_ASSIGN_OR_RETURN(const VkTensor* skip, ctx.deviceInput(1));
      KILN_ASSIGN_OR_RETURN(skipRows, skipRowCount(x->shape, skip->shape));
      const VkTensor* skipBias = skip;
      if (hasSkipBias_) {
        KILN_ASSIGN_OR_RETURN(skipBias, ctx.deviceInput(form_ == Form::kSkip ? 4 : 3));
        if (skipBias->shape != Shape{rowLength}) return fail("bias must be [" + std::to_string(rowLength) + "]");
      }
      buffers.push_back(skip->range());
      buffers.push_back(skipBias->range());
      const VkTensor* sum = y;
      if (sumOut_) {
        KILN_ASSIGN_OR_RETURN(sum, ctx.allocateOutput(3, x->dtype, x->shape));
      }
      buffers.push_back(sum->range());
    }
    if (x->elementCount() == 0) return Status::ok();
    RowNormPush r{rows, rowLength, 1, scale->elementCount(), beta->elementCount(), epsilon_};
    r.skipRows = skipRows;
    return recordRows(ctx, shaders_, r, std::move(buffers));
  }

 private:
  bool skips() const { return form_ == Form::kSkip || form_ == Form::kSkipSimplified; }

  // Rows of skip: X's (same shape) or seq (repeating over the batch of a 3-D X).
  Result<int64_t> skipRowCount(const Shape& x, const Shape& skip) const {
    if (x.size() != 2 && x.size() != 3) return fail("input must be 2-D or 3-D, got " + shapeToString(x));
    if (skip == x) return std::max<int64_t>(1, shapeSize(x) / std::max<int64_t>(x.back(), 1));
    if (x.size() == 3 && (skip == Shape{1, x[1], x[2]} || skip == Shape{x[1], x[2]})) return std::max<int64_t>(1, x[1]);
    return fail("skip " + shapeToString(skip) + " must be input's shape " + shapeToString(x) +
                ", [1, seq, hidden] or [seq, hidden]");
  }

  Status fail(const std::string& message) const {
    static const char* const kNames[] = {"RMSNormalization", "SimplifiedLayerNormalization", "SkipLayerNormalization",
                                         "SkipSimplifiedLayerNormalization"};
    return Status(StatusCode::INVALID_ARGUMENT, std::string(kNames[static_cast<int>(form_)]) + ": " + message);
  }

  Form form_;
  int64_t axis_;
  float epsilon_;
  bool hasBeta_, hasSkipBias_, sumOut_;
  bool meanOut_ = false, invStdOut_ = false;
  RowShaders shaders_;
};

// Shapes of X and a Scale/B input both fully known and incompatible with the kernel's broadcasting.
bool knownBadBroadcast(const SupportQuery& q, size_t param, int64_t axis) {
  const Tensor* constant = param < q.constantInputs.size() ? q.constantInputs[param] : nullptr;
  if (!q.hasInput(param) || q.inputRank(0) < 0 || (q.inputRank(param) < 0 && !constant)) return false;
  Shape x, p;
  for (const Dimension& d : *q.inputInfo[0]->shape) x.push_back(d.value);
  if (constant) {
    p = constant->shape();
  } else {
    for (const Dimension& d : *q.inputInfo[param]->shape) p.push_back(d.value);
  }
  if (std::any_of(x.begin(), x.end(), [](int64_t v) { return v < 0; })) return false;
  if (std::any_of(p.begin(), p.end(), [](int64_t v) { return v < 0; })) return false;
  const int64_t rank = static_cast<int64_t>(x.size());
  if (axis < -rank || axis >= rank) return true;
  return !broadcastsAsSuffix(p, x, axis < 0 ? axis + rank : axis);
}

// requireFloat over X and the parameters, also taking an initializer's own type where the graph declares none
// for it (IR >= 4 models need not list initializers among the graph inputs): all float32, or all float16.
NodeSupport requireFloatParams(const SupportQuery& q, std::initializer_list<size_t> inputs) {
  const DataType want = q.inputType(0) == DataType::FLOAT16 ? DataType::FLOAT16 : DataType::FLOAT;
  for (size_t i : inputs) {
    if (!q.hasInput(i)) continue;
    const Tensor* constant = i < q.constantInputs.size() ? q.constantInputs[i] : nullptr;
    const DataType type = constant && q.inputType(i) == DataType::UNDEFINED ? constant->dtype() : q.inputType(i);
    if (type != want) {
      return unsupported("input " + std::to_string(i) + " is " +
                         (type == DataType::UNDEFINED ? std::string("of unknown type") : dataTypeName(type)) +
                         " (the Vulkan kernel takes " + dataTypeName(want) + " here, as X)");
    }
  }
  return requireFloat(q, {0});
}

NodeSupport checkBatchNorm(const SupportQuery& q) {
  NodeSupport s = requireFloatParams(q, {0, 1, 2, 3, 4});
  if (!s.supported) return s;
  for (size_t i = 1; i < q.node.outputs.size(); ++i) {
    if (!q.node.outputs[i].empty()) return unsupported("training outputs (running/saved mean and var)");
  }
  if (q.node.attrInt("training_mode", 0) != 0) return unsupported("training_mode=1");
  if (q.opset < 9 && q.node.attrInt("spatial", 1) == 0) return unsupported("spatial=0");
  return supported();
}

NodeSupport checkLayerNorm(const SupportQuery& q) {
  NodeSupport s = requireFloatParams(q, {0, 1, 2});
  if (!s.supported) return s;
  if (q.node.attrInt("stash_type", 1) != 1) return unsupported("stash_type other than float32");
  const int64_t axis = q.node.attrInt("axis", -1);
  if (knownBadBroadcast(q, 1, axis) || knownBadBroadcast(q, 2, axis)) {
    return unsupported("Scale/B broadcast other than over a trailing part of the normalized dims");
  }
  return supported();
}

NodeSupport checkRowFamily(const SupportQuery& q, std::initializer_list<size_t> params, bool skips) {
  NodeSupport s = requireFloatParams(q, params);
  if (!s.supported) return s;
  if (!skips && q.node.attrInt("stash_type", 1) != 1) return unsupported("stash_type other than float32");
  if (!skips && knownBadBroadcast(q, 1, q.node.attrInt("axis", -1))) {
    return unsupported("scale broadcast other than over a trailing part of the normalized dims");
  }
  return supported();
}

KernelFactory rowFamily(RowFamilyKernel::Form form) {
  return [form](const KernelCreateInfo& info) -> Result<std::unique_ptr<VkKernel>> {
    return std::unique_ptr<VkKernel>(new RowFamilyKernel(info, form));
  };
}

template <class K>
KernelFactory factory() {
  return [](const KernelCreateInfo& info) -> Result<std::unique_ptr<VkKernel>> {
    return std::unique_ptr<VkKernel>(new K(info));
  };
}

}  // namespace

void registerNormalizationKernels(std::vector<KernelEntry>& out) {
  out.push_back({"BatchNormalization", 7, 1 << 30, checkBatchNorm, factory<BatchNormKernel>()});
  out.push_back({"InstanceNormalization", 6, 1 << 30,
                 [](const SupportQuery& q) { return requireFloatParams(q, {0, 1, 2}); }, factory<InstanceNormKernel>()});
  out.push_back({"LayerNormalization", 17, 1 << 30, checkLayerNorm, factory<LayerNormKernel>()});
  using Form = RowFamilyKernel::Form;
  out.push_back({"RMSNormalization", 23, 1 << 30, [](const SupportQuery& q) { return checkRowFamily(q, {0, 1}, false); },
                 rowFamily(Form::kRms)});
  out.push_back({"SimplifiedLayerNormalization", 1, 1 << 30,
                 [](const SupportQuery& q) { return checkRowFamily(q, {0, 1}, false); }, rowFamily(Form::kSimplified)});
  out.push_back({"SkipLayerNormalization", 1, 1 << 30,
                 [](const SupportQuery& q) { return checkRowFamily(q, {0, 1, 2, 3, 4}, true); },
                 rowFamily(Form::kSkip), ir::kMicrosoftDomain});
  out.push_back({"SkipSimplifiedLayerNormalization", 1, 1 << 30,
                 [](const SupportQuery& q) { return checkRowFamily(q, {0, 1, 2, 3}, true); },
                 rowFamily(Form::kSkipSimplified), ir::kMicrosoftDomain});
}

}  // namespace kiln::vk
