// Batched matrix product y = alpha * A x B (+ beta * C), for Gemm and MatMul. A and B are read through row and
// column strides (so transposes cost nothing) at per-batch offsets that support numpy batch broadcasting (a batch
// stride of 0 repeats an operand). Each invocation computes a 4 x 4 tile of y; consecutive invocations take
// consecutive column tiles, so their B loads are adjacent. HAS_C adds beta * C with broadcast strides.
// SKINNY (M <= 4: a decoder's token step, a batch-1 projection): one invocation per column of y, all M rows, so no
// invocation computes rows that do not exist (a 4 x 4 tile for M = 1 wastes 3/4 of its work) and neighbouring
// invocations read neighbouring elements of B.
#version 450
#extension GL_GOOGLE_include_directive : require
#include "storage.glsl"
layout(local_size_x = LOCAL_SIZE_X) in;
layout(std430, binding = 0) readonly buffer InputA { SFLOAT a[]; };
layout(std430, binding = 1) readonly buffer InputB { SFLOAT b[]; };
layout(std430, binding = 2) readonly buffer InputC { SFLOAT c[]; };  // a dummy binding without HAS_C
layout(std430, binding = 3) writeonly buffer Output { SFLOAT y[]; };
layout(push_constant) uniform Params {
  uint M, N, K;
  uint aRow, aCol, bRow, bCol;  // element strides of A's rows/columns (M, K) and B's (K, N)
  uint cRow, cCol;              // C's broadcast strides over (M, N)
  uint nBlocks;                 // ceil(N / 4)
  uint tiles;                   // ceil(M / 4) * nBlocks
  uint rowStride;               // invocations per row of workgroups
  uint batchRank;
  uint batchDims[4];
  uint aBatch[4];
  uint bBatch[4];
  float alpha, beta;
} p;

// Element offsets of A and B for batch `batch` (numpy broadcasting through the batch strides).
void batchOffsets(uint batch, out uint aOff, out uint bOff) {
  aOff = 0;
  bOff = 0;
  uint rest = batch;
  for (int d = int(p.batchRank) - 1; d >= 0; --d) {
    const uint coord = rest % p.batchDims[d];
    rest /= p.batchDims[d];
    aOff += coord * p.aBatch[d];
    bOff += coord * p.bBatch[d];
  }
}

#if SKINNY
void main() {
  const uint j = gl_GlobalInvocationID.x + gl_GlobalInvocationID.y * p.rowStride;
  if (j >= p.N) return;
  const uint batch = gl_GlobalInvocationID.z;
  uint aOff, bOff;
  batchOffsets(batch, aOff, bOff);
  const uint bIndex = bOff + j * p.bCol;
  vec4 acc = vec4(0.0);
  for (uint k = 0; k < p.K; ++k) {
    const float bv = float(b[bIndex + k * p.bRow]);
    const uint ak = aOff + k * p.aCol;
    for (uint t = 0; t < p.M; ++t) acc[t] += float(a[ak + t * p.aRow]) * bv;
  }
  const uint yBase = batch * p.M * p.N;
  for (uint t = 0; t < p.M; ++t) {
    float v = p.alpha * acc[t];
#if HAS_C
    v += p.beta * float(c[t * p.cRow + j * p.cCol]);
#endif
    y[yBase + t * p.N + j] = SFLOAT(v);
  }
}
#else
void main() {
  const uint tile = gl_GlobalInvocationID.x + gl_GlobalInvocationID.y * p.rowStride;
  if (tile >= p.tiles) return;
  const uint batch = gl_GlobalInvocationID.z;
  uint aOff, bOff;
  batchOffsets(batch, aOff, bOff);
  const uint i0 = tile / p.nBlocks * 4u, j0 = tile % p.nBlocks * 4u;
  uint aIndex[4], bIndex[4];
  for (uint t = 0; t < 4u; ++t) {
    aIndex[t] = aOff + min(i0 + t, p.M - 1u) * p.aRow;  // clamped rows/columns are computed, not stored
    bIndex[t] = bOff + min(j0 + t, p.N - 1u) * p.bCol;
  }
  vec4 acc[4] = vec4[4](vec4(0.0), vec4(0.0), vec4(0.0), vec4(0.0));
  for (uint k = 0; k < p.K; ++k) {
    const uint ak = k * p.aCol, bk = k * p.bRow;
    const vec4 bv = vec4(float(b[bIndex[0] + bk]), float(b[bIndex[1] + bk]), float(b[bIndex[2] + bk]),
                         float(b[bIndex[3] + bk]));
    for (uint t = 0; t < 4u; ++t) acc[t] += float(a[aIndex[t] + ak]) * bv;
  }
  const uint yBase = batch * p.M * p.N;
  for (uint t = 0; t < 4u; ++t) {
    const uint i = i0 + t;
    if (i >= p.M) break;
    for (uint u = 0; u < 4u; ++u) {
      const uint j = j0 + u;
      if (j >= p.N) break;
      float v = p.alpha * acc[t][u];
#if HAS_C
      v += p.beta * float(c[i * p.cRow + j * p.cCol]);
#endif
      y[yBase + i * p.N + j] = SFLOAT(v);
    }
  }
}
#endif
