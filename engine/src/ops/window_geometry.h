// Sliding-window geometry shared by the Conv, ConvTranspose and pooling kernels of both EPs: attribute parsing
// (kernel_shape, strides, pads, dilations, auto_pad, ceil_mode) and output-size/padding resolution.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "ir/graph.h"
#include "kiln/status.h"
#include "kiln/tensor.h"

namespace kiln::ops {

// Window ops support this many spatial dims (ONNX models use 1-3), so per-dim scratch fits in fixed arrays.
constexpr size_t kMaxSpatialRank = 8;
using SpatialIndex = std::array<int64_t, kMaxSpatialRank>;

// The window attributes as written on the node (empty vectors where absent).
struct WindowAttributes {
  std::string autoPad = "NOTSET";
  std::vector<int64_t> kernelShape, strides, pads, dilations;
  bool ceilMode = false;

  static WindowAttributes read(const ir::Node& node);
};

// A window op's resolved geometry per spatial dimension. `in` is the dense image side and `out` the grid of
// window positions: for Conv/pooling, input and output; for ConvTranspose, its output and its input.
// Window position o covers image positions o * strides - padBegin + k * dilations for k in [0, kernel).
struct WindowGeometry {
  std::vector<int64_t> in, out, kernel, strides, dilations, padBegin, padEnd;

  size_t rank() const { return in.size(); }
  // Row-major element strides of the image dims.
  SpatialIndex inStrides() const;
  int64_t inSize() const;
  int64_t outSize() const;
  int64_t kernelSize() const;
  // True when every window is a single image element at the same position (1x1 kernel, stride 1, no pads).
  bool isPointwise() const;
};

// Resolves the geometry of a forward window op (Conv, pools) from the attributes, the input's spatial dims
// and the kernel's spatial dims; INVALID_ARGUMENT (naming the node) on inconsistent attributes or an empty
// output.
Result<WindowGeometry> resolveForwardWindow(const WindowAttributes& attrs,
                                            const std::vector<int64_t>& inSpatial,
                                            const std::vector<int64_t>& kernel);

// Resolves ConvTranspose's geometry per the ONNX rules (in WindowGeometry's terms `out` is the input's spatial
// dims and `in` the output's: the op is the adjoint of a forward window): output_shape wins (a larger one is
// zero/bias-extended at the end), then auto_pad SAME_* (output = input * stride), else the explicit pads. Odd
// total padding puts the extra element at the end for SAME_UPPER, at the start otherwise. Shared by the CPU and
// Vulkan kernels so both EPs size outputs identically.
Result<WindowGeometry> resolveTransposedWindow(const WindowAttributes& attrs, std::vector<int64_t> outputPadding,
                                               std::vector<int64_t> outputShape,
                                               const std::vector<int64_t>& inSpatial,
                                               const std::vector<int64_t>& kernel);

// Checks that a per-dimension attribute has `rank` entries (or is empty) and fills the default when empty.
Status expandWindowAttribute(const char* name, std::vector<int64_t>& values, size_t rank, int64_t fallback,
                             int64_t minValue);

// floor(a / b) and ceil(a / b) for b > 0 and any sign of a.
inline int64_t floorDiv(int64_t a, int64_t b) { return a >= 0 ? a / b : -((-a + b - 1) / b); }
inline int64_t ceilDiv(int64_t a, int64_t b) { return a >= 0 ? (a + b - 1) / b : -((-a) / b); }

// The window positions [lo, hi) along the last dimension whose element o * stride + shift lies in [0,
// extent).
inline void validRange(int64_t shift, int64_t stride, int64_t extent, int64_t count, int64_t& lo,
                       int64_t& hi) {
  lo = std::clamp<int64_t>(ceilDiv(-shift, stride), 0, count);
  hi = std::min<int64_t>(count, floorDiv(extent - 1 - shift, stride) + 1);
  if (hi < lo) hi = lo;
}

}  // namespace kiln::ops
