// MatMulNBits decode at accuracy_level 4 (matmul_nbits.h): A rounded to int8 per block as MLAS rounds it, multiplied
// by B's 4-bit codes in exact integer sums, each block's sum then scaled in float. B is read 64 bytes (128 codes) a
// step: AVX2 as two 32-byte halves with maddubs, the AVX-512 VNNI twin in one register with vpdpbusd. Both keep the
// same sixteen int32 partial sums per step (each the codes of 4 bytes) and the same float lanes, so they agree bit for
// bit (tests/engine/test_cpu_avx512_twins.cpp).
#include <algorithm>
#include <cmath>
#include <cstring>

#include "ep/cpu/kernels/cpu_isa.h"
#include "ep/cpu/kernels/gemm_helpers.h"
#include "ep/cpu/kernels/matmul_nbits.h"

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define KILN_NBITS_INT8 1
#define KILN_AVX512VNNI_TARGET __attribute__((target("avx2,fma,avx512f,avx512bw,avx512vnni")))
#else
#define KILN_NBITS_INT8 0
#endif

namespace kiln::cpu::nbits {
namespace {

constexpr int64_t kStepBytes = 64, kStepValues = 128;
constexpr int64_t kPrefetchBytes = 1024;

// How blocks and 64-byte steps meet: blocks of 32 and 64 codes put 4 and 2 blocks in a step, larger blocks take
// blob / 64 steps each.
int64_t blocksPerStep(const Layout& l) { return std::max<int64_t>(1, kStepBytes / l.blobSize); }
int64_t stepsPerBlock(const Layout& l) { return std::max<int64_t>(1, l.blobSize / kStepBytes); }

// Which block's scale each of a step's sixteen lanes takes (four lanes = 16 bytes of B = one block of 32 codes).
alignas(64) constexpr int32_t kLaneBlock[3][16] = {
    {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0},  // one block
    {0, 0, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1, 1, 1, 1, 1},  // two blocks of 64
    {0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2, 3, 3, 3, 3},  // four blocks of 32
};
const int32_t* laneBlocks(int64_t blocks) { return kLaneBlock[blocks == 4 ? 2 : blocks == 2 ? 1 : 0]; }

#if KILN_NBITS_INT8
// A step's per-block values of A and of B (the scales; the block sums and B's scaled zero points) in lanes
// 0..Blocks-1; with Tail, blocks past the last one read as 0. SSE loads only, so both twins inline the same code.
template <int Blocks, bool Tail>
KILN_ALWAYS_INLINE inline void stepOperands(const float* aValues, const float* bValues, int64_t blk0, int64_t kBlocks,
                                            __m128& av, __m128& bv) {
  if constexpr (Tail) {
    alignas(16) float x[4] = {0.f, 0.f, 0.f, 0.f}, y[4] = {0.f, 0.f, 0.f, 0.f};
    for (int64_t i = 0; blk0 + i < kBlocks; ++i) {
      x[i] = aValues[blk0 + i];
      y[i] = bValues[blk0 + i];
    }
    av = _mm_load_ps(x);
    bv = _mm_load_ps(y);
  } else if constexpr (Blocks == 4) {
    av = _mm_loadu_ps(aValues + blk0);
    bv = _mm_loadu_ps(bValues + blk0);
  } else if constexpr (Blocks == 2) {
    av = _mm_castpd_ps(_mm_load_sd(reinterpret_cast<const double*>(aValues + blk0)));
    bv = _mm_castpd_ps(_mm_load_sd(reinterpret_cast<const double*>(bValues + blk0)));
  } else {
    av = _mm_load_ss(aValues + blk0);
    bv = _mm_load_ss(bValues + blk0);
  }
}

// The products of A's and B's block scales; the block sums times B's scaled zero points added to `zeroSum` with an
// explicit fused multiply-add (left to itself GCC contracts a multiply and an add in one twin and not the other).
template <int Blocks, bool Tail>
KILN_AVX2_TARGET KILN_ALWAYS_INLINE inline __m128 stepScales(const float* aScales, const float* bScales,
                                                            const float* aSums, const float* bZeroTerms, int64_t blk0,
                                                            int64_t kBlocks, __m128& zeroSum) {
  __m128 av, bv;
  stepOperands<Blocks, Tail>(aSums, bZeroTerms, blk0, kBlocks, av, bv);
  zeroSum = _mm_fmadd_ps(av, bv, zeroSum);
  stepOperands<Blocks, Tail>(aScales, bScales, blk0, kBlocks, av, bv);
  return _mm_mul_ps(av, bv);
}

KILN_ALWAYS_INLINE inline float horizontalSum4(__m128 s) {
  s = _mm_add_ps(s, _mm_movehl_ps(s, s));
  return _mm_cvtss_f32(_mm_add_ss(s, _mm_shuffle_ps(s, s, 1)));
}

KILN_AVX2_TARGET inline float horizontalSum8(__m256 v) {
  __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  s = _mm_add_ps(s, _mm_movehl_ps(s, s));
  s = _mm_add_ss(s, _mm_movehdup_ps(s));
  return _mm_cvtss_f32(s);
}

// 32 bytes of B (low nibbles against aLow, high against aHigh) into eight int32 sums of 4 bytes each, exact: pair
// products stay within int16 (2 * 15 * 127, twice).
KILN_AVX2_TARGET KILN_ALWAYS_INLINE inline __m256i dot32Bytes(const uint8_t* q, __m256i aLow, __m256i aHigh) {
  const __m256i lowNibbles = _mm256_set1_epi8(0x0F), ones = _mm256_set1_epi16(1);
  const __m256i x = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(q));
  const __m256i low = _mm256_and_si256(x, lowNibbles), high = _mm256_and_si256(_mm256_srli_epi16(x, 4), lowNibbles);
  const __m256i pairs = _mm256_add_epi16(_mm256_maddubs_epi16(low, aLow), _mm256_maddubs_epi16(high, aHigh));
  return _mm256_madd_epi16(pairs, ones);
}

// Blocks [blkBegin, blkEnd) of R rows: q[r] points at block blkBegin's bytes of row r, `codes` at its A codes; the
// blocks' scaled sums go into total (low lanes: the first 32 bytes of each step, high lanes: the last 32).
template <int R, int Blocks, bool Tail>
KILN_AVX2_TARGET KILN_ALWAYS_INLINE inline void blocksInt8Avx2(const Layout& l, const uint8_t* const* q,
                                                              const float* const* bScales, const int8_t* codes,
                                                              const float* aScales, int64_t blkBegin, int64_t blkEnd,
                                                              __m256* totalLow, __m256* totalHigh,
                                                              const float* const* bZeroTerms, const float* aSums,
                                                              __m128* zeroSum) {
  constexpr int64_t blocks = Blocks;
  const int64_t stepsPerBlk = stepsPerBlock(l);
  const int32_t* lanes = laneBlocks(blocks);
  const __m256i lowIndex = _mm256_load_si256(reinterpret_cast<const __m256i*>(lanes));
  const __m256i highIndex = _mm256_load_si256(reinterpret_cast<const __m256i*>(lanes + 8));
  int64_t offset = 0;
  const int8_t* a = codes;
  for (int64_t blk0 = blkBegin; blk0 < blkEnd; blk0 += blocks) {
    __m256i accLow[R], accHigh[R];
    for (int r = 0; r < R; ++r) accLow[r] = accHigh[r] = _mm256_setzero_si256();
    for (int64_t k = 0; k < stepsPerBlk; ++k, offset += kStepBytes, a += kStepValues) {
      const __m256i aLow0 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(a));
      const __m256i aLow1 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(a + 32));
      const __m256i aHigh0 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(a + 64));
      const __m256i aHigh1 = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(a + 96));
