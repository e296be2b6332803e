// out = cond ? x : y with broadcasting; cond is bool (one byte per element, read from 32-bit words).
#version 450
#extension GL_GOOGLE_include_directive : require
#include "storage.glsl"
layout(local_size_x = LOCAL_SIZE_X) in;
layout(std430, binding = 0) readonly buffer Cond { uint cond[]; };
layout(std430, binding = 1) readonly buffer InputX { SFLOAT x[]; };
layout(std430, binding = 2) readonly buffer InputY { SFLOAT y[]; };
layout(std430, binding = 3) writeonly buffer Output { SFLOAT o[]; };
layout(push_constant) uniform Params {
  uint count;
  uint rowStride;
  uint rank;
  uint dims[6];
  uint stridesC[6];
  uint stridesX[6];
  uint stridesY[6];
} p;

void main() {
  uint i = gl_GlobalInvocationID.x + gl_GlobalInvocationID.y * p.rowStride;
  if (i >= p.count) return;
  uint ic = 0, ix = 0, iy = 0, rest = i;
  for (int d = int(p.rank) - 1; d >= 0; --d) {
    uint coord = rest % p.dims[d];
    rest /= p.dims[d];
    ic += coord * p.stridesC[d];
    ix += coord * p.stridesX[d];
    iy += coord * p.stridesY[d];
  }
  bool c = ((cond[ic >> 2] >> ((ic & 3u) * 8u)) & 0xffu) != 0u;
  o[i] = c ? x[ix] : y[iy];
}
