// DynamicQuantizeLinear's range and parameters (see engine/src/ep/vulkan/kernels/quantization.cpp).
// PASS 0: each workgroup reduces LOCAL_SIZE_X * PER_INVOCATION elements of x to one (min, max) pair; every pair
// starts at (0, 0), so the range always holds 0, and NaN fails both comparisons and is skipped. Min and max are
// exact whatever the order, so the pairs equal the CPU EP's blocks.
// PASS 1: one invocation reduces the pairs and writes y_scale and y_zero_point exactly as the CPU EP computes them:
// scale = hi == lo ? 1 : (hi - lo) / 255, zero point = saturate(round(0 - lo / scale)) (0 when scale is 0).
#version 450
#extension GL_GOOGLE_include_directive : require
#include "quantize_math.glsl"
layout(local_size_x = LOCAL_SIZE_X) in;
#if PASS == 0
layout(std430, binding = 0) readonly buffer X { float x[]; };
layout(std430, binding = 1) writeonly buffer Pairs { vec2 pairs[]; };
#else
layout(std430, binding = 0) readonly buffer Pairs { vec2 pairs[]; };
layout(std430, binding = 1) writeonly buffer Scale { float scale[]; };
layout(std430, binding = 2) writeonly buffer ZeroPoint { uint zeroPoint[]; };
#endif
layout(push_constant) uniform Params {
  uint count;  // PASS 0: elements of x; PASS 1: pairs
  uint rowStride;
} p;

vec2 widen(vec2 range, float v) {
  return vec2(v < range.x ? v : range.x, v > range.y ? v : range.y);
}

#if PASS == 0
shared vec2 partial[LOCAL_SIZE_X];

void main() {
  uint group = gl_WorkGroupID.x + gl_WorkGroupID.y * gl_NumWorkGroups.x;
  if (group * LOCAL_SIZE_X * PER_INVOCATION >= p.count) return;  // the whole workgroup: a spill past the pairs
  uint begin = group * LOCAL_SIZE_X * PER_INVOCATION + gl_LocalInvocationID.x;
  vec2 range = vec2(0.0);
  for (uint k = 0u; k < PER_INVOCATION; ++k) {
    uint i = begin + k * LOCAL_SIZE_X;
    if (i < p.count) range = widen(range, x[i]);
  }
  partial[gl_LocalInvocationID.x] = range;
  barrier();
  for (uint half_ = LOCAL_SIZE_X / 2u; half_ > 0u; half_ /= 2u) {
    if (gl_LocalInvocationID.x < half_) {
      vec2 other = partial[gl_LocalInvocationID.x + half_];
      partial[gl_LocalInvocationID.x] = widen(widen(partial[gl_LocalInvocationID.x], other.x), other.y);
    }
    barrier();
  }
  if (gl_LocalInvocationID.x == 0u) pairs[group] = partial[0];
}
#else
void main() {
  if (gl_GlobalInvocationID.x != 0u) return;
  vec2 range = vec2(0.0);
  for (uint t = 0u; t < p.count; ++t) {
    range = widen(range, pairs[t].x);
    range = widen(range, pairs[t].y);
  }
  float lo = range.x, hi = range.y;
  float s = hi == lo ? 1.0 : exactQuotient(hi - lo, 255.0);
  int zp = (floatBitsToUint(s) & 0x7FFFFFFFu) == 0u ? 0 : saturateRounded(0.0 - exactQuotient(lo, s), 0, false);
  scale[0] = s;
  zeroPoint[0] = uint(zp);
}
#endif