#pragma GCC unroll 8
      for (int r = 0; r < R; ++r) {
        accLow[r] = _mm256_add_epi32(accLow[r], dot32Bytes(q[r] + offset, aLow0, aHigh0));
        accHigh[r] = _mm256_add_epi32(accHigh[r], dot32Bytes(q[r] + offset + 32, aLow1, aHigh1));
      }
    }
#pragma GCC unroll 8
    for (int r = 0; r < R; ++r) {
      const __m256 products = _mm256_castps128_ps256(
          stepScales<Blocks, Tail>(aScales, bScales[r], aSums, bZeroTerms[r], blk0, l.kBlocks, zeroSum[r]));
      totalLow[r] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(accLow[r]), _mm256_permutevar8x32_ps(products, lowIndex),
                                    totalLow[r]);
      totalHigh[r] = _mm256_fmadd_ps(_mm256_cvtepi32_ps(accHigh[r]), _mm256_permutevar8x32_ps(products, highIndex),
                                     totalHigh[r]);
    }
  }
}

template <int R, int Blocks, bool Tail>
KILN_AVX512VNNI_TARGET KILN_ALWAYS_INLINE inline void blocksInt8Avx512(const Layout& l, const uint8_t* const* q,
                                                                      const float* const* bScales,
                                                                      const int8_t* codes, const float* aScales,
                                                                      int64_t blkBegin, int64_t blkEnd,
                                                                      __m512* total, const float* const* bZeroTerms,
                                                                      const float* aSums, __m128* zeroSum) {
  // The zero-masking forms of the conversions: GCC 12 warns that the plain ones read an undefined register.
  constexpr __mmask16 kAllLanes = 0xFFFF;
  constexpr int64_t blocks = Blocks;
  const int64_t stepsPerBlk = stepsPerBlock(l);
  const __m512i laneIndex = _mm512_load_si512(laneBlocks(blocks));
  const __m512i lowNibbles = _mm512_set1_epi8(0x0F);
  int64_t offset = 0;
  const int8_t* a = codes;
  for (int64_t blk0 = blkBegin; blk0 < blkEnd; blk0 += blocks) {
    __m512i acc[R];
    for (int r = 0; r < R; ++r) acc[r] = _mm512_setzero_si512();
    for (int64_t k = 0; k < stepsPerBlk; ++k, offset += kStepBytes, a += kStepValues) {
      const __m512i aLow = _mm512_loadu_si512(a), aHigh = _mm512_loadu_si512(a + 64);
#pragma GCC unroll 8
      for (int r = 0; r < R; ++r) {
        _mm_prefetch(reinterpret_cast<const char*>(q[r] + offset + kPrefetchBytes), _MM_HINT_T0);
        const __m512i x = _mm512_loadu_si512(q[r] + offset);
        const __m512i low = _mm512_and_si512(x, lowNibbles);
        const __m512i high = _mm512_and_si512(_mm512_srli_epi16(x, 4), lowNibbles);
        acc[r] = _mm512_dpbusd_epi32(_mm512_dpbusd_epi32(acc[r], low, aLow), high, aHigh);
      }
    }
#pragma GCC unroll 8
    for (int r = 0; r < R; ++r) {
      const __m512 products = _mm512_castps128_ps512(
          stepScales<Blocks, Tail>(aScales, bScales[r], aSums, bZeroTerms[r], blk0, l.kBlocks, zeroSum[r]));
      total[r] = _mm512_fmadd_ps(_mm512_maskz_cvtepi32_ps(kAllLanes, acc[r]),
                                 _mm512_maskz_permutexvar_ps(kAllLanes, laneIndex, products), total[r]);
    }
  }
}

