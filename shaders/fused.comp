// A chain of elementwise ops on one tensor, fused into one pass: y = EXPRESSION (of v = x[i]). FUNCTIONS holds one
// GLSL function per fused node, generated from the op table in kernels/elementwise.cpp (device_fusions.cpp builds
// the chain; constant operands are baked in as literals).
#version 450
#extension GL_GOOGLE_include_directive : require
#include "storage.glsl"
layout(local_size_x = LOCAL_SIZE_X) in;
layout(std430, binding = 0) readonly buffer Input { SFLOAT x[]; };
layout(std430, binding = 1) writeonly buffer Output { SFLOAT y[]; };
layout(push_constant) uniform Params {
  uint count;
  uint rowStride;
} p;

#include "elementwise_math.glsl"

FUNCTIONS

void main() {
  uint i = gl_GlobalInvocationID.x + gl_GlobalInvocationID.y * p.rowStride;
  if (i >= p.count) return;
  float v = float(x[i]);
  y[i] = SFLOAT(EXPRESSION);
}
