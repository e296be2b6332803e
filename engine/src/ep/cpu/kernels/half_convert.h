// Float32 <-> float16 conversion of whole arrays: F16C eight lanes at a time where the CPU has it (checked once),
// Float16's scalar conversions otherwise. The same bits either way (nearest even, overflow to infinity, a NaN stays
// a NaN; F16C quiets a signalling float16 NaN on widening).
#pragma once

#include <cstdint>

#include "kiln/tensor.h"

namespace kiln::cpu {

// out[i] = Float16(in[i]) for i < n.
void floatsToHalves(const float* in, Float16* out, int64_t n);
// out[i] = float(in[i]) for i < n.
void halvesToFloats(const Float16* in, float* out, int64_t n);

}  // namespace kiln::cpu
