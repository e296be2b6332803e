// Direct 1-D/2-D convolution (1-D runs as height 1), NCHW. Each invocation computes PIX consecutive output
// pixels; with DEPTHWISE 0 for CB blocks of 4 output channels, reading weights prepacked as
// [group][channel block][c][kh][kw][4] (see kernels/conv.cpp). Every weight read feeds PIX pixels and every input
// read 4 * CB channels. GPUs take PIX 1 (adjacent lanes read adjacent pixels, weight reads are uniform);
// llvmpipe loads even uniform weights per lane inside loops, so it takes PIX 8 to amortize them.
// DEPTHWISE 1 (one input and one output channel per group) reads plain [m][kh][kw]
// weights. POINTWISE 1 (1x1 kernel, stride 1, no pads) reads input pixels directly. ACTIVATION fuses a following
// activation (0 none, 1 relu, 2 clip(alpha, beta), 3 hardsigmoid(alpha, beta), 4 hardswish, 5 sigmoid,
// 6 leakyrelu(alpha)).
#version 450
#extension GL_GOOGLE_include_directive : require
#include "storage.glsl"
layout(local_size_x = LOCAL_SIZE_X) in;
layout(std430, binding = 0) readonly buffer Input { SFLOAT x[]; };
#if DEPTHWISE
layout(std430, binding = 1) readonly buffer Weights { SFLOAT w[]; };
#else
layout(std430, binding = 1) readonly buffer Weights { SVEC4 w[]; };
#endif
layout(std430, binding = 2) readonly buffer Bias { SFLOAT bias[]; };  // per output channel (unread without hasBias)
layout(std430, binding = 3) writeonly buffer Output { SFLOAT y[]; };
layout(push_constant) uniform Params {
  uint inC;   // input channels per group
  uint inH, inW, outH, outW;
  uint outC;  // output channels per group
  uint groups;
  uint mBlocks;  // ceil(outC / 4)
  uint kH, kW, sH, sW, dH, dW;
  int pH, pW;  // leading pads
  float alpha, beta;  // activation parameters
  uint hasBias;
  uint rowStride;  // invocations per row of workgroups
  uint chunks;     // ceil(mBlocks / CB): workgroup z is (n * groups + g) * chunks + chunk
} p;

float activate(float v) {
#if ACTIVATION == 1
  return max(v, 0.0);
#elif ACTIVATION == 2
  return clamp(v, p.alpha, p.beta);
#elif ACTIVATION == 3
  return clamp(p.alpha * v + p.beta, 0.0, 1.0);
#elif ACTIVATION == 4
  return v * clamp(v / 6.0 + 0.5, 0.0, 1.0);
#elif ACTIVATION == 5
  return 1.0 / (1.0 + exp(-v));
#elif ACTIVATION == 6
  return v >= 0.0 ? v : p.alpha * v;
#else
  return v;
#endif
}

void main() {
  const uint P = p.outH * p.outW;
  // PIX consecutive pixels per invocation. No early return: surplus pixels compute the last one and skip stores.
  const uint qFirst = (gl_GlobalInvocationID.x + gl_GlobalInvocationID.y * p.rowStride) * PIX;
  const uint ng = gl_WorkGroupID.z / p.chunks;  // n * groups + g
  const uint chunk = gl_WorkGroupID.z % p.chunks;
  const uint g = ng % p.groups;
  const uint HW = p.inH * p.inW;
  const uint xBase = ng * p.inC * HW;  // (n * groups + g) * inC == n * C + g * inC
  uint q[PIX];
  int ih0[PIX], iw0[PIX];
  for (uint j = 0; j < PIX; ++j) {
    q[j] = min(qFirst + j, P - 1u);
    ih0[j] = int(q[j] / p.outW * p.sH) - p.pH;
    iw0[j] = int(q[j] % p.outW * p.sW) - p.pW;
  }

#if DEPTHWISE
  float acc[PIX];
  for (uint j = 0; j < PIX; ++j) acc[j] = 0.0;
  uint k = g * p.kH * p.kW;  // one output channel per group
  for (uint kh = 0; kh < p.kH; ++kh) {
    for (uint kw = 0; kw < p.kW; ++kw, ++k) {
      const float wv = float(w[k]);
      for (uint j = 0; j < PIX; ++j) {
        const int ih = ih0[j] + int(kh * p.dH), iw = iw0[j] + int(kw * p.dW);
        const bool inside = ih >= 0 && ih < int(p.inH) && iw >= 0 && iw < int(p.inW);
        const float v = float(x[inside ? xBase + uint(ih) * p.inW + uint(iw) : 0u]);
        acc[j] += inside ? v * wv : 0.0;
      }
    }
  }
  const float b = p.hasBias != 0u ? float(bias[g]) : 0.0;
  for (uint j = 0; j < PIX; ++j) {
    if (qFirst + j < P) y[ng * P + q[j]] = SFLOAT(activate(acc[j] + b));
  }
#else
  const uint KK = p.inC * p.kH * p.kW;
  uint kBase[CB];
  vec4 acc[CB][PIX];
  for (uint b = 0; b < CB; ++b) {
    kBase[b] = (g * p.mBlocks + min(chunk * CB + b, p.mBlocks - 1u)) * KK;  // clamped blocks are not stored
    for (uint j = 0; j < PIX; ++j) acc[b][j] = vec4(0.0);
  }
  uint k = 0;
  for (uint c = 0; c < p.inC; ++c) {
    const uint xc = xBase + c * HW;
#if POINTWISE
    float v[PIX];
    for (uint j = 0; j < PIX; ++j) v[j] = float(x[xc + q[j]]);
    for (uint b = 0; b < CB; ++b) {
      const vec4 wv = vec4(w[kBase[b] + k]);
      for (uint j = 0; j < PIX; ++j) acc[b][j] += v[j] * wv;
    }
    ++k;
#else
    for (uint kh = 0; kh < p.kH; ++kh) {
      for (uint kw = 0; kw < p.kW; ++kw, ++k) {
        float v[PIX];
        for (uint j = 0; j < PIX; ++j) {
          const int ih = ih0[j] + int(kh * p.dH), iw = iw0[j] + int(kw * p.dW);
          const bool inside = ih >= 0 && ih < int(p.inH) && iw >= 0 && iw < int(p.inW);
          const float value = float(x[inside ? xc + uint(ih) * p.inW + uint(iw) : 0u]);
          v[j] = inside ? value : 0.0;
        }
        for (uint b = 0; b < CB; ++b) {
          const vec4 wv = vec4(w[kBase[b] + k]);
          for (uint j = 0; j < PIX; ++j) acc[b][j] += v[j] * wv;
        }
      }
    }
#endif
  }
  for (uint b = 0; b < CB; ++b) {
    const uint mb = chunk * CB + b;
    if (mb >= p.mBlocks) break;
    for (uint i = 0; i < 4u; ++i) {
      const uint m = mb * 4u + i;
      if (m >= p.outC) break;
      const float bv = p.hasBias != 0u ? float(bias[g * p.outC + m]) : 0.0;
      const uint row = (ng * p.outC + m) * P;
      for (uint j = 0; j < PIX; ++j) {
        if (qFirst + j < P) y[row + q[j]] = SFLOAT(activate(acc[b][j][i] + bv));
      }
    }
  }
#endif
}
