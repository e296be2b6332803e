// y = OP(x) elementwise. OP(v) comes from the variant (see engine/src/ep/vulkan/kernels/elementwise.cpp), with
// the op's float attributes in p.alpha / p.beta / p.gamma.
#version 450
#extension GL_GOOGLE_include_directive : require
#include "storage.glsl"
layout(local_size_x = LOCAL_SIZE_X) in;
layout(std430, binding = 0) readonly buffer Input { SFLOAT x[]; };
layout(std430, binding = 1) writeonly buffer Output { SFLOAT y[]; };
layout(push_constant) uniform Params {
  uint count;
  uint rowStride;  // invocations per row of workgroups (2D dispatch for large tensors)
  float alpha;
  float beta;
  float gamma;
} p;

#include "elementwise_math.glsl"

void main() {
  uint i = gl_GlobalInvocationID.x + gl_GlobalInvocationID.y * p.rowStride;
  if (i >= p.count) return;
  float v = float(x[i]);
  float alpha = p.alpha, beta = p.beta, gamma = p.gamma;
  y[i] = SFLOAT(OP(v));
}
