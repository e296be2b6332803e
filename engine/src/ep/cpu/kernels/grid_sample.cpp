// GridSample (opset 16; 20 renames the modes linear/cubic): samples a 4-D input X [N, C, H, W] at the normalized (x, y) locations of grid
// [N, H_out, W_out, 2] with bilinear, nearest or bicubic interpolation; Y is [N, C, H_out, W_out].
//
// Follows the ONNX reference (itself matching PyTorch), computed in double:
// - denormalize: align_corners maps [-1, 1] to [0, size - 1], otherwise to [-0.5, size - 0.5];
// - nearest rounds half to even (std::nearbyint, like PyTorch's 2-D sampler);
// - a coordinate outside those bounds is first clamped to [0, size - 1] (border) or reflected into the bounds
//   (reflection), each dimension on its own; then every tap outside the image reads 0 (zeros), the clamped
//   pixel (border) or the reflected pixel (reflection);
// - bicubic uses Keys' cubic convolution with alpha = -0.75 over the 4x4 neighbourhood.
// The taps and weights of a grid point are computed once and applied to every channel. A NaN coordinate gives
// NaN; an infinite one reads 0 (zeros), the edge (border) or NaN (reflection, which has no limit).
#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "ep/cpu/kernel_registry.h"
#include "ep/cpu/kernel_utils.h"
#include "ep/cpu/kernels/data_movement.h"

namespace kiln::cpu {
namespace {

enum class SampleMode { Bilinear, Nearest, Bicubic };
enum class Padding { Zeros, Border, Reflection };

// Reflects x by the nearer border until it lies in [lo, hi].
double reflect(double x, double lo, double hi) {
  const double range = hi - lo;
  if (range <= 0) return lo;
  if (x >= lo && x <= hi) return x;
  const double dx = x < lo ? lo - x : x - hi;
  const double flips = std::floor(dx / range);
  const double r = std::min(dx - flips * range, range);
  const bool even = std::fmod(flips, 2.0) == 0.0;
  return (x < lo) == even ? lo + r : hi - r;
}

// Keys cubic convolution weights for taps at offsets -1, 0, 1, 2 from floor(x), t = x - floor(x).
std::array<double, 4> cubicWeights(double t) {
  constexpr double a = -0.75;
  const double x = std::fabs(t);
  return {((a * (x + 1) - 5 * a) * (x + 1) + 8 * a) * (x + 1) - 4 * a, ((a + 2) * x - (a + 3)) * x * x + 1,
          ((a + 2) * (1 - x) - (a + 3)) * (1 - x) * (1 - x) + 1,
          ((a * (2 - x) - 5 * a) * (2 - x) + 8 * a) * (2 - x) - 4 * a};
}

// One image axis: its size and the bounds the sampling coordinates are checked against.
struct Axis {
  int64_t size = 0;
  double lo = 0, hi = 0;

  // Pixel index of tap i after padding, or -1 for a zero (outside, zeros padding).
  int64_t tap(int64_t i, Padding padding) const {
    if (i >= 0 && i < size) return i;
    if (padding == Padding::Zeros) return -1;
    if (padding == Padding::Border) return i < 0 ? 0 : size - 1;
    const int64_t r = static_cast<int64_t>(reflect(static_cast<double>(i), lo, hi));
    return std::clamp<int64_t>(r, 0, size - 1);
  }
};

struct Tap {
  int64_t index = -1;  // into one H*W image; -1 reads 0
  double weight = 0;
};

class GridSampleKernel final : public Kernel {
 public:
  explicit GridSampleKernel(const KernelInfo& info)
      : label_(info.node.opType), alignCorners_(info.node.attrInt("align_corners", 0) != 0) {}

  Status init(const KernelInfo& info) {
    // GridSample-20 renamed bilinear/bicubic to linear/cubic (its N-D form is not supported: rank 4 only).
    const bool renamed = info.opset >= 20;
    const std::string linear = renamed ? "linear" : "bilinear", cubic = renamed ? "cubic" : "bicubic";
    const std::string mode = info.node.attrString("mode", linear);
    if (mode == linear) {
      mode_ = SampleMode::Bilinear;
    } else if (mode == "nearest") {
      mode_ = SampleMode::Nearest;
    } else if (mode == cubic) {
      mode_ = SampleMode::Bicubic;
    } else {
      return nodeError(label_, "unknown mode '" + mode + "' (use " + linear + ", nearest or " + cubic + ")");
    }
    const std::string padding = info.node.attrString("padding_mode", "zeros");
    if (padding == "zeros") {
      padding_ = Padding::Zeros;
    } else if (padding == "border") {
      padding_ = Padding::Border;
    } else if (padding == "reflection") {
      padding_ = Padding::Reflection;
    } else {
      return nodeError(label_, "unknown padding_mode '" + padding + "' (use zeros, border or reflection)");
    }
    return Status::ok();
  }