// The blocks that fill whole 64-byte steps straight from B, then (blocks of 32 or 64 codes only) the last partial
// step from a zero-padded copy, so no load passes B's end.
struct RowSplit {
  int64_t wholeBlocks, wholeBytes, tailBytes;
};
RowSplit splitRow(const Layout& l) {
  const int64_t blocks = blocksPerStep(l), whole = l.kBlocks / blocks * blocks;
  return {whole, whole * l.blobSize, (l.kBlocks - whole) * l.blobSize};
}

// The last partial step of R rows of B, copied into zero-padded scratch so a full step's loads stay inside it.
template <int R>
struct RowTails {
  alignas(64) uint8_t bytes[R][kStepBytes] = {};
  const uint8_t* rows[R];
  RowTails(const uint8_t* const* source, const RowSplit& split) {
    for (int r = 0; r < R; ++r) {
      std::memcpy(bytes[r], source[r] + split.wholeBytes, static_cast<size_t>(split.tailBytes));
      rows[r] = bytes[r];
    }
  }
};

// The int8 dot of R rows for Blocks blocks per step: the whole steps straight from B, then the last partial one
// from a zero-padded copy of each row's tail.
template <int R, int Blocks>
KILN_AVX2_TARGET void dotRowsInt8Avx2(const Layout& l, const uint8_t* const* rows, const float* const* bScales,
                                      const float* const* bZeroTerms, const int8_t* codes, const float* aScales,
                                      const float* aSums, float* out) {
  __m256 totalLow[R], totalHigh[R];
  __m128 zeroSum[R];
  for (int r = 0; r < R; ++r) {
    totalLow[r] = totalHigh[r] = _mm256_setzero_ps();
    zeroSum[r] = _mm_setzero_ps();
  }
  const RowSplit split = splitRow(l);
  blocksInt8Avx2<R, Blocks, false>(l, rows, bScales, codes, aScales, 0, split.wholeBlocks, totalLow, totalHigh,
                                   bZeroTerms, aSums, zeroSum);
  if (split.tailBytes > 0) {
    const RowTails<R> tails(rows, split);
    blocksInt8Avx2<R, Blocks, true>(l, tails.rows, bScales, codes + split.wholeBytes * 2, aScales, split.wholeBlocks,
                                    l.kBlocks, totalLow, totalHigh, bZeroTerms, aSums, zeroSum);
  }
  for (int r = 0; r < R; ++r) {
    out[r] = horizontalSum8(_mm256_add_ps(totalLow[r], totalHigh[r])) - horizontalSum4(zeroSum[r]);
  }
}

