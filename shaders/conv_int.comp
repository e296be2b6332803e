// ConvInteger (int32 y) and QLinearConv (REQUANT: 8-bit y) over 1 or 2 spatial dims (1-D as height 1) on packed
// 8-bit x [N, C, H, W] and w [M, C/group, KH, KW] (quantize_math.glsl): acc = sum (x - x_zero) * (w - w_zero[m]) in
// int32, taps outside the image skipped (padding contributes zero, as the op requires), plus the int32 bias with
// HAS_BIAS. REQUANT writes saturate(round(float(acc) * multiplier[m]) + y_zero), the multipliers computed on the
// host as the CPU EP computes them (engine/src/ep/vulkan/kernels/integer_ops.cpp). Each invocation computes four
// consecutive output elements (one 32-bit word of an 8-bit y).
#version 450
#extension GL_GOOGLE_include_directive : require
#include "quantize_math.glsl"
layout(local_size_x = LOCAL_SIZE_X) in;
layout(std430, binding = 0) readonly buffer X { uint x[]; };
layout(std430, binding = 1) readonly buffer W { uint w[]; };
layout(std430, binding = 2) readonly buffer XZero { uint xZero[]; };
layout(std430, binding = 3) readonly buffer WZero { uint wZero[]; };
#if REQUANT
layout(std430, binding = 4) readonly buffer Bias { int bias[]; };
layout(std430, binding = 5) readonly buffer Multiplier { float multiplier[]; };
layout(std430, binding = 6) readonly buffer YZero { uint yZero[]; };
layout(std430, binding = 7) writeonly buffer Y { uint y[]; };
#else
layout(std430, binding = 4) writeonly buffer Y { int y[]; };
#endif
layout(push_constant) uniform Params {
  uint count;  // output elements
  uint rowStride;
  uint C, H, W, OH, OW;
  uint M, Mg, Cg;  // output channels, per group; input channels per group
  uint KH, KW, strideH, strideW, dilationH, dilationW;
  int padH, padW;
  uint xZeroCount;  // 0 (none) or 1
  uint wZeroCount;  // 0, 1 or M (per output channel)
  uint hasBias;     // REQUANT
  uint multCount;   // REQUANT: 1 or M
  uint hasYZero;    // REQUANT
} p;

const bool kXSigned = X_SIGNED != 0, kWSigned = W_SIGNED != 0, kYSigned = Y_SIGNED != 0;

// The int32 accumulator of output element e and its output channel.
int convolve(uint e, out uint m) {
  uint ox = e % p.OW, t = e / p.OW;
  uint oy = t % p.OH;
  t /= p.OH;
  m = t % p.M;
  uint n = t / p.M, g = m / p.Mg;
  int xz = p.xZeroCount == 0u ? 0 : LOAD_Q(xZero, 0u, kXSigned);
  int wz = p.wZeroCount == 0u ? 0 : LOAD_Q(wZero, p.wZeroCount == 1u ? 0u : m, kWSigned);
  int acc = 0;
  for (uint c = 0u; c < p.Cg; ++c) {
    uint xPlane = (n * p.C + g * p.Cg + c) * p.H, wPlane = (m * p.Cg + c) * p.KH;
    for (uint ky = 0u; ky < p.KH; ++ky) {
      int iy = int(oy * p.strideH + ky * p.dilationH) - p.padH;
      if (iy < 0 || iy >= int(p.H)) continue;
      uint xRow = (xPlane + uint(iy)) * p.W, wRow = (wPlane + ky) * p.KW;
      for (uint kx = 0u; kx < p.KW; ++kx) {
        int ix = int(ox * p.strideW + kx * p.dilationW) - p.padW;
        if (ix < 0 || ix >= int(p.W)) continue;
        acc += (LOAD_Q(x, xRow + uint(ix), kXSigned) - xz) * (LOAD_Q(w, wRow + kx, kWSigned) - wz);
      }
    }
  }
  return acc;
}

void main() {
  uint word = gl_GlobalInvocationID.x + gl_GlobalInvocationID.y * p.rowStride;
  uint first = word * 4u;
  if (first >= p.count) return;
  uint last = min(first + 4u, p.count);
#if REQUANT
  int yz = p.hasYZero == 0u ? 0 : LOAD_Q(yZero, 0u, kYSigned);
  uint packed = 0u;
  for (uint e = first; e < last; ++e) {
    uint m;
    int acc = convolve(e, m);
    if (p.hasBias != 0u) acc += bias[m];
    float scaled = float(acc) * multiplier[p.multCount == 1u ? 0u : m];
    packed |= (uint(saturateRounded(scaled, yz, kYSigned)) & 0xFFu) << ((e - first) * 8u);
  }
  y[word] = packed;
#else
  for (uint e = first; e < last; ++e) {
    uint m;
    y[e] = convolve(e, m);
  }
#endif
}
