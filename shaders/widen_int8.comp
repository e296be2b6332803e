// Widens packed 8-bit operands (quantize_math.glsl) to int32 with their zero points subtracted, once per run, so
// that conv_int.comp's inner loop reads plain integers (engine/src/ep/vulkan/kernels/integer_ops.cpp).
// WEIGHTS 0 (x): y[i] = x[i] - zero (zero: per tensor, or 0 when absent).
// WEIGHTS 1 (w [M, Cg, K]): y laid out [group][mBlock][Cg * K][CB], each tap's CB output channels side by side
// (one ivec4 load for CB = 4), y = w - zero[m] (per tensor or per output channel); channels past a group's end are 0.
#version 450
#extension GL_GOOGLE_include_directive : require
#include "quantize_math.glsl"
layout(local_size_x = LOCAL_SIZE_X) in;
layout(std430, binding = 0) readonly buffer Src { uint src[]; };
layout(std430, binding = 1) readonly buffer Zero { uint zero[]; };
layout(std430, binding = 2) writeonly buffer Dst { int dst[]; };
layout(push_constant) uniform Params {
  uint count;  // elements of dst
  uint rowStride;
  uint zeroCount;  // 0 (none), 1 (per tensor) or M (per output channel, WEIGHTS only)
  uint Mg, taps, mBlocks;  // WEIGHTS: output channels per group, Cg * K, ceil(Mg / CB)
} p;

const bool kSigned = SIGNED != 0;

void main() {
  uint o = gl_GlobalInvocationID.x + gl_GlobalInvocationID.y * p.rowStride;
  if (o >= p.count) return;
#if WEIGHTS
  uint j = o % CB, t = o / CB;
  uint tap = t % p.taps;
  t /= p.taps;
  uint mb = t % p.mBlocks, g = t / p.mBlocks;
  uint local = mb * CB + j;
  if (local >= p.Mg) {
    dst[o] = 0;
    return;
  }
  uint m = g * p.Mg + local;
  int z = p.zeroCount == 0u ? 0 : LOAD_Q(zero, p.zeroCount == 1u ? 0u : m, kSigned);
  dst[o] = LOAD_Q(src, m * p.taps + tap, kSigned) - z;
#else
  int z = p.zeroCount == 0u ? 0 : LOAD_Q(zero, 0u, kSigned);
  dst[o] = LOAD_Q(src, o, kSigned) - z;
#endif
}
