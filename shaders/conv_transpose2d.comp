// 1-D/2-D transposed convolution (1-D runs as height 1), NCHW, as a gather: output pixel (oh, ow) sums the
// input pixels (ih, iw) with ih * sH - pH + kh * dH == oh (same for w). Each invocation computes 4 output
// channels (vec4 weights prepacked as [group][channel block][c][kh][kw][4], see kernels/conv.cpp) for PIX pixels
// of one row spaced sW apart, which share their taps, so each weight read feeds PIX pixels.
#version 450
#extension GL_GOOGLE_include_directive : require
#include "storage.glsl"
layout(local_size_x = LOCAL_SIZE_X) in;
layout(std430, binding = 0) readonly buffer Input { SFLOAT x[]; };
layout(std430, binding = 1) readonly buffer Weights { SVEC4 w[]; };
layout(std430, binding = 2) readonly buffer Bias { SFLOAT bias[]; };  // per output channel (unread without hasBias)
layout(std430, binding = 3) writeonly buffer Output { SFLOAT y[]; };
layout(push_constant) uniform Params {
  uint inC;  // input channels per group
  uint inH, inW, outH, outW;
  uint outC;  // output channels per group
  uint groups;
  uint mBlocks;  // ceil(outC / 4)
  uint kH, kW, sH, sW, dH, dW;
  int pH, pW;  // leading pads
  uint rowStride;
  uint hasBias;
} p;

void main() {
  // Invocation -> (output row, column super-block t, residue r): pixel j is column t * sW * PIX + r + j * sW, so
  // all PIX pixels share their kernel taps (hence weights) and read adjacent input columns.
  const uint perRow = (p.outW + p.sW * PIX - 1u) / (p.sW * PIX) * p.sW;
  const uint i = gl_GlobalInvocationID.x + gl_GlobalInvocationID.y * p.rowStride;
  if (i >= p.outH * perRow) return;
  const uint outRow = i / perRow, t = i % perRow / p.sW, r = i % p.sW;
  const uint ow0 = t * p.sW * PIX + r;
  const uint mb = gl_WorkGroupID.z % p.mBlocks;
  const uint ng = gl_WorkGroupID.z / p.mBlocks;  // n * groups + g
  const uint g = ng % p.groups;
  const int oh = int(outRow) + p.pH, ow = int(ow0) + p.pW;
  const uint HW = p.inH * p.inW;
  const uint xBase = ng * p.inC * HW;
  const uint KK = p.kH * p.kW;
  const uint wBase = (g * p.mBlocks + mb) * p.inC * KK;
  vec4 acc[PIX];
  for (uint j = 0; j < PIX; ++j) acc[j] = vec4(0.0);
  for (uint kh = 0; kh < p.kH; ++kh) {
    const int th = oh - int(kh * p.dH);
    if (th < 0 || th % int(p.sH) != 0) continue;
    const uint ih = uint(th) / p.sH;
    if (ih >= p.inH) continue;
    for (uint kw = 0; kw < p.kW; ++kw) {
      // Pixel j reads input column tw / sW + j; tw may be negative (GLSL leaves % of negatives undefined), so
      // shift it by a multiple of sW first.
      const int shift = int(((p.kW * p.dW) / p.sW + 1u) * p.sW);
      const int tw = ow - int(kw * p.dW) + shift;
      if (tw % int(p.sW) != 0) continue;
      const int iw0 = (tw - shift) / int(p.sW);  // exact division; column j is inside for 0 <= iw0 + j < inW
      uint xi = xBase + ih * p.inW;
      uint wi = wBase + kh * p.kW + kw;
      for (uint c = 0; c < p.inC; ++c, xi += HW, wi += KK) {
        const vec4 wv = vec4(w[wi]);
        for (uint j = 0; j < PIX; ++j) {
          const int iw = iw0 + int(j);
          const bool inside = iw >= 0 && iw < int(p.inW);
          const float v = float(x[inside ? xi + uint(iw) : 0u]);
          acc[j] += inside ? v * wv : vec4(0.0);
        }
      }
    }
  }
  const uint P = p.outH * p.outW;
  for (uint i4 = 0; i4 < 4u; ++i4) {
    const uint m = mb * 4u + i4;
    if (m >= p.outC) break;
    const float b = p.hasBias != 0u ? float(bias[g * p.outC + m]) : 0.0;
    const uint row = (ng * p.outC + m) * P + outRow * p.outW;
    for (uint j = 0; j < PIX; ++j) {
      const uint col = ow0 + j * p.sW;
      if (col < p.outW) y[row + col] = SFLOAT(acc[j][i4] + b);
    }
  }
}
