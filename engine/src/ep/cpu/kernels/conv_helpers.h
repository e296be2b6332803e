// Private helpers shared by the convolution kernels that compute in int32 (ConvInteger in conv.cpp,
// QLinearConv in qlinear_ops.cpp): shape resolution, zero-point removal and the int32 convolution itself.
#pragma once

#include <cstdint>
#include <vector>

#include "ep/cpu/kernel.h"
#include "ep/cpu/thread_pool.h"
#include "kiln/status.h"
#include "kiln/tensor.h"
#include "ops/window_geometry.h"

namespace kiln::cpu {

// The sizes of a convolution of X [N, C, spatial...] with W [M, C/group, kernel...] into [N, M, out...].
struct ConvShapes {
  int64_t N = 0, C = 0, M = 0;
  ops::WindowGeometry geometry;
  Shape outShape;
};

// Validates X, W and the optional bias B (M elements) against the attributes and resolves the output
// geometry; INVALID_ARGUMENT naming the mismatch otherwise.
Result<ConvShapes> resolveConvShapes(const ops::WindowAttributes& attrs, int64_t group, const Tensor& x,
                                     const Tensor& w, const Tensor* b);

// Input i of the node when it is a constant initializer, else nullptr.
const Tensor* constantConvInput(const KernelInfo& info, size_t i);

// `t` (uint8 or int8) minus its zero point, widened to int32. The zero point has t's element type and is
// absent, a single value, or one value per leading-dim slice (`slices` of them: W's output channels).
Result<std::vector<int32_t>> widenConvOperand(const Tensor& t, const Tensor* zeroPoint, int64_t slices);

// y = conv(x, w) + bias (bias may be null) on int32 operands of the sizes in `s`; y has s.outShape's
// elements. Split over `pool`'s threads (null: inline); exact, so the result does not depend on them.
void convolveInt32(const int32_t* x, const int32_t* w, const int32_t* bias, int32_t* y, const ConvShapes& s,
                   int64_t group, ThreadPool* pool);

}  // namespace kiln::cpu
