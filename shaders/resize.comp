// Resize / Upsample of a tensor of rank <= 4 (shapes padded with leading 1s), one invocation per output
// element. Each axis maps its output index to an input coordinate by COORD (0 half_pixel, 1 half_pixel_symmetric,
// 2 pytorch_half_pixel, 3 align_corners, 4 asymmetric, 5 tf_half_pixel_for_nn), as the CPU EP does
// (cpu/kernels/tensor_resize.cpp). LINEAR 0 picks the nearest input element by NEAREST (0 round_prefer_floor,
// 1 round_prefer_ceil, 2 floor, 3 ceil, 4 legacy: floor when upsampling, ceil when downsampling); LINEAR 1
// interpolates n-linearly over the axes whose coordinate is not an integer. ELEM8 (with LINEAR 0): uint8/int8
// data.
#version 450
#extension GL_GOOGLE_include_directive : require
#include "storage.glsl"
#if ELEM8  // uint8/int8 data, nearest only (LINEAR 0): elements are copied as bytes
#extension GL_EXT_shader_8bit_storage : require
#undef SFLOAT
#define SFLOAT uint8_t
#endif
layout(local_size_x = LOCAL_SIZE_X) in;
layout(std430, binding = 0) readonly buffer Input { SFLOAT x[]; };
layout(std430, binding = 1) writeonly buffer Output { SFLOAT y[]; };
layout(push_constant) uniform Params {
  uint count;
  uint rowStride;
  uint inDims[4];
  uint outDims[4];
  float scaleNum[4];       // the scale is scaleNum / scaleDen (see originalCoordinate)
  float scaleDen[4];
  float lengthResized[4];  // in * scale (unrounded) with scales, the output length with sizes: half_pixel_symmetric's
} p;

// a / b as an unevaluated sum hi + lo, accurate far beyond float: the CPU EP computes coordinates in double,
// and nearest rounding must agree with it where a float quotient would round onto an integer (6 / 0.6f).
// q * b exactly as hi + lo (Dekker's product; `precise` keeps the compiler from fusing or reassociating, and
// avoids relying on fma, which llvmpipe may evaluate unfused).
void split(float a, out float hi, out float lo) {
  precise float c = 4097.0 * a;
  precise float h = c - (c - a);
  hi = h;
  lo = a - h;
}

vec2 divide(float a, float b) {
  precise float q = a / b;
  float qh, ql, bh, bl;
  split(q, qh, ql);
  split(b, bh, bl);
  precise float prod = q * b;
  precise float err = ((qh * bh - prod) + qh * bl + ql * bh) + ql * bl;
  precise float r = (a - prod) - err;  // a - q * b, exact
  return vec2(q, r / b);
}

// The input coordinate of output index j along axis d as hi + lo. The scale is num / den: (scale, 1) for
// scales, (out, in) for sizes, so x / scale = x * den / num is exact for integer lengths.
vec2 originalCoordinate(uint d, float j) {
  const float num = p.scaleNum[d], den = p.scaleDen[d], len = p.lengthResized[d];
#if COORD == 0
  const vec2 v = divide((j + 0.5) * den, num);
  return vec2(v.x - 0.5, v.y);
#elif COORD == 1
  const float adjustment = float(p.outDims[d]) / len;
  const float center = float(p.inDims[d]) / 2.0;
  const vec2 v = divide((j + 0.5) * den, num);
  return vec2(center * (1.0 - adjustment) + v.x - 0.5, v.y);
#elif COORD == 2
  const vec2 v = divide((j + 0.5) * den, num);
  return p.outDims[d] > 1u ? vec2(v.x - 0.5, v.y) : vec2(0.0);
#elif COORD == 3
  // The output length, as onnxruntime (not in * scale, as ONNX's 1.12 reference: the CPU EP says more).
  return p.outDims[d] == 1u ? vec2(0.0) : divide(j * float(p.inDims[d] - 1u), float(p.outDims[d] - 1u));
#elif COORD == 4
  return divide(j * den, num);
#else
  return divide((j + 0.5) * den, num);
#endif
}

// floor(hi + lo) for |lo| below half an ulp of hi.
float floor2(vec2 v) {
  const float f = floor(v.x);
  return v.x == f && v.y < 0.0 ? f - 1.0 : f;
}