template <int R, int Blocks>
KILN_AVX512VNNI_TARGET void dotRowsInt8Avx512(const Layout& l, const uint8_t* const* rows,
                                              const float* const* bScales, const float* const* bZeroTerms,
                                              const int8_t* codes, const float* aScales, const float* aSums,
                                              float* out) {
  __m512 total[R];
  __m128 zeroSum[R];
  for (int r = 0; r < R; ++r) {
    total[r] = _mm512_setzero_ps();
    zeroSum[r] = _mm_setzero_ps();
  }
  const RowSplit split = splitRow(l);
  blocksInt8Avx512<R, Blocks, false>(l, rows, bScales, codes, aScales, 0, split.wholeBlocks, total, bZeroTerms, aSums,
                                     zeroSum);
  if (split.tailBytes > 0) {
    const RowTails<R> tails(rows, split);
    blocksInt8Avx512<R, Blocks, true>(l, tails.rows, bScales, codes + split.wholeBytes * 2, aScales, split.wholeBlocks,
                                      l.kBlocks, total, bZeroTerms, aSums, zeroSum);
  }
  for (int r = 0; r < R; ++r) {
    const __m256 low = _mm256_castpd_ps(_mm512_maskz_extractf64x4_pd(0xF, _mm512_castps_pd(total[r]), 0));
    const __m256 high = _mm256_castpd_ps(_mm512_maskz_extractf64x4_pd(0xF, _mm512_castps_pd(total[r]), 1));
    out[r] = horizontalSum8(_mm256_add_ps(low, high)) - horizontalSum4(zeroSum[r]);
  }
}

bool useAvx512Vnni() {
  static const bool cpuHas = __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512vnni");
  return cpuHas && cpuHasAvx512();
}

template <int R, int Blocks>
void dotRowsInt8Dispatch(bool avx512, const Layout& l, const uint8_t* const* rows, const float* const* scales,
                         const float* const* zeroTerms, const int8_t* codes, const float* aScales,
                         const float* aSums, float* out) {
  if (avx512) {
    dotRowsInt8Avx512<R, Blocks>(l, rows, scales, zeroTerms, codes, aScales, aSums, out);
  } else {
    dotRowsInt8Avx2<R, Blocks>(l, rows, scales, zeroTerms, codes, aScales, aSums, out);
  }
}

