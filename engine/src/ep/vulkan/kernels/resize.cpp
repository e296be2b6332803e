// Vulkan kernels: Resize (opset 10+) and Upsample (7-9), nearest and n-linear, float32 (nearest also
// uint8/int8 with 8-bit storage), rank <= 4
// (shaders/resize.comp). Output shape, per-axis scale and "length resized" are computed on the host from the
// scales/sizes inputs (host values) exactly as the CPU EP does; the shader maps coordinates per element.
// Where the CPU EP resizes in onnxruntime's bilinear arithmetic (float32 images, the last two axes, see
// resize_bilinear.h), so does shaders/resize_bilinear.comp, bit for bit: quantized models need it.
// Not claimed: cubic, tf_crop_and_resize (roi), antialias.
#include <cmath>
#include <limits>
#include <optional>

#include "ep/vulkan/kernel_registry.h"
#include "ep/vulkan/kernel_utils.h"

namespace kiln::vk {
namespace {

constexpr uint32_t kLocal = 64;
constexpr size_t kMaxResizeRank = 4;

const char* const kCoordModes[] = {"half_pixel", "half_pixel_symmetric", "pytorch_half_pixel",
                                   "align_corners", "asymmetric", "tf_half_pixel_for_nn"};
const char* const kNearestModes[] = {"round_prefer_floor", "round_prefer_ceil", "floor", "ceil"};
constexpr int kAsymmetric = 4, kLegacyNearest = 4;

bool isByte(DataType type) { return type == DataType::UINT8 || type == DataType::INT8; }

// resize_bilinear.comp's COORD for a kCoordModes index: the modes onnxruntime's bilinear arithmetic has (as the CPU
// EP's bilinearCoordinates); -1 for the others.
int onnxruntimeBilinearCoord(int coord) {
  switch (coord) {
    case 0: return 0;  // half_pixel
    case 2: return 1;  // pytorch_half_pixel
    case 3: return 2;  // align_corners
    case 4: return 3;  // asymmetric
    default: return -1;
  }
}

int indexOf(const char* const* names, size_t count, const std::string& name) {
  for (size_t i = 0; i < count; ++i) {
    if (name == names[i]) return static_cast<int>(i);
  }
  return -1;
}

// Upsample and Resize-10 use asymmetric coordinates with the legacy nearest rule.
bool legacy(const std::string& opType, int64_t opset) { return opType == "Upsample" || opset < 11; }

class ResizeKernel final : public VkKernel {
 public:
  explicit ResizeKernel(const KernelCreateInfo& info)
      : upsample_(info.node.opType == "Upsample"), opset_(info.opset) {
    const ir::Node& node = info.node;
    const std::string mode = node.attrString("mode", "nearest");
    const bool linear = mode == "linear" || mode == "bilinear";
    int coord = kAsymmetric, nearest = kLegacyNearest;
    if (!legacy(node.opType, opset_)) {
      coord = indexOf(kCoordModes, std::size(kCoordModes),
                      node.attrString("coordinate_transformation_mode", "half_pixel"));
      nearest = indexOf(kNearestModes, std::size(kNearestModes), node.attrString("nearest_mode", "round_prefer_floor"));
    }
    ShaderVariant variant{"resize", {}, 2, kLocal};
    variant.define("LINEAR", linear ? 1 : 0).define("COORD", coord).define("NEAREST", nearest);
    if (isByte(info.inputType(0))) {
      shader_ = useShader(variant.define("ELEM8", 1));
    } else {
      shader_ = useShader(storedAs(variant, floatStorage(info)));
    }
    ortCoord_ = linear && floatStorage(info) == DataType::FLOAT ? onnxruntimeBilinearCoord(coord) : -1;
    if (ortCoord_ >= 0) {
      ShaderVariant bilinear{"resize_bilinear", {}, 2, kLocal};
      bilinear.define("COORD", ortCoord_);
      bilinearShader_ = useShader(bilinear);
    }
    attrScales_ = node.attrFloats("scales");
    axes_ = node.attrInts("axes");
    keepAspect_ = node.attrString("keep_aspect_ratio_policy", "stretch");
  }

