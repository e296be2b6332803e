// Gather along one axis: out[o, j, k] = data[o, indices[j], k] with data viewed as [outer, axisSize, inner]
// and the indices flattened (see engine/src/ep/vulkan/kernels/gather.cpp). With ELEMENTS, GatherElements:
// out[c] = data[c with c[axis] replaced by indices[c]], out having the indices' shape. Negative indices count
// from the end; out-of-range ones are clamped rather than read out of bounds. Data moves as raw words (WORDS
// 1 or 2, 16-bit with ELEM16, 8-bit with ELEM8 for uint8/int8); INDEX64 reads int64 indices as word pairs
// (the low word holds every index a tensor can address, sign included). With ND, GatherND: output element (t, j)
// is element j of the slice that index tuple t (k indices into the dims after the batch dims) picks inside its
// batch.
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
layout(std430, binding = 0) readonly buffer Data { ELEM data[]; };
#if INDEX64
layout(std430, binding = 1) readonly buffer Indices { ivec2 indices[]; };
#define INDEX(j) indices[j].x
#else
layout(std430, binding = 1) readonly buffer Indices { int indices[]; };
#define INDEX(j) indices[j]
#endif
layout(std430, binding = 2) writeonly buffer Output { ELEM dst[]; };
#if ND
layout(push_constant) uniform Params {
  uint count;
  uint rowStride;
  uint slice;        // elements per gathered slice
  uint k;            // indices per tuple
  uint perBatch;     // tuples per batch (0: no batch dims)
  uint batchStride;  // data elements per batch
  uint dims[6];      // the k indexed dims
  uint strides[6];   // their data element strides
} p;
#elif ELEMENTS
layout(push_constant) uniform Params {
  uint count;
  uint rowStride;
  uint rank;
  uint axis;
  int axisSize;
  uint dims[6];     // indices (= output) shape
  uint strides[6];  // data element strides
} p;
#else
layout(push_constant) uniform Params {
  uint count;
  uint rowStride;
  uint inner;     // elements after the axis
  uint indexCount;
  int axisSize;
} p;
#endif

#if !ND
int wrapIndex(int index) {
  if (index < 0) index += p.axisSize;
  return clamp(index, 0, p.axisSize - 1);
}
#endif

void main() {
  uint i = gl_GlobalInvocationID.x + gl_GlobalInvocationID.y * p.rowStride;
  if (i >= p.count) return;
#if ND
  uint j = i % p.slice, t = i / p.slice;
  uint offset = (p.perBatch == 0u ? 0u : t / p.perBatch) * p.batchStride;
  for (uint m = 0u; m < p.k; ++m) {
    int dim = int(p.dims[m]);
    int index = INDEX(t * p.k + m);
    if (index < 0) index += dim;
    offset += uint(clamp(index, 0, dim - 1)) * p.strides[m];
  }
  dst[i] = data[offset + j];
#elif ELEMENTS
  uint s = 0u, rest = i;
  for (int k = int(p.rank) - 1; k >= 0; --k) {
    uint c = rest % p.dims[k];
    rest /= p.dims[k];
    s += (uint(k) == p.axis ? uint(wrapIndex(INDEX(i))) : c) * p.strides[k];
  }
  dst[i] = data[s];
#else
  uint k = i % p.inner;
  uint rest = i / p.inner;
  uint j = rest % p.indexCount;
  uint o = rest / p.indexCount;
  dst[i] = data[(o * uint(p.axisSize) + uint(wrapIndex(INDEX(j)))) * p.inner + k];
#endif
}
