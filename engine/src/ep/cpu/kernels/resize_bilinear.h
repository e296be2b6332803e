// Bilinear Resize of float images (the last two axes of a 2-D or 4-D tensor) in onnxruntime's CPU arithmetic,
// bit for bit: every coordinate, weight and product in float, in onnxruntime's order. Quantized models need
// it: a DynamicQuantizeLinear after a Resize turns a one-ulp difference into a different uint8 (and a
// different scale), which the network then amplifies (issue 19). tensor_resize.cpp uses it for mode 'linear'
// where it applies.
#pragma once

#include <cstdint>

#include "ep/cpu/thread_pool.h"
#include "kiln/tensor.h"

namespace kiln::cpu {

enum class BilinearCoordinates { kHalfPixel, kPytorchHalfPixel, kAlignCorners, kAsymmetric };

// One resized axis: its input and output lengths and the scale onnxruntime divides by (the `scales` value, or
// float(outLength) / float(inLength) when `sizes` were given).
struct BilinearAxis {
  int64_t inLength = 1;
  int64_t outLength = 1;
  float scale = 1.0f;
};

// Writes `out` (float, x's shape with the last two dims replaced by height.outLength and width.outLength)
// from the float tensor `x` (rank >= 2, every leading axis unresized). `pool` may be null (runs inline).
void resizeBilinearFloat(const Tensor& x, BilinearCoordinates mode, const BilinearAxis& height,
                         const BilinearAxis& width, Tensor& out, ThreadPool* pool);

}  // namespace kiln::cpu
