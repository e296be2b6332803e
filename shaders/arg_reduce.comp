// ArgMax (MAX 1) and ArgMin (MAX 0): the index of the extreme element along one axis, the first on ties or the last
// with select_last_index (LAST 1), comparing exactly as the CPU EP does (a NaN never wins). One invocation per
// output; the int64 index is written as two 32-bit words (no shaderInt64 needed).
#version 450
#extension GL_GOOGLE_include_directive : require
#include "storage.glsl"
layout(local_size_x = LOCAL_SIZE_X) in;
layout(std430, binding = 0) readonly buffer Input { SFLOAT x[]; };
layout(std430, binding = 1) writeonly buffer Output { uint y[]; };
layout(push_constant) uniform Params {
  uint count;     // outputs: outer * inner
  uint rowStride;
  uint axisDim;
  uint inner;     // elements after the axis
} p;

void main() {
  uint o = gl_GlobalInvocationID.x + gl_GlobalInvocationID.y * p.rowStride;
  if (o >= p.count) return;
  uint base = (o / p.inner) * p.axisDim * p.inner + o % p.inner;
  float best = float(x[base]);
  uint index = 0u;
  for (uint k = 1u; k < p.axisDim; ++k) {
    float v = float(x[base + k * p.inner]);
#if MAX
    bool better = LAST != 0 ? v >= best : v > best;
#else
    bool better = LAST != 0 ? v <= best : v < best;
#endif
    if (better) {
      best = v;
      index = k;
    }
  }
  y[2u * o] = index;
  y[2u * o + 1u] = 0u;
}
