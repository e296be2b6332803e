// com.microsoft MatMulNBits (engine/src/ep/vulkan/kernels/matmul_nbits.cpp): Y[m, n] = sum_k A[m, k] * W[n, k]
// (+ bias[n]), W dequantized here from B's packed codes, never stored: B is [N, kBlocks, blob] bytes, read as uint
// words (a block's blob is a whole number of words for bits 2/4/8 and blocks >= 16, so each word holds 32 / bits
// codes of one block, low bits first); code q of block blk of row n is (q - zeroPoint[n, blk]) * scale[n, blk].
// Variants:
//   DOT (decode, M <= DOT_ROWS): one workgroup per column n; its invocations split the words of B's row n, so B is
//     read once, coalesced, for all rows of A; partial sums meet through subgroupAdd / shared memory. With
//     SUBGROUP_COLS (devices with subgroup arithmetic) one subgroup per column instead: no barriers, fewer groups.
//   TILE (prefill): each invocation computes a 4 x 4 tile of Y; each decoded code serves four rows of A.
//   QUANTIZE_A (accuracy_level 4): one invocation per (row, block) of A rounds it to int8 steps of the block's
//     largest magnitude / 127, as onnxruntime's CPU kernel (MLAS) does, into a float32 copy the product reads.
// BITS: 2, 4 or 8. ZP_MODE: 0 no zero points (2^(bits - 1)), 1 uint8 packed like B (zpBytes per row), 2 of A's float type.
// A_FLOAT32: A is the float32 copy from QUANTIZE_A (whatever A's own storage type).
#version 450
#extension GL_GOOGLE_include_directive : require
#include "storage.glsl"
#if HAS_SUBGROUP_ARITHMETIC
#extension GL_KHR_shader_subgroup_arithmetic : enable
#endif
layout(local_size_x = LOCAL_SIZE_X) in;

#if QUANTIZE_A
layout(std430, binding = 0) readonly buffer Input { SFLOAT a[]; };
layout(std430, binding = 1) writeonly buffer Rounded { float rounded[]; };
layout(push_constant) uniform Params {
  uint M, K, blockSize, kBlocks;
  uint rowStride;
} p;

void main() {
  uint i = gl_GlobalInvocationID.x + gl_GlobalInvocationID.y * p.rowStride;
  if (i >= p.M * p.kBlocks) return;
  uint row = i / p.kBlocks, blk = i % p.kBlocks;
  uint begin = row * p.K + blk * p.blockSize, end = row * p.K + min(p.K, (blk + 1u) * p.blockSize);
  float amax = 0.0;
  for (uint k = begin; k < end; ++k) amax = max(amax, abs(float(a[k])));
  // MLAS multiplies by 127 / amax (not 1 / scale): the two differ in the last bit, which moves values on a tie.
  float scale = amax / 127.0, inverse = amax != 0.0 ? 127.0 / amax : 0.0;
  for (uint k = begin; k < end; ++k) rounded[k] = roundEven(float(a[k]) * inverse) * scale;
}

#else  // DOT / TILE

#if A_FLOAT32
layout(std430, binding = 0) readonly buffer A { float a[]; };
#else
layout(std430, binding = 0) readonly buffer A { SFLOAT a[]; };
#endif
layout(std430, binding = 1) readonly buffer B { uint b[]; };
layout(std430, binding = 2) readonly buffer Scales { SFLOAT scales[]; };
#if ZP_MODE == 1
layout(std430, binding = 3) readonly buffer ZeroPoints { uint zp[]; };
#else
layout(std430, binding = 3) readonly buffer ZeroPoints { SFLOAT zp[]; };  // bound to Scales with ZP_MODE 0
#endif
layout(std430, binding = 4) readonly buffer Bias { SFLOAT bias[]; };      // bound to Scales without HAS_BIAS
layout(std430, binding = 5) writeonly buffer Y { SFLOAT y[]; };
layout(push_constant) uniform Params {
  uint M, N, K;
  uint blockSize, kBlocks;
  uint wordsPerBlock;  // blockSize * bits / 32
  uint zpBytes;        // ZP_MODE 1: bytes of packed zero points per row of B
  uint rowStride;      // DOT: workgroups per y row; TILE: invocations per y row
  uint tiles;          // TILE: ceil(M / 4) * ceil(N / 4)
  uint colsPerGroup;   // DOT with SUBGROUP_COLS: columns per workgroup (a subgroup each)
} p;

// Bits per code as a constant, so the per-word loops over 32 / kBits codes unroll with constant shifts.
const uint kBits = BITS, kCodesPerWord = 32u / kBits, kMask = (1u << kBits) - 1u;

float zeroPoint(uint n, uint blk) {
#if ZP_MODE == 0
  return float(1u << (kBits - 1u));
#elif ZP_MODE == 1
  uint bit = blk * kBits, byteIndex = n * p.zpBytes + bit / 8u;
  return float((zp[byteIndex >> 2u] >> ((byteIndex & 3u) * 8u + bit % 8u)) & kMask);
#else
  return float(zp[n * p.kBlocks + blk]);
#endif
}

float finish(float sum, uint n) {
#if HAS_BIAS
  sum += float(bias[n]);
#endif
  return sum;
}

#if DOT
const uint kRows = DOT_ROWS;
#if !SUBGROUP_COLS
shared float partial[LOCAL_SIZE_X];

// Sum of `v` over the workgroup, returned to invocation 0.
float groupSum(float v) {
  uint tid = gl_LocalInvocationID.x;
#if HAS_SUBGROUP_ARITHMETIC
  v = subgroupAdd(v);
  if (subgroupElect()) partial[gl_SubgroupID] = v;
  uint count = gl_NumSubgroups;
#else
  partial[tid] = v;
  uint count = LOCAL_SIZE_X;
#endif
  barrier();
  // count need not be a power of two (subgroups): fold the upper half onto the lower, rounding up.
  while (count > 1u) {
    uint upper = (count + 1u) / 2u;
    if (tid < count - upper) partial[tid] += partial[tid + upper];
    barrier();
    count = upper;
  }
  float result = partial[0];
  barrier();
  return result;
}
#endif

