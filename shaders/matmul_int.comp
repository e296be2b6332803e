// MatMulInteger (int32 y) and QLinearMatMul (REQUANT: 8-bit y) on packed 8-bit operands (quantize_math.glsl):
// acc = sum_k (A[row, k] - a_zero[row]) * (B[k, col] - b_zero[col]) in int32, batches broadcast numpy-style (a batch
// stride of 0 repeats an operand). REQUANT writes saturate(round(float(acc) * multiplier[row][col]) + y_zero[row]),
// the multipliers computed on the host as the CPU EP computes them (engine/src/ep/vulkan/kernels/integer_ops.cpp).
// Each invocation computes four consecutive output elements (one 32-bit word of an 8-bit y).
#version 450
#extension GL_GOOGLE_include_directive : require
#include "quantize_math.glsl"
layout(local_size_x = LOCAL_SIZE_X) in;
layout(std430, binding = 0) readonly buffer A { uint a[]; };
layout(std430, binding = 1) readonly buffer B { uint b[]; };
layout(std430, binding = 2) readonly buffer AZero { uint aZero[]; };
layout(std430, binding = 3) readonly buffer BZero { uint bZero[]; };
#if REQUANT
layout(std430, binding = 4) readonly buffer Multiplier { float multiplier[]; };
layout(std430, binding = 5) readonly buffer YZero { uint yZero[]; };
layout(std430, binding = 6) writeonly buffer Y { uint y[]; };
#else
layout(std430, binding = 4) writeonly buffer Y { int y[]; };
#endif
layout(push_constant) uniform Params {
  uint count;  // output elements
  uint rowStride;
  uint M, N, K;
  uint batchRank;
  uint batchDims[4];
  uint aBatch[4];  // element strides of A's and B's batch dims (0: broadcast)
  uint bBatch[4];
  uint aZeroCount;  // 0 (none), 1 (per tensor) or M (per row)
  uint bZeroCount;  // 0, 1 or N (per column)
  uint multRows;    // REQUANT: the multiplier table is [multRows][multCols], 1 or M by 1 or N
  uint multCols;
  uint yZeroCount;  // REQUANT: 0, 1 or M
} p;

const bool kASigned = A_SIGNED != 0, kBSigned = B_SIGNED != 0, kYSigned = Y_SIGNED != 0;

// The int32 accumulator of output element e, with its row and column.
int product(uint e, out uint row, out uint col) {
  col = e % p.N;
  uint t = e / p.N;
  row = t % p.M;
  uint rest = t / p.M, aOff = 0u, bOff = 0u;
  for (int d = int(p.batchRank) - 1; d >= 0; --d) {
    uint coord = rest % p.batchDims[d];
    rest /= p.batchDims[d];
    aOff += coord * p.aBatch[d];
    bOff += coord * p.bBatch[d];
  }
  int az = p.aZeroCount == 0u ? 0 : LOAD_Q(aZero, p.aZeroCount == 1u ? 0u : row, kASigned);
  int bz = p.bZeroCount == 0u ? 0 : LOAD_Q(bZero, p.bZeroCount == 1u ? 0u : col, kBSigned);
  uint ai = aOff + row * p.K, bi = bOff + col;
  int acc = 0;
  for (uint k = 0u; k < p.K; ++k, ++ai, bi += p.N) {
    acc += (LOAD_Q(a, ai, kASigned) - az) * (LOAD_Q(b, bi, kBSigned) - bz);
  }
  return acc;
}

void main() {
  uint word = gl_GlobalInvocationID.x + gl_GlobalInvocationID.y * p.rowStride;
  uint first = word * 4u;
  if (first >= p.count) return;
  uint last = min(first + 4u, p.count);
#if REQUANT
  uint packed = 0u;
  for (uint e = first; e < last; ++e) {
    uint row, col;
    int acc = product(e, row, col);
    float m = multiplier[(p.multRows == 1u ? 0u : row) * p.multCols + (p.multCols == 1u ? 0u : col)];
    int zp = p.yZeroCount == 0u ? 0 : LOAD_Q(yZero, p.yZeroCount == 1u ? 0u : row, kYSigned);
    packed |= (uint(saturateRounded(float(acc) * m, zp, kYSigned)) & 0xFFu) << ((e - first) * 8u);
  }
  y[word] = packed;
#else
  for (uint e = first; e < last; ++e) {
    uint row, col;
    y[e] = product(e, row, col);
  }
#endif
}