  Status record(RecordContext& ctx) override {
    KILN_ASSIGN_OR_RETURN(const VkTensor* x, ctx.deviceInput(0));
    const int64_t rank = static_cast<int64_t>(x->shape.size());
    if (rank == 0 || rank > static_cast<int64_t>(kMaxResizeRank)) {
      return Status(StatusCode::NOT_IMPLEMENTED, "Vulkan Resize takes rank 1 to 4");
    }
    std::vector<int64_t> axes;
    for (int64_t a : axes_) {
      KILN_ASSIGN_OR_RETURN(int64_t axis, normalizeAxis(a, rank, "Resize axis"));
      axes.push_back(axis);
    }
    if (axes.empty()) {
      for (int64_t d = 0; d < rank; ++d) axes.push_back(d);
    }
    const size_t n = axes.size();
    std::vector<float> scalesIn;
    std::vector<int64_t> sizesIn;
    const bool modern = !upsample_ && opset_ >= 11;
    const size_t scalesInput = modern ? 2 : 1;
    if (upsample_ && opset_ < 9) {
      scalesIn = attrScales_;
    } else if (ctx.input(scalesInput) && ctx.input(scalesInput)->elementCount() > 0) {
      KILN_ASSIGN_OR_RETURN(scalesIn, hostFloats(ctx.input(scalesInput), "Resize scales"));
    }
    if (modern && ctx.input(3) && ctx.input(3)->elementCount() > 0) {
      KILN_ASSIGN_OR_RETURN(sizesIn, hostInts(ctx.input(3), "Resize sizes"));
    }
    if (scalesIn.empty() == sizesIn.empty()) {
      return Status(StatusCode::INVALID_ARGUMENT, "Resize needs exactly one of scales and sizes");
    }
    if ((!scalesIn.empty() && scalesIn.size() != n) || (!sizesIn.empty() && sizesIn.size() != n)) {
      return Status(StatusCode::INVALID_ARGUMENT, "Resize scales/sizes must have " + std::to_string(n) + " values");
    }
    // Per-axis scale, output length and "length resized", as in the CPU EP.
    const Shape& xs = x->shape;
    // The scale as num / den: sizes give the exact ratio out / in (see resize.comp's originalCoordinate).
    std::vector<double> scale(rank, 1.0), scaleNum(rank, 1.0), scaleDen(rank, 1.0), lengthResized(rank);
    Shape ys = xs;
    for (int64_t d = 0; d < rank; ++d) lengthResized[d] = static_cast<double>(xs[d]);
    if (!sizesIn.empty()) {
      const bool notLarger = keepAspect_ == "not_larger";
      double keepScale = notLarger ? std::numeric_limits<double>::max() : 0.0;
      for (size_t k = 0; k < n; ++k) {
        if (sizesIn[k] < 0) return Status(StatusCode::INVALID_ARGUMENT, "Resize sizes must not be negative");
        const double s = xs[axes[k]] == 0 ? 1.0 : static_cast<double>(sizesIn[k]) / xs[axes[k]];
        keepScale = notLarger ? std::min(keepScale, s) : std::max(keepScale, s);
      }
      for (size_t k = 0; k < n; ++k) {
        const int64_t axis = axes[k], in = xs[axis];
        if (keepAspect_ == "stretch") {
          ys[axis] = sizesIn[k];
          scale[axis] = in == 0 ? 1.0 : static_cast<double>(sizesIn[k]) / in;
          scaleNum[axis] = in == 0 ? 1.0 : static_cast<double>(sizesIn[k]);
          scaleDen[axis] = in == 0 ? 1.0 : static_cast<double>(in);
        } else {
          ys[axis] = static_cast<int64_t>(std::llround(keepScale * in));
          scale[axis] = scaleNum[axis] = keepScale;
        }
        lengthResized[axis] = static_cast<double>(ys[axis]);
      }
    } else {
      for (size_t k = 0; k < n; ++k) {
        const int64_t axis = axes[k];
        if (!(scalesIn[k] > 0) || !std::isfinite(scalesIn[k])) {
          return Status(StatusCode::INVALID_ARGUMENT, "Resize scales must be positive");
        }
        scale[axis] = scaleNum[axis] = scalesIn[k];
        ys[axis] = static_cast<int64_t>(std::floor(static_cast<double>(xs[axis]) * scalesIn[k]));
        lengthResized[axis] = scalesIn[k] * static_cast<double>(xs[axis]);
      }
    }
    for (int64_t d = 0; d < rank; ++d) {
      if (ys[d] > 0 && xs[d] == 0) return Status(StatusCode::INVALID_ARGUMENT, "cannot resize an empty axis");
    }
    KILN_ASSIGN_OR_RETURN(const VkTensor* y, ctx.allocateOutput(0, x->dtype, ys));
    if (y->elementCount() == 0) return Status::ok();
    if (ortCoord_ >= 0 && x->dtype == DataType::FLOAT && keepAspect_ == "stretch") {
      if (auto done = recordOnnxruntimeBilinear(ctx, *x, *y, scale, !sizesIn.empty())) return *done;
    }
    // Pad to rank 4 with leading axes of length 1 and scale 1.
    const size_t pad = kMaxResizeRank - static_cast<size_t>(rank);
    std::vector<uint32_t> inDims(kMaxResizeRank, 1), outDims(kMaxResizeRank, 1);
    for (size_t d = 0; d < kMaxResizeRank; ++d) {
      const bool real = d >= pad;
      inDims[d] = real ? static_cast<uint32_t>(xs[d - pad]) : 1;
      outDims[d] = real ? static_cast<uint32_t>(ys[d - pad]) : 1;
    }
    // One invocation per 4 consecutive outputs of a row (see resize.comp).
    const uint64_t rowLength = outDims[kMaxResizeRank - 1];
    const uint64_t invocations = static_cast<uint64_t>(y->elementCount()) / rowLength * ((rowLength + 3) / 4);
    uint32_t rowStride = 0;
    const auto groups = linearGroups(invocations, kLocal, &rowStride);
    PushConstants push;
    push.u32(invocations).u32(rowStride).u32Array(inDims, kMaxResizeRank).u32Array(outDims, kMaxResizeRank);
    for (size_t d = 0; d < kMaxResizeRank; ++d) push.f32(d >= pad ? scaleNum[d - pad] : 1.0);
    for (size_t d = 0; d < kMaxResizeRank; ++d) push.f32(d >= pad ? scaleDen[d - pad] : 1.0);
    for (size_t d = 0; d < kMaxResizeRank; ++d) push.f32(d >= pad ? lengthResized[d - pad] : 1.0);
    const BufferRange buffers[] = {x->range(), y->range()};
    return ctx.dispatch(shader_, buffers, push.data(), push.size(), groups);
  }