template <int Blocks>
void dotRangeInt8(const Layout& l, const uint8_t* b, const BlockParams& p, const int8_t* codes,
                  const float* aScales, const float* aSums, int64_t n0, int64_t n1, float* y) {
  constexpr int R = 4;
  const bool avx512 = useAvx512Vnni();
  const int64_t rowBytes = l.kBlocks * l.blobSize;
  int64_t n = n0;
  const uint8_t* rows[R];
  const float* scales[R];
  const float* zeroTerms[R];
  for (; n + R <= n1; n += R) {
    for (int r = 0; r < R; ++r) {
      rows[r] = b + (n + r) * rowBytes;
      scales[r] = p.scales.data() + (n + r) * l.kBlocks;
      zeroTerms[r] = p.scaledZeroPoints.data() + (n + r) * l.kBlocks;
    }
    dotRowsInt8Dispatch<R, Blocks>(avx512, l, rows, scales, zeroTerms, codes, aScales, aSums, y + (n - n0));
  }
  for (; n < n1; ++n) {
    rows[0] = b + n * rowBytes;
    scales[0] = p.scales.data() + n * l.kBlocks;
    zeroTerms[0] = p.scaledZeroPoints.data() + n * l.kBlocks;
    dotRowsInt8Dispatch<1, Blocks>(avx512, l, rows, scales, zeroTerms, codes, aScales, aSums, y + (n - n0));
  }
}
#endif

}  // namespace

bool int8DotSupported(const Layout& l) {
#if KILN_NBITS_INT8
  return cpuHasAvx2Fma() && l.bits == 4 && l.blobSize % 16 == 0;
#else
  (void)l;
  return false;
#endif
}

int64_t int8RowLength(const Layout& l) { return (l.paddedK() + kStepValues - 1) / kStepValues * kStepValues; }

void quantizeActivationRowForDot(const Layout& l, const float* a, int8_t* codes, float* scales, float* blockSums) {
  std::memset(codes, 0, static_cast<size_t>(int8RowLength(l)));
  for (int64_t blk = 0; blk < l.kBlocks; ++blk) {
    const int64_t begin = blk * l.blockSize, end = std::min(l.K, begin + l.blockSize);
    float amax = 0.f;
    for (int64_t k = begin; k < end; ++k) amax = std::max(amax, std::fabs(a[k]));
    // MLAS takes 127 / amax for the reciprocal (not 1 / scale): the two differ in the last bit, which moves values
    // that sit on a rounding tie.
    const float scale = amax / 127.f, inverse = amax != 0.f ? 127.f / amax : 0.f;
    float sum = 0.f;
    for (int64_t k = begin; k < end; ++k) {
      const float q = std::nearbyint(a[k] * inverse);
      const int64_t e0 = k - k % kStepValues;
      codes[e0 + (k - e0) % 2 * (kStepValues / 2) + (k - e0) / 2] = static_cast<int8_t>(q);
      sum += q * scale;
    }
    scales[blk] = scale;
    blockSums[blk] = sum;
  }
}

void dotRowsInt8(const Layout& l, const uint8_t* b, const BlockParams& p, const int8_t* codes, const float* aScales,
                 const float* blockSums, int64_t n0, int64_t n1, float* y) {
#if KILN_NBITS_INT8
  const int64_t blocks = blocksPerStep(l);
  if (blocks == 4) dotRangeInt8<4>(l, b, p, codes, aScales, blockSums, n0, n1, y);
  if (blocks == 2) dotRangeInt8<2>(l, b, p, codes, aScales, blockSums, n0, n1, y);
  if (blocks == 1) dotRangeInt8<1>(l, b, p, codes, aScales, blockSums, n0, n1, y);
#else
  (void)l, (void)b, (void)p, (void)codes, (void)aScales, (void)blockSums, (void)n0, (void)n1, (void)y;
#endif
}

}  // namespace kiln::cpu::nbits
