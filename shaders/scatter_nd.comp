// ScatterND (engine/src/ep/vulkan/kernels/scatter_nd.cpp). The output already holds a copy of data. One invocation
// per element t of an update slice walks every update row r in order, so repeated index tuples overwrite or combine
// exactly as the CPU EP's sequential loop does (last write wins; add/mul/max/min fold in row order). The first K
// dims of the output are addressed by row r's index tuple (int64, read as word pairs; negative counts from the
// end); a tuple out of range is skipped (the kernel refuses such indices when it can read them on the host).
// Float tensors combine as SFLOAT with COMBINE(a, b); integer tensors without a reduction move as raw words
// (WORDS 1: int32, 2: int64).
#version 450
#extension GL_GOOGLE_include_directive : require
#include "storage.glsl"
layout(local_size_x = LOCAL_SIZE_X) in;
layout(std430, binding = 0) readonly buffer Indices { ivec2 indices[]; };
#if WORDS
layout(std430, binding = 1) readonly buffer Updates { uint updates[]; };
layout(std430, binding = 2) buffer Output { uint o[]; };
#else
layout(std430, binding = 1) readonly buffer Updates { SFLOAT updates[]; };
layout(std430, binding = 2) buffer Output { SFLOAT o[]; };
#endif
layout(push_constant) uniform Params {
  uint slice;  // elements per update row
  uint rowStride;
  uint rows;   // update rows (index tuples)
  uint k;      // index tuple length
  uint dims[6];     // the output's first k dims
  uint strides[6];  // their element strides
} p;

void main() {
  uint t = gl_GlobalInvocationID.x + gl_GlobalInvocationID.y * p.rowStride;
  if (t >= p.slice) return;
  for (uint r = 0u; r < p.rows; ++r) {
    uint offset = 0u;
    bool inside = true;
    for (uint m = 0u; m < p.k; ++m) {
      int index = indices[r * p.k + m].x;
      if (index < 0) index += int(p.dims[m]);
      inside = inside && index >= 0 && index < int(p.dims[m]);
      offset += uint(max(index, 0)) * p.strides[m];
    }
    if (!inside) continue;
    uint at = offset + t, from = r * p.slice + t;
#if WORDS
    for (uint w = 0u; w < uint(WORDS); ++w) o[at * uint(WORDS) + w] = updates[from * uint(WORDS) + w];
#else
    float a = float(o[at]), b = float(updates[from]);
    o[at] = SFLOAT(COMBINE(a, b));
#endif
  }
}
