// MatMulInteger, and QLinearMatMul's accumulation, on packed 8-bit operands (quantize_math.glsl):
// y = sum_k (A[row, k] - a_zero[row]) * (B[k, col] - b_zero[col]) in int32, batches broadcast numpy-style (a batch
// stride of 0 repeats an operand). Each invocation computes a 4 x 4 tile of y, so each unpacked byte serves four
// products (engine/src/ep/vulkan/kernels/integer_ops.cpp; requantize.comp turns QLinearMatMul's int32 into 8-bit).
#version 450
#extension GL_GOOGLE_include_directive : require
#include "quantize_math.glsl"
layout(local_size_x = LOCAL_SIZE_X) in;
layout(std430, binding = 0) readonly buffer A { uint a[]; };
layout(std430, binding = 1) readonly buffer B { uint b[]; };
layout(std430, binding = 2) readonly buffer AZero { uint aZero[]; };
layout(std430, binding = 3) readonly buffer BZero { uint bZero[]; };
layout(std430, binding = 4) writeonly buffer Y { int y[]; };
layout(push_constant) uniform Params {
  uint tiles;  // batches * ceil(M / 4) * ceil(N / 4)
  uint rowStride;
  uint M, N, K;
  uint batchRank;
  uint batchDims[4];
  uint aBatch[4];  // element strides of A's and B's batch dims (0: broadcast)
  uint bBatch[4];
  uint aZeroCount;  // 0 (none), 1 (per tensor) or M (per row)
  uint bZeroCount;  // 0, 1 or N (per column)
} p;

const bool kASigned = A_SIGNED != 0, kBSigned = B_SIGNED != 0;

void main() {
  uint t = gl_GlobalInvocationID.x + gl_GlobalInvocationID.y * p.rowStride;
  if (t >= p.tiles) return;
  uint nBlocks = (p.N + 3u) / 4u, mBlocks = (p.M + 3u) / 4u;
  uint col0 = t % nBlocks * 4u;
  t /= nBlocks;
  uint row0 = t % mBlocks * 4u, batch = t / mBlocks;
  uint rest = batch, aOff = 0u, bOff = 0u;
  for (int d = int(p.batchRank) - 1; d >= 0; --d) {
    uint coord = rest % p.batchDims[d];
    rest /= p.batchDims[d];
    aOff += coord * p.aBatch[d];
    bOff += coord * p.bBatch[d];
  }
  // Rows and columns past the edge repeat the last one (computed, never written).
  uint aRow[4], bCol[4];
  int az[4], bz[4], acc[4][4];
  for (uint r = 0u; r < 4u; ++r) {
    uint row = min(row0 + r, p.M - 1u), col = min(col0 + r, p.N - 1u);
    aRow[r] = aOff + row * p.K;
    bCol[r] = bOff + col;
    az[r] = p.aZeroCount == 0u ? 0 : LOAD_Q(aZero, p.aZeroCount == 1u ? 0u : row, kASigned);
    bz[r] = p.bZeroCount == 0u ? 0 : LOAD_Q(bZero, p.bZeroCount == 1u ? 0u : col, kBSigned);
    for (uint c = 0u; c < 4u; ++c) acc[r][c] = 0;
  }
  for (uint k = 0u; k < p.K; ++k) {
    int da[4], db[4];
    for (uint r = 0u; r < 4u; ++r) {
      da[r] = LOAD_Q(a, aRow[r] + k, kASigned) - az[r];
      db[r] = LOAD_Q(b, bCol[r] + k * p.N, kBSigned) - bz[r];
    }
    for (uint r = 0u; r < 4u; ++r) {
      for (uint c = 0u; c < 4u; ++c) acc[r][c] += da[r] * db[c];
    }
  }
  uint at = batch * p.M * p.N;
  for (uint r = 0u; r < 4u && row0 + r < p.M; ++r) {
    for (uint c = 0u; c < 4u && col0 + c < p.N; ++c) y[at + (row0 + r) * p.N + col0 + c] = acc[r][c];
  }
}
