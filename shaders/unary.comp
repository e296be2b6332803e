// y = OP(x) elementwise (OP(x + bias) with BIAS). OP(v) comes from the variant (see engine/src/ep/vulkan/kernels/elementwise.cpp), with
// the op's float attributes in p.alpha / p.beta / p.gamma.
#version 450
#extension GL_GOOGLE_include_directive : require
#include "storage.glsl"
layout(local_size_x = LOCAL_SIZE_X) in;
layout(std430, binding = 0) readonly buffer Input { SFLOAT x[]; };
#if BIAS  // v = x + bias[i % biasCount]: a bias along the last axis added first (the contrib Gelus)
layout(std430, binding = 1) readonly buffer Bias { SFLOAT bias[]; };
layout(std430, binding = 2) writeonly buffer Output { SFLOAT y[]; };
#else
layout(std430, binding = 1) writeonly buffer Output { SFLOAT y[]; };
#endif
layout(push_constant) uniform Params {
  uint count;
  uint rowStride;  // invocations per row of workgroups (2D dispatch for large tensors)
  float alpha;
  float beta;
  float gamma;
#if BIAS
  uint biasCount;
#endif
} p;

#include "elementwise_math.glsl"

void main() {
  uint i = gl_GlobalInvocationID.x + gl_GlobalInvocationID.y * p.rowStride;
  if (i >= p.count) return;
  float v = float(x[i]);
#if BIAS
  v += float(bias[i % p.biasCount]);
#endif
  float alpha = p.alpha, beta = p.beta, gamma = p.gamma;
  y[i] = SFLOAT(OP(v));
}
