// Bilinear Resize in onnxruntime's float arithmetic (resize_bilinear.h). Built with -ffp-contract=off
// (engine/CMakeLists.txt): a fused multiply-add would round differently from onnxruntime.
#include "ep/cpu/kernels/resize_bilinear.h"

#include <algorithm>
#include <cmath>
#include <vector>

namespace kiln::cpu {
namespace {

// For each output index along one axis: the two input taps and the coordinate's distance to each; the
// distance to one tap is the weight of the other.
struct AxisWeights {
  std::vector<int64_t> first, second;
  std::vector<float> toFirst, toSecond;
};

// The input coordinate of output index `j`, in float as onnxruntime's coordinate transforms compute it.
float originalCoordinate(BilinearCoordinates mode, float j, const BilinearAxis& axis) {
  const float outLength = static_cast<float>(axis.outLength), inLength = static_cast<float>(axis.inLength);
  switch (mode) {
    case BilinearCoordinates::kHalfPixel:
      return ((j + 0.5f) / axis.scale) - 0.5f;
    case BilinearCoordinates::kPytorchHalfPixel:
      return outLength > 1 ? (j + 0.5f) / axis.scale - 0.5f : 0.0f;
    case BilinearCoordinates::kAlignCorners:
      return outLength == 1 ? 0.0f : j * (inLength - 1) / (outLength - 1);
    case BilinearCoordinates::kAsymmetric:
      return j / axis.scale;
  }
  return j;
}

AxisWeights axisWeights(BilinearCoordinates mode, const BilinearAxis& axis) {
  AxisWeights w;
  const size_t n = static_cast<size_t>(axis.outLength);
  w.first.resize(n), w.second.resize(n), w.toFirst.resize(n), w.toSecond.resize(n);
  const int64_t last = axis.inLength - 1;
  for (size_t j = 0; j < n; ++j) {
    const float position = static_cast<float>(j);
    float x = axis.scale == 1.0f ? position : originalCoordinate(mode, position, axis);
    x = std::max(0.0f, std::min(x, static_cast<float>(last)));
    const int64_t first = std::min(static_cast<int64_t>(x), last);
    const int64_t second = std::min(first + 1, last);
    w.first[j] = first;
    w.second[j] = second;
    // On the last input index both taps coincide; onnxruntime then weighs each by one half.
    w.toFirst[j] = first == second ? 0.5f : std::fabs(x - static_cast<float>(first));
    w.toSecond[j] = first == second ? 0.5f : std::fabs(x - static_cast<float>(second));
  }
  return w;
}

}  // namespace

void resizeBilinearFloat(const Tensor& x, BilinearCoordinates mode, const BilinearAxis& height,
                         const BilinearAxis& width, Tensor& out, ThreadPool* pool) {
  const AxisWeights ys = axisWeights(mode, height), xs = axisWeights(mode, width);
  const int64_t inPlane = height.inLength * width.inLength, outPlane = height.outLength * width.outLength;
  const int64_t planes = inPlane == 0 ? 0 : x.numel() / inPlane;
  const float* src = x.data<float>();
  float* dst = out.data<float>();
  parallelFor(pool, planes, 1, [&](int64_t begin, int64_t end) {
    for (int64_t p = begin; p < end; ++p) {
      const float* in = src + p * inPlane;
      float* o = dst + p * outPlane;
      for (int64_t i = 0; i < height.outLength; ++i) {
        const float* row1 = in + ys.first[i] * width.inLength;
        const float* row2 = in + ys.second[i] * width.inLength;
        const float dy1 = ys.toFirst[i], dy2 = ys.toSecond[i];
        for (int64_t j = 0; j < width.outLength; ++j) {
          const float dx1 = xs.toFirst[j], dx2 = xs.toSecond[j];
          const int64_t a = xs.first[j], b = xs.second[j];
          // Each input weighs by the distances to the opposite taps, summed in this order.
          o[i * width.outLength + j] =
              dx2 * dy2 * row1[a] + dx1 * dy2 * row1[b] + dx2 * dy1 * row2[a] + dx1 * dy1 * row2[b];
        }
      }
    }
  });
}

}  // namespace kiln::cpu