 private:
  // The CPU EP's resizeLikeOnnxruntime conditions: rank 2 or 4, only the last two axes resized, no empty axis.
  // nullopt where they do not hold (the generic shader runs), else the dispatch's status.
  std::optional<Status> recordOnnxruntimeBilinear(RecordContext& ctx, const VkTensor& x, const VkTensor& y,
                                                  const std::vector<double>& scale, bool bySizes) const {
    const Shape& xs = x.shape;
    const Shape& ys = y.shape;
    const size_t rank = xs.size();
    if (rank != 2 && rank != 4) return std::nullopt;
    for (size_t d = 0; d + 2 < rank; ++d) {
      if (ys[d] != xs[d] || scale[d] != 1.0) return std::nullopt;
    }
    float axisScale[2];
    for (size_t k = 0; k < 2; ++k) {
      const size_t d = rank - 2 + k;
      if (xs[d] == 0) return std::nullopt;
      axisScale[k] = bySizes ? static_cast<float>(ys[d]) / static_cast<float>(xs[d]) : static_cast<float>(scale[d]);
    }
    const uint64_t count = static_cast<uint64_t>(y.elementCount());
    uint32_t rowStride = 0;
    const auto groups = linearGroups(count, kLocal, &rowStride);
    PushConstants push;
    push.u32(count).u32(rowStride);
    push.u32(static_cast<uint32_t>(xs[rank - 2])).u32(static_cast<uint32_t>(xs[rank - 1]));
    push.u32(static_cast<uint32_t>(ys[rank - 2])).u32(static_cast<uint32_t>(ys[rank - 1]));
    push.f32(axisScale[0]).f32(axisScale[1]);
    const BufferRange buffers[] = {x.range(), y.range()};
    return ctx.dispatch(bilinearShader_, buffers, push.data(), push.size(), groups);
  }

