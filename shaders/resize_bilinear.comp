#version 450
#extension GL_GOOGLE_include_directive : require
// Bilinear Resize of the last two axes of float32 images in onnxruntime's CPU arithmetic, bit for bit what the CPU EP
// computes (engine/src/ep/cpu/kernels/resize_bilinear.cpp): every coordinate, distance and product in float32, in
// onnxruntime's order, no fused multiply-add (`precise`), the coordinate divisions correctly rounded (exactQuotient:
// Vulkan allows OpFDiv 2.5 ULP). A quantized model needs it: a DynamicQuantizeLinear after the Resize turns a
// one-ulp difference into another uint8 and scale, which the network amplifies. One invocation per output element.
// COORD: 0 half_pixel, 1 pytorch_half_pixel, 2 align_corners, 3 asymmetric.
#include "quantize_math.glsl"
layout(local_size_x = LOCAL_SIZE_X) in;
layout(std430, binding = 0) readonly buffer Input { float x[]; };
layout(std430, binding = 1) writeonly buffer Output { float y[]; };
layout(push_constant) uniform Params {
  uint count;
  uint rowStride;
  uint inH, inW, outH, outW;
  float scaleH, scaleW;  // the scale onnxruntime divides by: the scales value, or float(out) / float(in)
} p;

// The input coordinate of output index j along an axis, clamped to [0, inLength - 1] (resize_bilinear.cpp).
float coordinate(uint j, uint inLength, uint outLength, float scale) {
  const float position = float(j);
  precise float c = position;
  if (scale != 1.0) {
#if COORD == 0
    c = exactQuotient(position + 0.5, scale) - 0.5;
#elif COORD == 1
    c = outLength > 1u ? exactQuotient(position + 0.5, scale) - 0.5 : 0.0;
#elif COORD == 2
    precise float numerator = position * float(inLength - 1u);
    c = outLength == 1u ? 0.0 : exactQuotient(numerator, float(outLength - 1u));
#else
    c = exactQuotient(position, scale);
#endif
  }
  return max(0.0, min(c, float(inLength - 1u)));
}

// The two taps of output index j and the coordinate's distance to each (the weight of the other tap).
void taps(uint j, uint inLength, uint outLength, float scale, out uint first, out uint second, out float toFirst,
          out float toSecond) {
  const float c = coordinate(j, inLength, outLength, scale);
  const uint last = inLength - 1u;
  first = min(uint(c), last);
  second = min(first + 1u, last);
  precise float d1 = abs(c - float(first));
  precise float d2 = abs(c - float(second));
  toFirst = first == second ? 0.5 : d1;
  toSecond = first == second ? 0.5 : d2;
}

void main() {
  const uint i = gl_GlobalInvocationID.x + gl_GlobalInvocationID.y * p.rowStride;
  if (i >= p.count) return;
  const uint col = i % p.outW, row = i / p.outW % p.outH, plane = i / (p.outW * p.outH);
  uint y1, y2, x1, x2;
  float dy1, dy2, dx1, dx2;
  taps(row, p.inH, p.outH, p.scaleH, y1, y2, dy1, dy2);
  taps(col, p.inW, p.outW, p.scaleW, x1, x2, dx1, dx2);
  const uint base = plane * p.inH * p.inW;
  const float r1a = x[base + y1 * p.inW + x1], r1b = x[base + y1 * p.inW + x2];
  const float r2a = x[base + y2 * p.inW + x1], r2b = x[base + y2 * p.inW + x2];
  // Each input weighs by the distances to the opposite taps, summed in this order.
  precise float w11 = dx2 * dy2, w12 = dx1 * dy2, w21 = dx2 * dy1, w22 = dx1 * dy1;
  precise float value = w11 * r1a + w12 * r1b + w21 * r2a + w22 * r2b;
  y[i] = value;
}
