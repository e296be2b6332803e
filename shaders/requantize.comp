// QLinearConv's and QLinearMatMul's requantization of their int32 accumulators (conv_int.comp, matmul_int.comp):
// y[i] = saturate(round_half_even(float(acc[i]) * multiplier[row][col]) + y_zero[yIndex]) into packed 8-bit y
// (SIGNED: int8), exactly as the CPU EP computes it, with row = (i / rowInner) % rows, col = (i / colInner) % cols
// and yIndex = (i / yInner) % yCount. Each invocation writes one 32-bit word (four elements).
// MULTIPLIERS 1 computes that table first, as the CPU EP does in float: multiplier[r][c] = (a_scale[r] *
// b_scale[c]) / y_scale[r] (QLinearConv: (x_scale * w_scale[m]) / y_scale), the division correctly rounded
// (engine/src/ep/vulkan/kernels/integer_ops.cpp).
#version 450
#extension GL_GOOGLE_include_directive : require
#include "quantize_math.glsl"
layout(local_size_x = LOCAL_SIZE_X) in;
#if MULTIPLIERS
layout(std430, binding = 0) readonly buffer AScale { float aScale[]; };
layout(std430, binding = 1) readonly buffer BScale { float bScale[]; };
layout(std430, binding = 2) readonly buffer YScale { float yScale[]; };
layout(std430, binding = 3) writeonly buffer Table { float table[]; };
layout(push_constant) uniform Params {
  uint count;  // rows * cols
  uint rowStride;
  uint cols;
  uint aCount, bCount, yCount;  // 1 (per tensor) or rows (a, y) / cols (b)
} p;

void main() {
  uint i = gl_GlobalInvocationID.x + gl_GlobalInvocationID.y * p.rowStride;
  if (i >= p.count) return;
  uint r = i / p.cols, c = i % p.cols;
  float product = aScale[p.aCount == 1u ? 0u : r] * bScale[p.bCount == 1u ? 0u : c];
  table[i] = exactQuotient(product, yScale[p.yCount == 1u ? 0u : r]);
}
#else
layout(std430, binding = 0) readonly buffer Acc { int acc[]; };
layout(std430, binding = 1) readonly buffer Multiplier { float multiplier[]; };
layout(std430, binding = 2) readonly buffer YZero { uint yZero[]; };  // unread when yCount is 0
layout(std430, binding = 3) writeonly buffer Y { uint y[]; };
layout(push_constant) uniform Params {
  uint count;
  uint rowStride;
  uint rowInner, rows;
  uint colInner, cols;
  uint yInner, yCount;
} p;

const bool kSigned = SIGNED != 0;

void main() {
  uint word = gl_GlobalInvocationID.x + gl_GlobalInvocationID.y * p.rowStride;
  uint first = word * 4u;
  if (first >= p.count) return;
  uint last = min(first + 4u, p.count), packed = 0u;
  for (uint i = first; i < last; ++i) {
    float m = multiplier[(i / p.rowInner) % p.rows * p.cols + (i / p.colInner) % p.cols];
    int zp = p.yCount == 0u ? 0 : LOAD_Q(yZero, (i / p.yInner) % p.yCount, kSigned);
    packed |= (uint(saturateRounded(float(acc[i]) * m, zp, kSigned)) & 0xFFu) << ((i - first) * 8u);
  }
  y[word] = packed;
}
#endif
