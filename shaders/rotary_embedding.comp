// RotaryEmbedding (engine/src/ep/vulkan/kernels/rotary_embedding.cpp), ai.onnx and com.microsoft forms: one
// invocation per element of y. Element (b, s, h, i) of a head row rotates with its partner (i +- rotary / 2, or
// i ^ 1 interleaved) by the cache row of position (b, s); elements past `rotary` are copied. The row comes from
// ROWS: 0 = b * seq + s (ai.onnx without position_ids: the caches are [batch, seq, width]), 1 = positions[0] + s
// (com.microsoft's start position), 2 = positions[b * seq + s]. Positions are int64 read as word pairs (the low word
// holds every position a cache can have); rows outside the caches are clamped, never read out of bounds.
#version 450
#extension GL_GOOGLE_include_directive : require
#include "storage.glsl"
layout(local_size_x = LOCAL_SIZE_X) in;
layout(std430, binding = 0) readonly buffer Input { SFLOAT x[]; };
layout(std430, binding = 1) readonly buffer CosCache { SFLOAT cosCache[]; };
layout(std430, binding = 2) readonly buffer SinCache { SFLOAT sinCache[]; };
layout(std430, binding = 3) readonly buffer Positions { ivec2 positions[]; };  // bound to Input with ROWS 0
layout(std430, binding = 4) writeonly buffer Output { SFLOAT y[]; };
layout(push_constant) uniform Params {
  uint count;
  uint rowStride;
  uint seq;
  uint heads;
  uint headSize;
  uint rotary;
  uint batchStride;
  uint headStride;
  uint seqStride;
  uint cacheWidth;
  uint cacheRows;
  uint interleaved;
} p;

void main() {
  uint idx = gl_GlobalInvocationID.x + gl_GlobalInvocationID.y * p.rowStride;
  if (idx >= p.count) return;
  // idx walks (b, s, h, i) in that order; the element's offset follows X's layout.
  uint i = idx % p.headSize;
  uint h = (idx / p.headSize) % p.heads;
  uint s = (idx / (p.headSize * p.heads)) % p.seq;
  uint b = idx / (p.headSize * p.heads * p.seq);
  uint base = b * p.batchStride + s * p.seqStride + h * p.headStride;
  float v = float(x[base + i]);
  if (i < p.rotary) {
#if ROWS == 0
    int row = int(b * p.seq + s);
#elif ROWS == 1
    int row = positions[0].x + int(s);
#else
    int row = positions[b * p.seq + s].x;
#endif
    uint r = uint(clamp(row, 0, int(p.cacheRows) - 1)) * p.cacheWidth;
    uint half_ = p.rotary / 2u;
    bool first = p.interleaved != 0 ? (i % 2u) == 0u : i < half_;
    uint k = p.interleaved != 0 ? i / 2u : (first ? i : i - half_);
    uint partner = p.interleaved != 0 ? (first ? i + 1u : i - 1u) : (first ? i + half_ : i - half_);
    float c = float(cosCache[r + k]), sn = float(sinCache[r + k]);
    float other = float(x[base + partner]);
    v = first ? v * c - other * sn : other * sn + v * c;
  }
  y[base + i] = SFLOAT(v);
}
