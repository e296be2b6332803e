// c = OP(a, b) with ONNX (numpy) broadcasting: strides of 0 repeat an input along a dimension. BROADCAST 0: both
// inputs have the output's shape, indexed directly; 1: any rank <= 6, index decomposed by division; 2: at most 3
// collapsed dimensions laid on the dispatch grid (dims and strides innermost FIRST in this variant).
#version 450
#extension GL_GOOGLE_include_directive : require
#include "storage.glsl"
layout(local_size_x = LOCAL_SIZE_X) in;
layout(std430, binding = 0) readonly buffer InputA { SFLOAT a[]; };
layout(std430, binding = 1) readonly buffer InputB { SFLOAT b[]; };
layout(std430, binding = 2) writeonly buffer Output { SFLOAT c[]; };
layout(push_constant) uniform Params {
  uint count;
  uint rowStride;
  uint rank;
  uint dims[6];     // output shape, innermost last
  uint stridesA[6];
  uint stridesB[6];
} p;

#include "elementwise_math.glsl"

float apply(float x, float y) { return OP(x, y); }

void main() {
#if BROADCAST == 2
  // Grid: up to 3 collapsed dimensions map onto the dispatch grid (x innermost), so no index division.
  uint x = gl_GlobalInvocationID.x, y = gl_GlobalInvocationID.y, z = gl_GlobalInvocationID.z;
  if (x >= p.dims[0]) return;
  uint i = x + p.dims[0] * (y + p.dims[1] * z);
  c[i] = SFLOAT(apply(float(a[x * p.stridesA[0] + y * p.stridesA[1] + z * p.stridesA[2]]),
                      float(b[x * p.stridesB[0] + y * p.stridesB[1] + z * p.stridesB[2]])));
#else
  uint i = gl_GlobalInvocationID.x + gl_GlobalInvocationID.y * p.rowStride;
  if (i >= p.count) return;
#endif
#if BROADCAST == 1
  uint ia = 0, ib = 0, rest = i;
  for (int d = int(p.rank) - 1; d >= 0; --d) {
    uint coord = rest % p.dims[d];
    rest /= p.dims[d];
    ia += coord * p.stridesA[d];
    ib += coord * p.stridesB[d];
  }
  c[i] = SFLOAT(apply(float(a[ia]), float(b[ib])));
#elif BROADCAST == 0
  c[i] = SFLOAT(apply(float(a[i]), float(b[i])));
#endif
}
