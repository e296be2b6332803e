// Resize (opset 10+) and Upsample (7-9): nearest, n-linear and cubic interpolation with every coordinate
// transformation mode. Interpolation is separable, so it runs as one 1-D pass per resized axis; each pass uses
// precomputed (input index, weight) taps per output index, which matches ONNX's reference interpolate_nd.
// Float bilinear resizes of images take resize_bilinear.h instead: onnxruntime's float arithmetic, bit for
// bit.
#include <cmath>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "ep/cpu/kernel_registry.h"
#include "ep/cpu/kernel_utils.h"
#include "ep/cpu/kernels/data_movement.h"
#include "ep/cpu/kernels/resize_bilinear.h"

namespace kiln::cpu {

void registerResizeKernels(KernelRegistry& registry);

namespace {

enum class InterpMode { NEAREST, LINEAR, CUBIC };
enum class CoordMode { HALF_PIXEL, HALF_PIXEL_SYMMETRIC, PYTORCH_HALF_PIXEL, ALIGN_CORNERS, ASYMMETRIC,
                       TF_HALF_PIXEL_FOR_NN, TF_CROP_AND_RESIZE };
// LEGACY is Upsample's and Resize-10's rule: floor when upsampling, ceil when downsampling.
enum class NearestMode { ROUND_PREFER_FLOOR, ROUND_PREFER_CEIL, FLOOR, CEIL, LEGACY };

struct ResizeAttributes {
  InterpMode mode = InterpMode::NEAREST;
  CoordMode coord = CoordMode::HALF_PIXEL;
  NearestMode nearest = NearestMode::ROUND_PREFER_FLOOR;
  double cubicA = -0.75;
  bool excludeOutside = false;
  double extrapolation = 0.0;
};

// Taps of one axis: for output index j, `width` (index, weight) pairs, and whether j lies outside the crop
// region (tf_crop_and_resize writes the extrapolation value there).
struct AxisTaps {
  int width = 1;
  std::vector<int64_t> index;
  std::vector<double> weight;
  std::vector<char> outside;
  bool anyOutside = false;
  bool identity = false;
};

// Maps output coordinate x to the input axis. `lengthResized` is in*scale (not floored) when scales were given: only
// half_pixel_symmetric's adjustment reads it. align_corners and pytorch_half_pixel use the output length, as
// onnxruntime does (ONNX's 1.12 reference and its two downsample align_corners test cases use in*scale instead, which
// differs whenever in*scale is not whole: conformance lists them as expected failures).
double originalCoordinate(CoordMode mode, double x, double scale, double lengthResized, int64_t outLength,
                          int64_t inLength, double roiStart, double roiEnd) {
  switch (mode) {
    case CoordMode::HALF_PIXEL:
      return (x + 0.5) / scale - 0.5;
    case CoordMode::HALF_PIXEL_SYMMETRIC: {
      const double adjustment = static_cast<double>(outLength) / lengthResized;
      const double center = static_cast<double>(inLength) / 2;
      return center * (1 - adjustment) + (x + 0.5) / scale - 0.5;
    }
    case CoordMode::PYTORCH_HALF_PIXEL:
      return outLength > 1 ? (x + 0.5) / scale - 0.5 : 0.0;
    case CoordMode::ALIGN_CORNERS:
      return outLength == 1 ? 0.0 : x * static_cast<double>(inLength - 1) / static_cast<double>(outLength - 1);
    case CoordMode::ASYMMETRIC:
      return x / scale;
    case CoordMode::TF_HALF_PIXEL_FOR_NN:
      return (x + 0.5) / scale;
    case CoordMode::TF_CROP_AND_RESIZE:
      return lengthResized > 1 ? roiStart * (inLength - 1) + x * (roiEnd - roiStart) * (inLength - 1) / (lengthResized - 1)
                               : 0.5 * (roiStart + roiEnd) * (inLength - 1);
  }
  return x;
}

int64_t nearestIndex(NearestMode mode, double x, double scale) {
  const double fl = std::floor(x);
  switch (mode) {
    case NearestMode::ROUND_PREFER_FLOOR:
      return static_cast<int64_t>(x == fl + 0.5 ? fl : std::round(x));
    case NearestMode::ROUND_PREFER_CEIL:
      return static_cast<int64_t>(x == fl + 0.5 ? fl + 1 : std::round(x));
    case NearestMode::FLOOR:
      return static_cast<int64_t>(fl);
    case NearestMode::CEIL:
      return static_cast<int64_t>(std::ceil(x));
    case NearestMode::LEGACY:
      return static_cast<int64_t>(scale < 1 ? std::ceil(x) : fl);
  }
  return static_cast<int64_t>(fl);
}

AxisTaps computeTaps(const ResizeAttributes& attrs, int64_t inLength, int64_t outLength, double scale,
                     double lengthResized, double roiStart, double roiEnd) {
  AxisTaps taps;
  taps.width = attrs.mode == InterpMode::NEAREST ? 1 : attrs.mode == InterpMode::LINEAR ? 2 : 4;
  taps.index.resize(static_cast<size_t>(outLength * taps.width));
  taps.weight.resize(taps.index.size());
  taps.outside.assign(static_cast<size_t>(outLength), 0);
  taps.identity = inLength == outLength;
  const double a = attrs.cubicA;
  for (int64_t j = 0; j < outLength; ++j) {
    const double x = originalCoordinate(attrs.coord, static_cast<double>(j), scale, lengthResized, outLength,
                                        inLength, roiStart, roiEnd);
    if (attrs.coord == CoordMode::TF_CROP_AND_RESIZE && (x < 0 || x > static_cast<double>(inLength - 1))) {
      taps.outside[j] = 1;
      taps.anyOutside = true;
    }
    int64_t* index = &taps.index[j * taps.width];
    double* weight = &taps.weight[j * taps.width];
    if (attrs.mode == InterpMode::NEAREST) {
      index[0] = nearestIndex(attrs.nearest, x, scale);
      weight[0] = 1.0;
    } else {
      const double x0 = std::floor(x), r = x - x0;
      const int64_t first = static_cast<int64_t>(x0) - (taps.width == 4 ? 1 : 0);
      for (int k = 0; k < taps.width; ++k) index[k] = first + k;
      if (taps.width == 2) {
        weight[0] = 1 - r;
        weight[1] = r;
      } else {
        const double s = 1 - r;
        weight[0] = ((a * (r + 1) - 5 * a) * (r + 1) + 8 * a) * (r + 1) - 4 * a;
        weight[1] = ((a + 2) * r - (a + 3)) * r * r + 1;
        weight[2] = ((a + 2) * s - (a + 3)) * s * s + 1;
        weight[3] = ((a * (s + 1) - 5 * a) * (s + 1) + 8 * a) * (s + 1) - 4 * a;
      }
      if (attrs.excludeOutside) {
        double sum = 0;
        for (int k = 0; k < taps.width; ++k) {
          if (index[k] < 0 || index[k] >= inLength) weight[k] = 0;
          sum += weight[k];
        }
        if (sum != 0) {
          for (int k = 0; k < taps.width; ++k) weight[k] /= sum;
        }
      }
    }
    for (int k = 0; k < taps.width; ++k) {
      index[k] = std::clamp<int64_t>(index[k], 0, std::max<int64_t>(inLength - 1, 0));
      if (index[k] != j && weight[k] != 0) taps.identity = false;
    }
  }
  if (taps.anyOutside) taps.identity = false;
  return taps;
}

// Nearest: a gather in the storage type (works for every element type), extrapolated cells take `fill`.
// Output rows that read the same input row as the previous one (upsampling) are copied from it.
template <class S>
void gatherNearest(const Tensor& input, const std::vector<AxisTaps>& taps, const S& fill, Tensor& output) {
  const size_t rank = taps.size();
  const S* src = elementsOf<S>(input);
  S* dst = mutableElementsOf<S>(output);
  const std::vector<int64_t> inStrides = stridesOf(input.shape());
  const Shape& outShape = output.shape();
  const int64_t rowLength = outShape[rank - 1];
  const int64_t rows = rowLength == 0 ? 0 : output.numel() / rowLength;
  const AxisTaps& last = taps[rank - 1];
  const int64_t* lastIndex = last.index.data();
  std::vector<int64_t> index(rank - 1, 0);
  int64_t previousBase = -1;
  bool previousOutside = false;
  for (int64_t row = 0; row < rows; ++row) {
    int64_t base = 0;
    bool outside = false;
    for (size_t d = 0; d + 1 < rank; ++d) {
      base += taps[d].index[index[d]] * inStrides[d];
      outside = outside || taps[d].outside[index[d]];
    }
    S* out = dst + row * rowLength;
    if (row > 0 && base == previousBase && outside == previousOutside) {
      std::copy_n(out - rowLength, rowLength, out);
    } else if (outside) {
      std::fill_n(out, rowLength, fill);
    } else if (last.anyOutside) {
      const S* in = src + base;
      for (int64_t j = 0; j < rowLength; ++j) out[j] = last.outside[j] ? fill : in[lastIndex[j]];
    } else {
      const S* in = src + base;
      for (int64_t j = 0; j < rowLength; ++j) out[j] = in[lastIndex[j]];
    }
    previousBase = base;
    previousOutside = outside;
    for (size_t d = rank - 1; d-- > 0;) {
      if (++index[d] < outShape[d]) break;
      index[d] = 0;
    }
  }
}

// One 1-D interpolation pass along `axis` of `src` shaped `shape` into `dst` (updates shape[axis]).
template <class C>
void interpolateAxis(const C* src, C* dst, Shape& shape, size_t axis, const AxisTaps& taps, int64_t outLength) {
  int64_t outer = 1, inner = 1;
  for (size_t d = 0; d < axis; ++d) outer *= shape[d];
  for (size_t d = axis + 1; d < shape.size(); ++d) inner *= shape[d];
  const int64_t inLength = shape[axis];
  const int width = taps.width;
  std::vector<C> weight(taps.weight.size());
  for (size_t i = 0; i < weight.size(); ++i) weight[i] = static_cast<C>(taps.weight[i]);
  const int64_t* tapIndex = taps.index.data();
  for (int64_t o = 0; o < outer; ++o) {
    const C* in = src + o * inLength * inner;
    C* out = dst + o * outLength * inner;
    if (inner == 1) {  // last axis: accumulate in a register
      for (int64_t j = 0; j < outLength; ++j) {
        C sum = 0;
        for (int k = 0; k < width; ++k) sum += weight[j * width + k] * in[tapIndex[j * width + k]];
        out[j] = sum;
      }
      continue;
    }
    for (int64_t j = 0; j < outLength; ++j) {
      C* row = out + j * inner;
      const C w0 = weight[j * width];
      const C* from0 = in + tapIndex[j * width] * inner;
      for (int64_t i = 0; i < inner; ++i) row[i] = w0 * from0[i];
      for (int k = 1; k < width; ++k) {
        const C w = weight[j * width + k];
        if (w == C(0)) continue;
        const C* from = in + tapIndex[j * width + k] * inner;
        for (int64_t i = 0; i < inner; ++i) row[i] += w * from[i];
      }
    }
  }
  shape[axis] = outLength;
}

template <class T>
T fromCompute(double value) {
  if constexpr (std::is_integral_v<T>) {
    const double r = std::nearbyint(value);
    if (!(r >= static_cast<double>(std::numeric_limits<T>::lowest()))) return std::numeric_limits<T>::lowest();
    if (r >= static_cast<double>(std::numeric_limits<T>::max())) return std::numeric_limits<T>::max();
    return static_cast<T>(r);
  } else {
    return static_cast<T>(static_cast<ComputeType<T>>(value));
  }
}

// Linear and cubic: one pass per resized axis in float (double for double). float/double read the input and
// write the last pass into the output directly; other types convert in and out.
template <class T>
void interpolate(const Tensor& input, const std::vector<AxisTaps>& taps, double extrapolation, Tensor& output) {
  using C = std::conditional_t<std::is_same_v<T, double>, double, float>;
  constexpr bool kNative = std::is_same_v<T, C>;
  const Shape& outShape = output.shape();
  bool anyOutside = false;
  std::vector<size_t> axes;
  for (size_t d = 0; d < taps.size(); ++d) {
    anyOutside = anyOutside || taps[d].anyOutside;
    if (!taps[d].identity) axes.push_back(d);
  }
  std::unique_ptr<C[]> current;
  const C* cur = nullptr;
  if constexpr (kNative) {
    cur = input.data<T>();
  } else {
    current.reset(new C[static_cast<size_t>(input.numel())]);
    const T* src = input.data<T>();
    for (int64_t i = 0; i < input.numel(); ++i) current[i] = static_cast<C>(static_cast<ComputeType<T>>(src[i]));
    cur = current.get();
  }
  Shape shape = input.shape();
  bool written = false;
  for (size_t k = 0; k < axes.size(); ++k) {
    Shape next = shape;
    next[axes[k]] = outShape[axes[k]];
    if (kNative && !anyOutside && k + 1 == axes.size()) {
      interpolateAxis(cur, output.data<C>(), shape, axes[k], taps[axes[k]], outShape[axes[k]]);
      written = true;
    } else {
      std::unique_ptr<C[]> buffer(new C[static_cast<size_t>(shapeSize(next))]);
      interpolateAxis(cur, buffer.get(), shape, axes[k], taps[axes[k]], outShape[axes[k]]);
      current = std::move(buffer);
      cur = current.get();
    }
  }
  if (written) return;
  const int64_t count = output.numel();
  std::unique_ptr<C[]> extrapolated;
  if (anyOutside) {
    extrapolated.reset(new C[static_cast<size_t>(count)]);
    std::copy_n(cur, count, extrapolated.get());
    std::vector<int64_t> index(taps.size(), 0);
    for (int64_t i = 0; i < count; ++i) {
      bool outside = false;
      for (size_t d = 0; d < taps.size(); ++d) outside = outside || taps[d].outside[index[d]];
      if (outside) extrapolated[i] = static_cast<C>(extrapolation);
      for (size_t d = taps.size(); d-- > 0;) {
        if (++index[d] < outShape[d]) break;
        index[d] = 0;
      }
    }
    cur = extrapolated.get();
  }
  T* dst = output.data<T>();
  for (int64_t i = 0; i < count; ++i) dst[i] = fromCompute<T>(cur[i]);
}

Result<ResizeAttributes> parseAttributes(const ir::Node& node, bool legacy) {
  const std::string label = node.label();
  ResizeAttributes attrs;
  const std::string mode = node.attrString("mode", "nearest");
  if (mode == "nearest") {
    attrs.mode = InterpMode::NEAREST;
  } else if (mode == "linear" || mode == "bilinear") {
    attrs.mode = InterpMode::LINEAR;
  } else if (mode == "cubic" && !legacy) {
    attrs.mode = InterpMode::CUBIC;
  } else {
    return invalidArgument(label + ": unsupported mode '" + mode + "'");
  }
  if (legacy) {
    attrs.coord = CoordMode::ASYMMETRIC;
    attrs.nearest = NearestMode::LEGACY;
    return attrs;
  }
  const std::string coord = node.attrString("coordinate_transformation_mode", "half_pixel");
  static const std::pair<const char*, CoordMode> kCoordModes[] = {
      {"half_pixel", CoordMode::HALF_PIXEL}, {"half_pixel_symmetric", CoordMode::HALF_PIXEL_SYMMETRIC},
      {"pytorch_half_pixel", CoordMode::PYTORCH_HALF_PIXEL}, {"align_corners", CoordMode::ALIGN_CORNERS},
      {"asymmetric", CoordMode::ASYMMETRIC}, {"tf_half_pixel_for_nn", CoordMode::TF_HALF_PIXEL_FOR_NN},
      {"tf_crop_and_resize", CoordMode::TF_CROP_AND_RESIZE}};
  bool found = false;
  for (const auto& [name, value] : kCoordModes) {
    if (coord == name) attrs.coord = value, found = true;
  }
  if (!found) return invalidArgument(label + ": unknown coordinate_transformation_mode '" + coord + "'");
  const std::string nearest = node.attrString("nearest_mode", "round_prefer_floor");
  static const std::pair<const char*, NearestMode> kNearestModes[] = {
      {"round_prefer_floor", NearestMode::ROUND_PREFER_FLOOR}, {"round_prefer_ceil", NearestMode::ROUND_PREFER_CEIL},
      {"floor", NearestMode::FLOOR}, {"ceil", NearestMode::CEIL}};
  found = false;
  for (const auto& [name, value] : kNearestModes) {
    if (nearest == name) attrs.nearest = value, found = true;
  }
  if (!found) return invalidArgument(label + ": unknown nearest_mode '" + nearest + "'");
  attrs.cubicA = node.attrFloat("cubic_coeff_a", -0.75f);
  attrs.excludeOutside = node.attrInt("exclude_outside", 0) != 0;
  attrs.extrapolation = node.attrFloat("extrapolation_value", 0.0f);
  if (node.attrInt("antialias", 0) != 0) {
    return notImplemented(label + ": antialias is not supported");
  }
  return attrs;
}

// The coordinate mode of the onnxruntime-exact bilinear path (resize_bilinear.h), or none where it has none.
std::optional<BilinearCoordinates> bilinearCoordinates(CoordMode mode) {
  switch (mode) {
    case CoordMode::HALF_PIXEL: return BilinearCoordinates::kHalfPixel;
    case CoordMode::PYTORCH_HALF_PIXEL: return BilinearCoordinates::kPytorchHalfPixel;
    case CoordMode::ALIGN_CORNERS: return BilinearCoordinates::kAlignCorners;
    case CoordMode::ASYMMETRIC: return BilinearCoordinates::kAsymmetric;
    default: return std::nullopt;
  }
}

// Upsample (7-9) and Resize (10+). Inputs by version: Upsample-7 X (scales attribute); Upsample-9 and
// Resize-10 X, scales; Resize-11+ X, roi, scales, sizes.
class ResizeKernel final : public Kernel {
 public:
  ResizeKernel(const KernelInfo& info, bool upsample)
      : label_(info.node.label()), opset_(info.opset), upsample_(upsample), pool_(info.threadPool) {
    attrScales_ = info.node.attrFloats("scales");
    axes_ = info.node.attrInts("axes");
    keepAspect_ = info.node.attrString("keep_aspect_ratio_policy", "stretch");
  }
  Status init(const KernelInfo& info) {
    KILN_ASSIGN_OR_RETURN(attrs_, parseAttributes(info.node, upsample_ || opset_ < 11));
    if (keepAspect_ != "stretch" && keepAspect_ != "not_larger" && keepAspect_ != "not_smaller") {
      return invalidArgument(label_ + ": unknown keep_aspect_ratio_policy '" + keepAspect_ + "'");
    }
    return Status::ok();
  }

