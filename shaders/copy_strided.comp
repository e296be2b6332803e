// dst[dstOffset + sum(c_d * dstStrides_d)] = src[srcOffset + sum(c_d * srcStrides_d)] over the coordinates c
// of `dims`. One shader serves Transpose, Slice (negative strides), Expand (stride 0), Concat (a strided
// destination), DepthToSpace and SpaceToDepth (see engine/src/ep/vulkan/kernels/data_movement.cpp). Elements
// are moved as raw 32-bit words (WORDS 1: float32/int32), word pairs (WORDS 2: int64), 16-bit halves
// (ELEM16 1: float16) or bytes (ELEM8 1: uint8/int8, needs 8-bit storage). With TILE the source
// coordinate wraps: c_d % srcDims_d.
#version 450
#if ELEM16  // 16-bit elements (float16): WORDS is ignored
#extension GL_EXT_shader_16bit_storage : require
#elif ELEM8  // 8-bit elements (uint8/int8): WORDS is ignored
#extension GL_EXT_shader_8bit_storage : require
#endif
layout(local_size_x = LOCAL_SIZE_X) in;
#if ELEM16
#define ELEM uint16_t
#elif ELEM8
#define ELEM uint8_t
#elif WORDS == 2
#define ELEM uvec2
#else
#define ELEM uint
#endif
layout(std430, binding = 0) readonly buffer Input { ELEM src[]; };
layout(std430, binding = 1) writeonly buffer Output { ELEM dst[]; };
layout(push_constant) uniform Params {
  uint count;
  uint rowStride;
  uint rank;
  int srcOffset;
  int dstOffset;
  uint dims[6];       // innermost last
  int srcStrides[6];  // may be 0 (broadcast) or negative (reversed slice)
  int dstStrides[6];
  uint srcDims[6];    // TILE only
} p;

// Each invocation moves CHUNK consecutive output elements: the coordinates are decomposed (integer division,
// slow on CPU drivers) once per chunk and once per innermost row; within a row the offsets just advance.
void main() {
  uint first = (gl_GlobalInvocationID.x + gl_GlobalInvocationID.y * p.rowStride) * CHUNK;
  int last = int(p.rank) - 1;
  uint n = last >= 0 ? p.dims[last] : 1u;
  int s = 0, d = 0;
  uint c = n;  // innermost coordinate; n forces a decomposition
#if TILE
  uint sc = 0u, sn = last >= 0 ? p.srcDims[last] : 1u;
#endif
  for (uint e = 0u; e < CHUNK; ++e) {
    uint i = first + e;
    if (i >= p.count) return;
    if (c == n) {
      s = p.srcOffset;
      d = p.dstOffset;
      uint rest = i;
      for (int k = last; k >= 0; --k) {
        uint ck = rest % p.dims[k];
        rest /= p.dims[k];
        if (k == last) c = ck;
#if TILE
        uint sk = ck % p.srcDims[k];
        if (k == last) sc = sk;
        s += int(sk) * p.srcStrides[k];
#else
        s += int(ck) * p.srcStrides[k];
#endif
        d += int(ck) * p.dstStrides[k];
      }
    }
    dst[d] = src[s];
    if (last < 0) return;
    ++c;
    d += p.dstStrides[last];
#if TILE
    if (++sc == sn) {
      sc = 0u;
      s -= int(sn - 1u) * p.srcStrides[last];
    } else {
      s += p.srcStrides[last];
    }
#else
    s += p.srcStrides[last];
#endif
  }
}
