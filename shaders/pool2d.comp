// Pooling, NCHW, float32 (uint8/int8 MaxPool with Q8, where the device has 8-bit storage). GLOBAL 0: one invocation per output of a 1-D/2-D MaxPool (AVERAGE 0) or AveragePool
// (AVERAGE 1) window, with the tap ranges computed as in the CPU EP (cpu/kernels/pool.cpp): valid taps lie
// inside the input, and count_include_pad divides by the taps inside the padded input. GLOBAL 1: one workgroup
// per (n, c) plane reduces it with a shared-memory tree (GlobalAveragePool / GlobalMaxPool).
#version 450
#extension GL_GOOGLE_include_directive : require
#include "storage.glsl"
layout(local_size_x = LOCAL_SIZE_X) in;
#if Q8  // uint8/int8 MaxPool (GLOBAL 0, AVERAGE 0 only): bytes through 8-bit storage, compared as integers
#extension GL_EXT_shader_8bit_storage : require
#if SIGNED
#define QTYPE int8_t
#else
#define QTYPE uint8_t
#endif
layout(std430, binding = 0) readonly buffer Input { QTYPE x[]; };
layout(std430, binding = 1) writeonly buffer Output { QTYPE y[]; };
#else
layout(std430, binding = 0) readonly buffer Input { SFLOAT x[]; };
layout(std430, binding = 1) writeonly buffer Output { SFLOAT y[]; };
#endif

#if GLOBAL
layout(push_constant) uniform Params {
  uint planeSize;
  uint planes;
  uint rowStride;  // workgroups per row (planes may exceed 65535)
} p;

shared float partial[LOCAL_SIZE_X];

void main() {
  const uint plane = gl_WorkGroupID.x + gl_WorkGroupID.y * p.rowStride;
  if (plane >= p.planes) return;  // uniform across the workgroup
  const uint base = plane * p.planeSize;
#if AVERAGE
  float acc = 0.0;
  for (uint i = gl_LocalInvocationID.x; i < p.planeSize; i += LOCAL_SIZE_X) acc += float(x[base + i]);
#else
  float acc = -1.0 / 0.0;
  for (uint i = gl_LocalInvocationID.x; i < p.planeSize; i += LOCAL_SIZE_X) acc = max(acc, float(x[base + i]));
#endif
  partial[gl_LocalInvocationID.x] = acc;
  barrier();
  for (uint half_ = LOCAL_SIZE_X / 2; half_ > 0; half_ /= 2) {
    if (gl_LocalInvocationID.x < half_) {
#if AVERAGE
      partial[gl_LocalInvocationID.x] += partial[gl_LocalInvocationID.x + half_];
#else
      partial[gl_LocalInvocationID.x] = max(partial[gl_LocalInvocationID.x], partial[gl_LocalInvocationID.x + half_]);
#endif
    }
    barrier();
  }
  if (gl_LocalInvocationID.x == 0) {
#if AVERAGE
    y[plane] = SFLOAT(p.planeSize > 0 ? partial[0] / float(p.planeSize) : 0.0);
#else
    y[plane] = SFLOAT(partial[0]);
#endif
  }
}

#else
layout(push_constant) uniform Params {
  uint count;
  uint rowStride;
  uint inH, inW, outH, outW;
  uint kH, kW, sH, sW, dH, dW;
  int padH, padW;        // leading pads
  int padEndH, padEndW;  // trailing pads
  uint countIncludePad;
} p;

int floorDiv(int a, int b) { return a >= 0 ? a / b : -((-a + b - 1) / b); }
int ceilDiv(int a, int b) { return a >= 0 ? (a + b - 1) / b : -((-a) / b); }

// Tap range [lo, hi) inside the input and the tap count inside the padded input, for window start `start`.
void taps(int start, int inLen, int k, int dil, int padEnd, out int lo, out int hi, out int padded) {
  lo = max(0, ceilDiv(-start, dil));
  hi = max(lo, min(k, floorDiv(inLen - 1 - start, dil) + 1));
  padded = clamp(floorDiv(inLen + padEnd - 1 - start, dil) + 1, 0, k);
}

void main() {
  const uint i = gl_GlobalInvocationID.x + gl_GlobalInvocationID.y * p.rowStride;
  if (i >= p.count) return;
  const uint ow = i % p.outW, oh = i / p.outW % p.outH, plane = i / (p.outW * p.outH);
  const int startH = int(oh * p.sH) - p.padH, startW = int(ow * p.sW) - p.padW;
  int loH, hiH, padHCount, loW, hiW, padWCount;
  taps(startH, int(p.inH), int(p.kH), int(p.dH), p.padEndH, loH, hiH, padHCount);
  taps(startW, int(p.inW), int(p.kW), int(p.dW), p.padEndW, loW, hiW, padWCount);
  const uint base = plane * p.inH * p.inW;
#if Q8
  int acc = SIGNED != 0 ? -128 : 0;  // the type's lowest, as the CPU EP writes for an empty window
  for (int kh = loH; kh < hiH; ++kh) {
    const uint row = base + uint(startH + kh * int(p.dH)) * p.inW;
    for (int kw = loW; kw < hiW; ++kw) acc = max(acc, int(x[row + uint(startW + kw * int(p.dW))]));
  }
  y[i] = QTYPE(acc);
}
#else
#if AVERAGE
  float acc = 0.0;
#else
  float acc = -3.402823466e38;  // the lowest float, as the CPU EP writes for an empty window
#endif
  for (int kh = loH; kh < hiH; ++kh) {
    const uint row = base + uint(startH + kh * int(p.dH)) * p.inW;
    for (int kw = loW; kw < hiW; ++kw) {
      const float v = float(x[row + uint(startW + kw * int(p.dW))]);
#if AVERAGE
      acc += v;
#else
      acc = max(acc, v);
#endif
    }
  }
#if AVERAGE
  const int n = p.countIncludePad != 0 ? padHCount * padWCount : (hiH - loH) * (hiW - loW);
  acc = n > 0 ? acc / float(n) : 0.0;
#endif
  y[i] = SFLOAT(acc);
}
#endif
#endif