  Status compute(KernelContext& ctx) override {
    if (!ctx.hasInput(0)) return invalidArgument(label_ + ": missing input X");
    const Tensor& x = *ctx.input(0);
    const int64_t rank = static_cast<int64_t>(x.rank());
    if (rank == 0) return invalidArgument(label_ + ": input must have rank >= 1");
    std::vector<int64_t> axes;
    for (int64_t a : axes_) {
      KILN_ASSIGN_OR_RETURN(int64_t axis, normalizeAxis(a, rank));
      axes.push_back(axis);
    }
    if (axes.empty()) {
      for (int64_t d = 0; d < rank; ++d) axes.push_back(d);
    }
    const size_t n = axes.size();

    std::vector<double> scalesIn, roiIn;
    std::vector<int64_t> sizesIn;
    const bool modern = !upsample_ && opset_ >= 11;
    const size_t scalesInput = modern ? 2 : 1;
    if (upsample_ && opset_ < 9) {
      scalesIn.assign(attrScales_.begin(), attrScales_.end());
    } else if (ctx.hasInput(scalesInput) && ctx.input(scalesInput)->numel() > 0) {
      KILN_ASSIGN_OR_RETURN(scalesIn, readDoubleValues(*ctx.input(scalesInput)));
    }
    if (modern && ctx.hasInput(3) && ctx.input(3)->numel() > 0) {
      KILN_ASSIGN_OR_RETURN(sizesIn, readIndexInput(label_, *ctx.input(3), "sizes"));
    }
    if (modern && ctx.hasInput(1) && ctx.input(1)->numel() > 0) {
      KILN_ASSIGN_OR_RETURN(roiIn, readDoubleValues(*ctx.input(1)));
    }
    if (scalesIn.empty() == sizesIn.empty()) {
      return invalidArgument(label_ + ": exactly one of scales and sizes must be given");
    }
    if ((!scalesIn.empty() && scalesIn.size() != n) || (!sizesIn.empty() && sizesIn.size() != n)) {
      return invalidArgument(label_ + ": scales/sizes must have " + std::to_string(n) + " elements");
    }
    if (!roiIn.empty() && roiIn.size() != 2 * n) {
      return invalidArgument(label_ + ": roi must have " + std::to_string(2 * n) + " elements");
    }

    // Per-axis scale, output length, "length resized" (see originalCoordinate) and roi.
    std::vector<double> scale(rank, 1.0), lengthResized(rank), roiStart(rank, 0.0), roiEnd(rank, 1.0);
    Shape outShape = x.shape();
    for (int64_t d = 0; d < rank; ++d) lengthResized[d] = static_cast<double>(x.dim(d));
    if (!roiIn.empty()) {
      for (size_t k = 0; k < n; ++k) roiStart[axes[k]] = roiIn[k], roiEnd[axes[k]] = roiIn[k + n];
    }
    const bool crop = attrs_.coord == CoordMode::TF_CROP_AND_RESIZE;
    if (!sizesIn.empty()) {
      double keepScale = keepAspect_ == "not_larger" ? std::numeric_limits<double>::max() : 0.0;
      for (size_t k = 0; k < n; ++k) {
        if (sizesIn[k] < 0) return invalidArgument(label_ + ": sizes must not be negative");
        const double s = x.dim(axes[k]) == 0 ? 1.0 : static_cast<double>(sizesIn[k]) / x.dim(axes[k]);
        keepScale = keepAspect_ == "not_larger" ? std::min(keepScale, s) : std::max(keepScale, s);
      }
      for (size_t k = 0; k < n; ++k) {
        const int64_t axis = axes[k], in = x.dim(axis);
        if (keepAspect_ == "stretch") {
          outShape[axis] = sizesIn[k];
          scale[axis] = in == 0 ? 1.0 : static_cast<double>(sizesIn[k]) / in;
        } else {
          outShape[axis] = static_cast<int64_t>(std::llround(keepScale * in));
          scale[axis] = keepScale;
        }
        lengthResized[axis] = static_cast<double>(outShape[axis]);
      }
    } else {
      for (size_t k = 0; k < n; ++k) {
        const int64_t axis = axes[k], in = x.dim(axis);
        if (!(scalesIn[k] > 0) || !std::isfinite(scalesIn[k])) {
          return invalidArgument(label_ + ": scales must be positive");
        }
        if (upsample_ && scalesIn[k] < 1) return invalidArgument(label_ + ": Upsample scales must be >= 1");
        scale[axis] = scalesIn[k];
        const double extent = crop ? in * (roiEnd[axis] - roiStart[axis]) : static_cast<double>(in);
        outShape[axis] = static_cast<int64_t>(std::floor(extent * scalesIn[k]));
        lengthResized[axis] = scalesIn[k] * in;
      }
    }

    std::vector<AxisTaps> taps(rank);
    for (int64_t d = 0; d < rank; ++d) {
      if (outShape[d] > 0 && x.dim(d) == 0) return invalidArgument(label_ + ": cannot resize an empty axis");
      taps[d] = computeTaps(attrs_, x.dim(d), outShape[d], scale[d], lengthResized[d], roiStart[d], roiEnd[d]);
    }
    Tensor& out = ctx.allocateUninitializedOutput(0, x.dtype(), outShape);  // every element is written below
    if (out.numel() == 0) return Status::ok();
    if (resizeLikeOnnxruntime(x, outShape, scale, !sizesIn.empty(), out)) return Status::ok();
    if (attrs_.mode == InterpMode::NEAREST) {
      Tensor fill(x.dtype(), {1});
      if (attrs_.extrapolation != 0 && x.dtype() != DataType::STRING) {
        Status status = dispatchType<KILN_NUMERIC_TYPES, bool>(x.dtype(), [&]<class T>() {
          fill.data<T>()[0] = fromCompute<T>(attrs_.extrapolation);
          return Status::ok();
        });
        KILN_RETURN_IF_ERROR(status);
      }
      return dispatchStorage(x.dtype(), [&]<class S>() {
        gatherNearest<S>(x, taps, elementsOf<S>(fill)[0], out);
        return Status::ok();
      });
    }
    Status status = dispatchType<KILN_NUMERIC_TYPES>(x.dtype(), [&]<class T>() {
      interpolate<T>(x, taps, attrs_.extrapolation, out);
      return Status::ok();
    });
    if (!status.isOk()) {
      return notImplemented(label_ + ": linear/cubic resize of " + dataTypeName(x.dtype()) + " is not supported");
    }
    return Status::ok();
  }