  Status compute(KernelContext& ctx) override {
    const Tensor* x = ctx.input(0);
    const Tensor* grid = ctx.input(1);
    if (!x || !grid) return nodeError(label_, "needs inputs 'X' and 'grid'");
    if (x->rank() != 4 && x->rank() >= 3) {
      return notImplemented(label_ + ": only 4-D X is supported (GridSample-20's other ranks are not), got " +
                            shapeToString(x->shape()));
    }
    if (x->rank() != 4) return nodeError(label_, "X must be 4-D [N, C, H, W], got " + shapeToString(x->shape()));
    if (grid->rank() != 4 || grid->dim(0) != x->dim(0) || grid->dim(3) != 2) {
      return nodeError(label_, "grid must be [N, H_out, W_out, 2] with X's N, got " +
                                   shapeToString(grid->shape()) + " for X " + shapeToString(x->shape()));
    }
    if (grid->dtype() != x->dtype()) return nodeError(label_, "X and grid must have the same element type");
    const int64_t batch = x->dim(0), channels = x->dim(1), height = x->dim(2), width = x->dim(3);
    const int64_t outH = grid->dim(1), outW = grid->dim(2);
    Tensor& out = ctx.allocateOutput(0, x->dtype(), {batch, channels, outH, outW});
    if (out.numel() == 0) return Status::ok();
    if (height == 0 || width == 0) return nodeError(label_, "X has an empty spatial dimension");
    const Axis axisX = makeAxis(width), axisY = makeAxis(height);
    Status status = dispatchType<float, double, Float16>(x->dtype(), [&]<class T>() {
      const T* src = x->data<T>();
      const T* g = grid->data<T>();
      T* dst = out.data<T>();
      const int64_t image = height * width, points = outH * outW;
      std::vector<Tap> taps;
      for (int64_t n = 0; n < batch; ++n) {
        for (int64_t p = 0; p < points; ++p) {
          const T* gp = g + (n * points + p) * 2;
          const bool valid = gatherTaps(toDouble(gp[0]), toDouble(gp[1]), axisX, axisY, taps);
          for (int64_t c = 0; c < channels; ++c) {
            const T* plane = src + (n * channels + c) * image;
            double value = valid ? 0.0 : std::numeric_limits<double>::quiet_NaN();
            for (const Tap& tap : taps) {
              if (tap.index >= 0) value += tap.weight * toDouble(plane[tap.index]);
            }
            dst[(n * channels + c) * points + p] = T(static_cast<ComputeType<T>>(value));
          }
        }
      }
      return Status::ok();
    });
    return status.isOk() ? status : nodeError(label_, status.message());
  }

 private:
  Axis makeAxis(int64_t size) const {
    return alignCorners_ ? Axis{size, 0.0, static_cast<double>(size - 1)}
                         : Axis{size, -0.5, static_cast<double>(size) - 0.5};
  }

  // Maps a normalized coordinate to pixel space, rounds it for nearest and applies the out-of-bounds rule.
  // Returns NaN where the result is undefined.
  double sourceCoordinate(double normalized, const Axis& axis) const {
    const double size = static_cast<double>(axis.size);
    double v = alignCorners_ ? (normalized + 1) / 2.0 * (size - 1) : ((normalized + 1) * size - 1) / 2.0;
    if (mode_ == SampleMode::Nearest) v = std::nearbyint(v);
    if (std::isnan(v) || (v >= axis.lo && v <= axis.hi)) return v;
    switch (padding_) {
      case Padding::Border:
        return std::clamp(v, 0.0, size - 1);
      case Padding::Reflection:
        return std::isinf(v) ? std::numeric_limits<double>::quiet_NaN() : reflect(v, axis.lo, axis.hi);
      case Padding::Zeros:
        break;
    }
    // Every tap of a coordinate this far out reads zero; clamping keeps the integer conversions in range.
    return std::clamp(v, -8.0, size + 8);
  }

  // Fills `taps` for the grid point (gx, gy); false when the point is NaN (no taps).
  bool gatherTaps(double gx, double gy, const Axis& axisX, const Axis& axisY, std::vector<Tap>& taps) const {
    taps.clear();
    const double x = sourceCoordinate(gx, axisX), y = sourceCoordinate(gy, axisY);
    if (std::isnan(x) || std::isnan(y)) return false;
    auto add = [&](int64_t row, int64_t col, double weight) {
      const int64_t r = axisY.tap(row, padding_), c = axisX.tap(col, padding_);
      taps.push_back({r < 0 || c < 0 ? -1 : r * axisX.size + c, weight});
    };
    const int64_t x0 = static_cast<int64_t>(std::floor(x)), y0 = static_cast<int64_t>(std::floor(y));
    if (mode_ == SampleMode::Nearest) {
      add(y0, x0, 1.0);
    } else if (mode_ == SampleMode::Bilinear) {
      const double dx = x - static_cast<double>(x0), dy = y - static_cast<double>(y0);
      add(y0, x0, (1 - dy) * (1 - dx));
      add(y0, x0 + 1, (1 - dy) * dx);
      add(y0 + 1, x0, dy * (1 - dx));
      add(y0 + 1, x0 + 1, dy * dx);
    } else {
      const std::array<double, 4> wx = cubicWeights(x - static_cast<double>(x0));
      const std::array<double, 4> wy = cubicWeights(y - static_cast<double>(y0));
      for (int64_t i = 0; i < 4; ++i) {
        for (int64_t j = 0; j < 4; ++j)
          add(y0 - 1 + i, x0 - 1 + j, wy[static_cast<size_t>(i)] * wx[static_cast<size_t>(j)]);
      }
    }
    return true;
  }

  std::string label_;
  bool alignCorners_;
  SampleMode mode_ = SampleMode::Bilinear;
  Padding padding_ = Padding::Zeros;
};

Result<std::unique_ptr<Kernel>> createGridSample(const KernelInfo& info) {
  auto kernel = std::make_unique<GridSampleKernel>(info);
  KILN_RETURN_IF_ERROR(kernel->init(info));
  return std::unique_ptr<Kernel>(std::move(kernel));
}

}  // namespace

void registerGridSampleKernels(KernelRegistry& registry) {
  registry.add("GridSample", 16, kAnyOpset, createGridSample);
}

}  // namespace kiln::cpu