// Column n's products with rows 0..M-1 of A from words first, first + step, ... of B's row n (partial sums).
void dotColumn(uint n, uint first, uint step, inout float acc[kRows]) {
  uint wordsPerRow = p.kBlocks * p.wordsPerBlock;
  for (uint r = 0u; r < kRows; ++r) acc[r] = 0.0;
  for (uint w = first; w < wordsPerRow; w += step) {
    uint blk = w / p.wordsPerBlock;
    uint word = b[n * wordsPerRow + w];
    float s = float(scales[n * p.kBlocks + blk]), z = zeroPoint(n, blk);
    uint k0 = blk * p.blockSize + (w % p.wordsPerBlock) * kCodesPerWord;
    uint count = min(kCodesPerWord, p.K - min(p.K, k0));  // codes past K (padding of the last block) are left out
    for (uint r = 0u; r < kRows; ++r) {
      if (r >= p.M) break;
      uint base = r * p.K + k0;
      float dot = 0.0;
      // q - z is exact in float; the scale multiplies once per word.
      if (count == kCodesPerWord) {
        for (uint j = 0u; j < kCodesPerWord; ++j) dot += float(a[base + j]) * (float((word >> (j * kBits)) & kMask) - z);
      } else {
        for (uint j = 0u; j < count; ++j) dot += float(a[base + j]) * (float((word >> (j * kBits)) & kMask) - z);
      }
      acc[r] += s * dot;
    }
  }
}

void main() {
  uint group = gl_WorkGroupID.x + gl_WorkGroupID.y * p.rowStride;
  float acc[kRows];
#if SUBGROUP_COLS
  // Each subgroup takes columns of this workgroup's block in turn (robust to any actual subgroup size); no barriers.
  uint begin = group * p.colsPerGroup, end = min(begin + p.colsPerGroup, p.N);
  for (uint n = begin + gl_SubgroupID; n < end; n += gl_NumSubgroups) {
    dotColumn(n, gl_SubgroupInvocationID, gl_SubgroupSize, acc);
    for (uint r = 0u; r < kRows; ++r) {
      if (r >= p.M) break;
      float sum = subgroupAdd(acc[r]);
      if (subgroupElect()) y[r * p.N + n] = SFLOAT(finish(sum, n));
    }
  }
#else
  uint n = group;
  if (n >= p.N) return;  // the whole workgroup leaves together
  dotColumn(n, gl_LocalInvocationID.x, LOCAL_SIZE_X, acc);
  for (uint r = 0u; r < kRows; ++r) {
    if (r >= p.M) break;  // uniform over the workgroup
    float sum = groupSum(acc[r]);
    if (gl_LocalInvocationID.x == 0u) y[r * p.N + n] = SFLOAT(finish(sum, n));
  }
#endif
}

#else  // TILE

void main() {
  uint t = gl_GlobalInvocationID.x + gl_GlobalInvocationID.y * p.rowStride;
  if (t >= p.tiles) return;
  uint nTiles = (p.N + 3u) / 4u;
  uint col0 = t % nTiles * 4u, row0 = t / nTiles * 4u;
  uint wordsPerRow = p.kBlocks * p.wordsPerBlock;
  // Rows and columns past the edge repeat the last one (computed, never written).
  uint aRow[4], bRow[4], col[4];
  float acc[4][4];
  for (uint i = 0u; i < 4u; ++i) {
    aRow[i] = min(row0 + i, p.M - 1u) * p.K;
    col[i] = min(col0 + i, p.N - 1u);
    bRow[i] = col[i] * wordsPerRow;
    for (uint c = 0u; c < 4u; ++c) acc[i][c] = 0.0;
  }
  for (uint w = 0u; w < wordsPerRow; ++w) {
    uint blk = w / p.wordsPerBlock;
    uint k0 = blk * p.blockSize + (w % p.wordsPerBlock) * kCodesPerWord;
    uint count = min(kCodesPerWord, p.K - min(p.K, k0));
    uint word[4];
    float s[4], z[4], part[4][4];
    for (uint c = 0u; c < 4u; ++c) {
      word[c] = b[bRow[c] + w];
      s[c] = float(scales[col[c] * p.kBlocks + blk]);
      z[c] = zeroPoint(col[c], blk);
      for (uint r = 0u; r < 4u; ++r) part[r][c] = 0.0;
    }
    for (uint j = 0u; j < count; ++j) {
      float av[4], d[4];
      for (uint r = 0u; r < 4u; ++r) av[r] = float(a[aRow[r] + k0 + j]);
      for (uint c = 0u; c < 4u; ++c) d[c] = float((word[c] >> (j * kBits)) & kMask) - z[c];
      for (uint r = 0u; r < 4u; ++r) {
        for (uint c = 0u; c < 4u; ++c) part[r][c] += av[r] * d[c];
      }
    }
    for (uint r = 0u; r < 4u; ++r) {
      for (uint c = 0u; c < 4u; ++c) acc[r][c] += s[c] * part[r][c];
    }
  }
  for (uint r = 0u; r < 4u; ++r) {
    if (row0 + r >= p.M) break;
    for (uint c = 0u; c < 4u; ++c) {
      if (col0 + c < p.N) y[(row0 + r) * p.N + col0 + c] = SFLOAT(finish(acc[r][c], col0 + c));
    }
  }
}
#endif  // TILE
#endif  // QUANTIZE_A
