// Whole tensors between float32 and float16 storage (the Float16 type rounds to nearest even): what the Vulkan EP's
// float16 storage writes, and what a weightless binary's load derives again from float32 source weights.
#pragma once

#include "kiln/tensor.h"

namespace kiln {

// `t` (float32) rounded to float16, and `t` (float16) widened to float32: same shape.
Tensor toFloat16(const Tensor& t);
Tensor toFloat32(const Tensor& t);

}  // namespace kiln