  bool upsample_;
  int64_t opset_;
  uint32_t shader_ = 0;
  int ortCoord_ = -1;  // resize_bilinear.comp's COORD, or -1 where onnxruntime's bilinear arithmetic never applies
  uint32_t bilinearShader_ = 0;
  std::vector<float> attrScales_;
  std::vector<int64_t> axes_;
  std::string keepAspect_;
};

NodeSupport checkResize(const SupportQuery& q) {
  const DataType type = q.inputType(0);
  NodeSupport s = isByte(type) ? supported() : requireFloat(q, {0});
  if (!s.supported) return s;
  if (isByte(type)) {
    if (!q.device.storageBuffer8Bit)
      return unsupported("moving 8-bit elements needs storageBuffer8BitAccess, which the device lacks");
    if (q.node.attrString("mode", "nearest") != "nearest")
      return unsupported("Resize of " + std::string(dataTypeName(type)) + " data is nearest only on Vulkan");
    if (q.outputType(0) != DataType::UNDEFINED && q.outputType(0) != type)
      return unsupported("output type differs from the input's");
  }
  const int rank = q.inputRank(0);
  if (rank < 1 || rank > static_cast<int>(kMaxResizeRank)) return unsupported("Vulkan Resize takes rank 1 to 4");
  const ir::Node& node = q.node;
  const std::string mode = node.attrString("mode", "nearest");
  if (mode != "nearest" && mode != "linear" && !(mode == "bilinear" && node.opType == "Upsample")) {
    return unsupported("Resize mode '" + mode + "' is not implemented on Vulkan");
  }
  if (!legacy(node.opType, q.opset)) {
    const std::string coord = node.attrString("coordinate_transformation_mode", "half_pixel");
    if (indexOf(kCoordModes, std::size(kCoordModes), coord) < 0) {
      return unsupported("coordinate_transformation_mode '" + coord + "' is not implemented on Vulkan");
    }
    const std::string nearest = node.attrString("nearest_mode", "round_prefer_floor");
    if (indexOf(kNearestModes, std::size(kNearestModes), nearest) < 0) return unsupported("unknown nearest_mode");
    if (node.attrInt("antialias", 0) != 0) return unsupported("antialias is not implemented on Vulkan");
    const std::string keep = node.attrString("keep_aspect_ratio_policy", "stretch");
    if (keep != "stretch" && keep != "not_larger" && keep != "not_smaller") return unsupported("unknown policy");
  }
  for (size_t i = 1; i < 4 && s.supported; ++i) s = requireHostInput(q, i, "Resize's roi/scales/sizes");
  return s;
}

}  // namespace

void registerResizeKernels(std::vector<KernelEntry>& out) {
  auto create = [](const KernelCreateInfo& info) -> Result<std::unique_ptr<VkKernel>> {
    return std::unique_ptr<VkKernel>(new ResizeKernel(info));
  };
  out.push_back({"Resize", 10, 1 << 30, checkResize, create});
  out.push_back({"Upsample", 7, 1 << 30, checkResize, create});
}

}  // namespace kiln::vk
