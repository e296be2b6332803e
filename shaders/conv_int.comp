// ConvInteger, and QLinearConv's accumulation, over 1 or 2 spatial dims (1-D as height 1) on packed 8-bit x
// [N, C, H, W] and w [M, C/group, KH, KW] (quantize_math.glsl): y = sum (x - x_zero) * (w - w_zero[m]) (+ bias[m]
// with HAS_BIAS) in int32, taps outside the image contributing zero (as the op requires). Each invocation computes
// a tile of CB output channels x PIX consecutive output pixels of one row, so each x and w byte it unpacks serves
// several products (engine/src/ep/vulkan/kernels/integer_ops.cpp; requantize.comp turns QLinearConv's int32 into
// 8-bit). int32 sums wrap as the CPU EP's do, so the order of accumulation does not matter.
#version 450
#extension GL_GOOGLE_include_directive : require
#include "quantize_math.glsl"
layout(local_size_x = LOCAL_SIZE_X) in;
layout(std430, binding = 0) readonly buffer X { uint x[]; };
layout(std430, binding = 1) readonly buffer W { uint w[]; };
layout(std430, binding = 2) readonly buffer XZero { uint xZero[]; };
layout(std430, binding = 3) readonly buffer WZero { uint wZero[]; };
layout(std430, binding = 4) readonly buffer Bias { int bias[]; };  // a dummy binding without HAS_BIAS
layout(std430, binding = 5) writeonly buffer Y { int y[]; };
layout(push_constant) uniform Params {
  uint tiles;  // N * group * mBlocks * OH * oxBlocks
  uint rowStride;
  uint C, H, W, OH, OW;
  uint M, Mg, Cg;  // output channels, per group; input channels per group
  uint KH, KW, strideH, strideW, dilationH, dilationW;
  int padH, padW;
  uint xZeroCount;  // 0 (none) or 1
  uint wZeroCount;  // 0, 1 or M (per output channel)
  uint mBlocks;     // ceil(Mg / CB)
  uint oxBlocks;    // ceil(OW / PIX)
} p;

const bool kXSigned = X_SIGNED != 0, kWSigned = W_SIGNED != 0;

void main() {
  uint t = gl_GlobalInvocationID.x + gl_GlobalInvocationID.y * p.rowStride;
  if (t >= p.tiles) return;
  uint ox0 = t % p.oxBlocks * PIX;
  t /= p.oxBlocks;
  uint oy = t % p.OH;
  t /= p.OH;
  uint groupCount = p.M / p.Mg;
  uint mb = t % (groupCount * p.mBlocks), n = t / (groupCount * p.mBlocks);
  uint g = mb / p.mBlocks, m0 = g * p.Mg + mb % p.mBlocks * CB, mEnd = min(m0 + CB, (g + 1) * p.Mg);
  int xz = p.xZeroCount == 0u ? 0 : LOAD_Q(xZero, 0u, kXSigned);
  int wz[CB];
  uint wBase[CB];  // w offset of each channel's (c = 0, ky = 0, kx = 0); channels past mEnd repeat the last one
  int acc[CB][PIX];
  for (uint j = 0u; j < CB; ++j) {
    uint m = min(m0 + j, mEnd - 1u);
    wz[j] = p.wZeroCount == 0u ? 0 : LOAD_Q(wZero, p.wZeroCount == 1u ? 0u : m, kWSigned);
    wBase[j] = m * p.Cg * p.KH * p.KW;
    for (uint q = 0u; q < PIX; ++q) acc[j][q] = 0;
  }
  uint taps = p.KH * p.KW;
  for (uint c = 0u; c < p.Cg; ++c) {
    uint xPlane = (n * p.C + g * p.Cg + c) * p.H;
    for (uint ky = 0u; ky < p.KH; ++ky) {
      int iy = int(oy * p.strideH + ky * p.dilationH) - p.padH;
      if (iy < 0 || iy >= int(p.H)) continue;
      uint xRow = (xPlane + uint(iy)) * p.W;
      for (uint kx = 0u; kx < p.KW; ++kx) {
        int dx[PIX];
        for (uint q = 0u; q < PIX; ++q) {
          int ix = int((ox0 + q) * p.strideW + kx * p.dilationW) - p.padW;
          dx[q] = ix >= 0 && ix < int(p.W) ? LOAD_Q(x, xRow + uint(ix), kXSigned) - xz : 0;
        }
        uint tap = c * taps + ky * p.KW + kx;
        for (uint j = 0u; j < CB; ++j) {
          int dw = LOAD_Q(w, wBase[j] + tap, kWSigned) - wz[j];
          for (uint q = 0u; q < PIX; ++q) acc[j][q] += dx[q] * dw;
        }
      }
    }
  }
  uint spatial = p.OH * p.OW;
  for (uint j = 0u; j < CB && m0 + j < mEnd; ++j) {
    uint m = m0 + j, at = (n * p.M + m) * spatial + oy * p.OW;
#if HAS_BIAS
    int b = bias[m];
#else
    int b = 0;
#endif
    for (uint q = 0u; q < PIX && ox0 + q < p.OW; ++q) y[at + ox0 + q] = acc[j][q] + b;
  }
}