 private:
  // Float bilinear resizes of the last two axes of a 2-D or 4-D tensor run in onnxruntime's arithmetic
  // (resize_bilinear.h) where the coordinate mode has it. Returns false where it does not apply.
  bool resizeLikeOnnxruntime(const Tensor& x, const Shape& outShape, const std::vector<double>& scale, bool bySizes,
                             Tensor& out) const {
    const auto mode = bilinearCoordinates(attrs_.coord);
    const size_t rank = x.rank();
    if (attrs_.mode != InterpMode::LINEAR || !mode || x.dtype() != DataType::FLOAT ||
        (rank != 2 && rank != 4) || keepAspect_ != "stretch") {
      return false;
    }
    for (size_t d = 0; d + 2 < rank; ++d) {
      if (outShape[d] != x.dim(d) || scale[d] != 1.0) return false;
    }
    BilinearAxis axes[2];
    for (size_t k = 0; k < 2; ++k) {
      const size_t d = rank - 2 + k;
      if (x.dim(d) == 0) return false;
      axes[k].inLength = x.dim(d);
      axes[k].outLength = outShape[d];
      axes[k].scale = bySizes ? static_cast<float>(outShape[d]) / static_cast<float>(x.dim(d))
                              : static_cast<float>(scale[d]);
    }
    resizeBilinearFloat(x, *mode, axes[0], axes[1], out, pool_);
    return true;
  }

  std::string label_;
  int64_t opset_;
  bool upsample_;
  ThreadPool* pool_;
  std::vector<float> attrScales_;
  std::vector<int64_t> axes_;
  std::string keepAspect_;
  ResizeAttributes attrs_;
};

template <bool kUpsample>
Result<std::unique_ptr<Kernel>> createResize(const KernelInfo& info) {
  auto kernel = std::make_unique<ResizeKernel>(info, kUpsample);
  KILN_RETURN_IF_ERROR(kernel->init(info));
  return std::unique_ptr<Kernel>(std::move(kernel));
}

}  // namespace

void registerResizeKernels(KernelRegistry& registry) {
  registry.add("Resize", 10, kAnyOpset, createResize<false>);
  registry.add("Upsample", 7, kAnyOpset, createResize<true>);
}

}  // namespace kiln::cpu
