#include "ops/window_geometry.h"

#include <algorithm>

namespace kiln::ops {
namespace {

Status invalidArgument(const std::string& message) { return {StatusCode::INVALID_ARGUMENT, message}; }

}  // namespace

WindowAttributes WindowAttributes::read(const ir::Node& node) {
  WindowAttributes a;
  a.autoPad = node.attrString("auto_pad", "NOTSET");
  if (a.autoPad.empty()) a.autoPad = "NOTSET";
  a.kernelShape = node.attrInts("kernel_shape");
  a.strides = node.attrInts("strides");
  a.pads = node.attrInts("pads");
  a.dilations = node.attrInts("dilations");
  a.ceilMode = node.attrInt("ceil_mode", 0) != 0;
  return a;
}

int64_t WindowGeometry::inSize() const { return shapeSize(in); }
int64_t WindowGeometry::outSize() const { return shapeSize(out); }
int64_t WindowGeometry::kernelSize() const { return shapeSize(kernel); }

SpatialIndex WindowGeometry::inStrides() const {
  SpatialIndex strides{};
  for (size_t d = rank(), step = 1; d-- > 0;) {
    strides[d] = static_cast<int64_t>(step);
    step *= static_cast<size_t>(in[d]);
  }
  return strides;
}

bool WindowGeometry::isPointwise() const {
  for (size_t d = 0; d < rank(); ++d) {
    if (kernel[d] != 1 || strides[d] != 1 || padBegin[d] != 0 || in[d] != out[d]) return false;
  }
  return true;
}

Status expandWindowAttribute(const char* name, std::vector<int64_t>& values, size_t rank, int64_t fallback,
                             int64_t minValue) {
  if (values.empty()) values.assign(rank, fallback);
  if (values.size() != rank) {
    return invalidArgument(std::string("attribute '") + name + "' has " + std::to_string(values.size()) +
                           " values, expected " + std::to_string(rank));
  }
  for (int64_t v : values) {
    if (v < minValue) {
      return invalidArgument(std::string("attribute '") + name + "' has invalid value " + std::to_string(v));
    }
  }
  return Status::ok();
}

Result<WindowGeometry> resolveForwardWindow(const WindowAttributes& attrs,
                                            const std::vector<int64_t>& inSpatial,
                                            const std::vector<int64_t>& kernel) {
  const size_t rank = inSpatial.size();
  if (rank == 0 || rank > kMaxSpatialRank) {
    return invalidArgument("expected 1 to " + std::to_string(kMaxSpatialRank) + " spatial dimensions, got " +
                           std::to_string(rank));
  }
  WindowGeometry g;
  g.in = inSpatial;
  g.kernel = kernel;
  g.strides = attrs.strides;
  g.dilations = attrs.dilations;
  KILN_RETURN_IF_ERROR(expandWindowAttribute("kernel_shape", g.kernel, rank, 1, 1));
  KILN_RETURN_IF_ERROR(expandWindowAttribute("strides", g.strides, rank, 1, 1));
  KILN_RETURN_IF_ERROR(expandWindowAttribute("dilations", g.dilations, rank, 1, 1));
  std::vector<int64_t> pads = attrs.pads;
  KILN_RETURN_IF_ERROR(expandWindowAttribute("pads", pads, rank * 2, 0, 0));
  g.padBegin.assign(pads.begin(), pads.begin() + static_cast<std::ptrdiff_t>(rank));
  g.padEnd.assign(pads.begin() + static_cast<std::ptrdiff_t>(rank), pads.end());
  g.out.resize(rank);

  const std::string& mode = attrs.autoPad;
  if (mode != "NOTSET" && mode != "SAME_UPPER" && mode != "SAME_LOWER" && mode != "VALID") {
    return invalidArgument("unknown auto_pad '" + mode + "'");
  }
  for (size_t d = 0; d < rank; ++d) {
    const int64_t in = g.in[d], s = g.strides[d];
    const int64_t extent = (g.kernel[d] - 1) * g.dilations[d] + 1;
    if (mode == "SAME_UPPER" || mode == "SAME_LOWER") {
      g.out[d] = ceilDiv(in, s);
      const int64_t total = std::max<int64_t>(0, (g.out[d] - 1) * s + extent - in);
      g.padBegin[d] = mode == "SAME_UPPER" ? total / 2 : total - total / 2;
      g.padEnd[d] = total - g.padBegin[d];
      continue;
    }
    if (mode == "VALID") g.padBegin[d] = g.padEnd[d] = 0;
    const int64_t padded = in + g.padBegin[d] + g.padEnd[d];
    if (padded < extent) {
      return invalidArgument("window extent " + std::to_string(extent) + " exceeds padded input " +
                             std::to_string(padded) + " in spatial dimension " + std::to_string(d));
    }
    g.out[d] = (attrs.ceilMode ? ceilDiv(padded - extent, s) : (padded - extent) / s) + 1;
    // ceil_mode: the last window must start inside the input or its leading padding (PyTorch's rule).
    if (attrs.ceilMode && (g.out[d] - 1) * s >= in + g.padBegin[d]) --g.out[d];
  }
  return g;
}

Result<WindowGeometry> resolveTransposedWindow(const WindowAttributes& attrs, std::vector<int64_t> outputPadding,
                                               std::vector<int64_t> outputShape,
                                               const std::vector<int64_t>& inSpatial,
                                               const std::vector<int64_t>& kernel) {
  const size_t R = inSpatial.size();
  WindowGeometry g;
  g.out = inSpatial;
  g.kernel = kernel;
  if (!attrs.kernelShape.empty() && attrs.kernelShape != g.kernel) {
    return invalidArgument("kernel_shape does not match W's spatial dims " + shapeToString(kernel));
  }
  g.strides = attrs.strides;
  g.dilations = attrs.dilations;
  std::vector<int64_t> pads = attrs.pads;
  KILN_RETURN_IF_ERROR(expandWindowAttribute("strides", g.strides, R, 1, 1));
  KILN_RETURN_IF_ERROR(expandWindowAttribute("dilations", g.dilations, R, 1, 1));
  KILN_RETURN_IF_ERROR(expandWindowAttribute("pads", pads, 2 * R, 0, 0));
  KILN_RETURN_IF_ERROR(expandWindowAttribute("output_padding", outputPadding, R, 0, 0));
  if (outputShape.size() == R + 2) outputShape.erase(outputShape.begin(), outputShape.begin() + 2);
  if (!outputShape.empty() && outputShape.size() != R) {
    return invalidArgument("output_shape must have one value per axis");
  }
  const std::string& mode = attrs.autoPad;
  const bool same = mode == "SAME_UPPER" || mode == "SAME_LOWER";
  if (!same && mode != "NOTSET" && mode != "VALID")
    return invalidArgument("unknown auto_pad '" + mode + "'");
  g.in.resize(R);
  g.padBegin.resize(R);
  g.padEnd.resize(R);
  for (size_t d = 0; d < R; ++d) {
    const int64_t full =
        g.strides[d] * (g.out[d] - 1) + outputPadding[d] + (g.kernel[d] - 1) * g.dilations[d] + 1;
    if (!outputShape.empty() || same) {
      g.in[d] = !outputShape.empty() ? outputShape[d] : g.out[d] * g.strides[d];
      const int64_t total = std::max<int64_t>(0, full - g.in[d]);
      g.padBegin[d] = mode == "SAME_UPPER" ? total / 2 : total - total / 2;
      // SAME never pads negatively: a kernel shorter than the stride gives the unpadded size (as ORT does).
      if (outputShape.empty()) g.in[d] = full - total;
    } else if (mode == "VALID") {
      g.in[d] = full;
      g.padBegin[d] = 0;
    } else {
      g.padBegin[d] = pads[d];
      g.in[d] = full - pads[d] - pads[R + d];
    }
    g.padEnd[d] = std::max<int64_t>(0, full - g.padBegin[d] - g.in[d]);
    if (g.in[d] < 0) {
      return invalidArgument("pads leave a negative output size in spatial dimension " + std::to_string(d));
    }
  }
  return g;
}

}  // namespace kiln::ops