int nearestIndex(vec2 v, float s) {
  const float fl = floor2(v);
  const float frac = (v.x - fl) + v.y;  // exact enough: v.x - fl is exact
#if NEAREST == 0
  return int(frac > 0.5 ? fl + 1.0 : fl);
#elif NEAREST == 1
  return int(frac >= 0.5 ? fl + 1.0 : fl);
#elif NEAREST == 2
  return int(fl);
#elif NEAREST == 3
  return int(frac > 0.0 ? fl + 1.0 : fl);
#else
  return int(s < 1.0 ? (frac > 0.0 ? fl + 1.0 : fl) : fl);
#endif
}

// Index and fraction of the linear taps along axis d for output index j (identity axes skip the arithmetic).
void linearTaps(uint d, uint j, out int lo, out int hi, out float frac) {
  if (p.inDims[d] == p.outDims[d] && p.scaleNum[d] == p.scaleDen[d] && COORD != 1) {
    lo = hi = int(j);
    frac = 0.0;
    return;
  }
  const vec2 c = originalCoordinate(d, float(j));
  const float v0 = floor2(c);
  const float v = v0 + ((c.x - v0) + c.y);
  const int last = int(p.inDims[d]) - 1;
  frac = v - v0;
  lo = clamp(int(v0), 0, last);
  hi = clamp(int(v0) + 1, 0, last);
}

int nearestTap(uint d, uint j) {
  return clamp(nearestIndex(originalCoordinate(d, float(j)), p.scaleNum[d] / p.scaleDen[d]), 0, int(p.inDims[d]) - 1);
}

// Each invocation writes 4 consecutive elements of one output row (the last axis), so the outer axes' mapping
// is computed once per 4 outputs.
void main() {
  const uint i = gl_GlobalInvocationID.x + gl_GlobalInvocationID.y * p.rowStride;
  if (i >= p.count) return;
  const uint colBlocks = (p.outDims[3] + 3u) / 4u;
  const uint col0 = i % colBlocks * 4u;
  uint rest = i / colBlocks;
  uint coord[3];
  for (int d = 2; d >= 0; --d) {
    coord[d] = rest % p.outDims[d];
    rest /= p.outDims[d];
  }
  const uint yRow = ((coord[0] * p.outDims[1] + coord[1]) * p.outDims[2] + coord[2]) * p.outDims[3];
#if LINEAR
  int lo[3], hi[3];
  float frac[3];
  for (uint d = 0; d < 3u; ++d) linearTaps(d, coord[d], lo[d], hi[d], frac[d]);
  // The 8 corners over the outer axes: input row offsets and weights.
  uint rowBase[8];
  float rowWeight[8];
  for (uint corner = 0; corner < 8u; ++corner) {
    float weight = 1.0;
    uint index = 0;
    for (uint d = 0; d < 3u; ++d) {
      const bool upper = (corner >> (2u - d) & 1u) != 0u;
      weight *= upper ? frac[d] : 1.0 - frac[d];
      index = index * p.inDims[d] + uint(upper ? hi[d] : lo[d]);
    }
    rowBase[corner] = index * p.inDims[3];
    rowWeight[corner] = weight;
  }
  for (uint col = col0; col < min(col0 + 4u, p.outDims[3]); ++col) {
    int l, h;
    float f;
    linearTaps(3u, col, l, h, f);
    float acc = 0.0;
    for (uint corner = 0; corner < 8u; ++corner) {
      if (rowWeight[corner] == 0.0) continue;
      const float a = float(x[rowBase[corner] + uint(l)]);
      const float b = f != 0.0 ? float(x[rowBase[corner] + uint(h)]) : 0.0;
      acc += rowWeight[corner] * ((1.0 - f) * a + f * b);
    }
    y[yRow + col] = SFLOAT(acc);
  }
#else
  uint index = 0;
  for (uint d = 0; d < 3u; ++d) index = index * p.inDims[d] + uint(nearestTap(d, coord[d]));
  const uint xRow = index * p.inDims[3];
  for (uint col = col0; col < min(col0 + 4u, p.outDims[3]); ++col) y[yRow + col] = x[xRow + uint(nearestTap(3u, col))];
#endif
}
