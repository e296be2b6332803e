// ConvInteger, and QLinearConv's accumulation, over 1 or 2 spatial dims (1-D as height 1): y = sum x * w (+ bias[m]
// with HAS_BIAS) in int32 over x [N, C, H, W] and w [M, C/group, KH, KW] already widened to int32 with their zero
// points subtracted (widen_int8.comp; w as [group][mBlock][Cg * KH * KW] ivec4s of 4 output channels), so taps
// outside the image contribute zero, as the op requires. The layout of the work follows conv2d.comp: each
// invocation computes PIX consecutive output pixels (flat over the output plane) for CB blocks of 4 output channels,
// and workgroup z is (n * group + g) * chunks + chunk, so a workgroup's weight loads are uniform
// (engine/src/ep/vulkan/kernels/integer_ops.cpp; requantize.comp turns QLinearConv's int32 into 8-bit). int32 sums
// wrap as the CPU EP's do, so the order of accumulation does not matter.
#version 450
layout(local_size_x = LOCAL_SIZE_X) in;
layout(std430, binding = 0) readonly buffer X { int x[]; };
layout(std430, binding = 1) readonly buffer W { ivec4 w[]; };
layout(std430, binding = 2) readonly buffer Bias { int bias[]; };  // a dummy binding without HAS_BIAS
layout(std430, binding = 3) writeonly buffer Y { int y[]; };
layout(push_constant) uniform Params {
  uint inC;  // input channels per group
  uint inH, inW, outH, outW;
  uint outC;  // output channels per group
  uint groups;
  uint mBlocks;  // ceil(outC / 4)
  uint kH, kW, sH, sW, dH, dW;
  int pH, pW;       // leading pads
  uint rowStride;   // invocations per row of workgroups
  uint chunks;      // ceil(mBlocks / CB)
} p;

void main() {
  const uint P = p.outH * p.outW;
  // No early return: surplus pixels compute the last one and skip stores.
  const uint qFirst = (gl_GlobalInvocationID.x + gl_GlobalInvocationID.y * p.rowStride) * PIX;
  const uint ng = gl_WorkGroupID.z / p.chunks;  // n * groups + g
  const uint chunk = gl_WorkGroupID.z % p.chunks;
  const uint g = ng % p.groups;
  const uint HW = p.inH * p.inW;
  const uint xBase = ng * p.inC * HW;  // (n * groups + g) * inC == n * C + g * inC
  uint q[PIX];
  int ih0[PIX], iw0[PIX];
  for (uint j = 0u; j < PIX; ++j) {
    q[j] = min(qFirst + j, P - 1u);
    ih0[j] = int(q[j] / p.outW * p.sH) - p.pH;
    iw0[j] = int(q[j] % p.outW * p.sW) - p.pW;
  }
  const uint KK = p.inC * p.kH * p.kW;
  uint kBase[CB];
  ivec4 acc[CB][PIX];
  for (uint b = 0u; b < CB; ++b) {
    kBase[b] = (g * p.mBlocks + min(chunk * CB + b, p.mBlocks - 1u)) * KK;  // clamped blocks are not stored
    for (uint j = 0u; j < PIX; ++j) acc[b][j] = ivec4(0);
  }
  uint k = 0u;
  for (uint c = 0u; c < p.inC; ++c) {
    const uint xc = xBase + c * HW;
    for (uint kh = 0u; kh < p.kH; ++kh) {
      for (uint kw = 0u; kw < p.kW; ++kw, ++k) {
        int v[PIX];
        for (uint j = 0u; j < PIX; ++j) {
          const int ih = ih0[j] + int(kh * p.dH), iw = iw0[j] + int(kw * p.dW);
          const bool inside = ih >= 0 && ih < int(p.inH) && iw >= 0 && iw < int(p.inW);
          const int value = x[inside ? xc + uint(ih) * p.inW + uint(iw) : 0u];
          v[j] = inside ? value : 0;
        }
        for (uint b = 0u; b < CB; ++b) {
          const ivec4 wv = w[kBase[b] + k];
          for (uint j = 0u; j < PIX; ++j) acc[b][j] += v[j] * wv;
        }
      }
    }
  }
  for (uint b = 0u; b < CB; ++b) {
    const uint mb = chunk * CB + b;
    if (mb >= p.mBlocks) break;
    for (uint i = 0u; i < 4u; ++i) {
      const uint m = mb * 4u + i;
      if (m >= p.outC) break;
#if HAS_BIAS
      const int bv = bias[g * p.outC + m];
#else
      const int bv = 0;
#endif
      const uint row = (ng * p.outC + m) * P;
      for (uint j = 0u; j < PIX; ++j) {
        if (qFirst + j < P) y[row + q[j]] = acc[b][j][i] + bv;
      }
    }
  }
}
