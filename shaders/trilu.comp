// Trilu: keeps the upper (UPPER 1) or lower (UPPER 0) triangle of every matrix in the last two dimensions, with the
// diagonal shifted by k (positive: above the main one); everything else becomes 0. Float tensors as SFLOAT; integer
// tensors (WORDS 1: int32, 2: int64) as raw 32-bit words.
#version 450
#extension GL_GOOGLE_include_directive : require
#include "storage.glsl"
layout(local_size_x = LOCAL_SIZE_X) in;
#if WORDS
layout(std430, binding = 0) readonly buffer Input { uint x[]; };
layout(std430, binding = 1) writeonly buffer Output { uint o[]; };
#else
layout(std430, binding = 0) readonly buffer Input { SFLOAT x[]; };
layout(std430, binding = 1) writeonly buffer Output { SFLOAT o[]; };
#endif
layout(push_constant) uniform Params {
  uint count;
  uint rowStride;
  uint rows;
  uint cols;
  int k;
} p;

void main() {
  uint i = gl_GlobalInvocationID.x + gl_GlobalInvocationID.y * p.rowStride;
  if (i >= p.count) return;
  int col = int(i % p.cols);
  int row = int((i / p.cols) % p.rows);
#if UPPER
  bool keep = col - row >= p.k;
#else
  bool keep = col - row <= p.k;
#endif
#if WORDS
  for (uint w = 0u; w < uint(WORDS); ++w) o[i * uint(WORDS) + w] = keep ? x[i * uint(WORDS) + w] : 0u;
#else
  o[i] = keep ? x[i] : SFLOAT(0.0);
#endif
}
