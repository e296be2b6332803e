// The inner loops of MatMulNBits (matmul_nbits.h): dequantize-and-dot over packed B for decode, panel dequantization
// for prefill, and the int8 rounding of A that onnxruntime applies at accuracy_level 4. AVX2+FMA twins where the CPU
// has them; the scalar loops do the same sums in another order.
#include "ep/cpu/kernels/matmul_nbits.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "ep/cpu/kernels/gemm_helpers.h"

#if defined(__x86_64__) && defined(__GNUC__)
#include <immintrin.h>
#define KILN_NBITS_AVX2 1
#else
#define KILN_NBITS_AVX2 0
#endif

namespace kiln::cpu::nbits {
namespace {

int64_t valuesPerByte(const Layout& l) { return 8 / l.bits; }

// Each byte's plane-p code in place, for all bytes of `x` at once.
template <int Bits>
constexpr uint64_t kPlaneMask = Bits == 8 ? ~uint64_t{0} : Bits == 4 ? 0x0F0F0F0F0F0F0F0Full : 0x0303030303030303ull;

float dotScalar(const float* a, const float* b, int64_t n) {
  float s = 0.f;
  for (int64_t i = 0; i < n; ++i) s += a[i] * b[i];
  return s;
}

// One row of the dot product without SIMD: any chunk width (2-bit codes in blocks of 16 have 4-byte chunks).
float dotRowScalar(const Layout& l, const uint8_t* row, const float* scales, const float* permuted) {
  const int64_t v = valuesPerByte(l), w = l.chunkBytes();
  const unsigned mask = (1u << l.bits) - 1u;
  float total = 0.f;
  for (int64_t blk = 0; blk < l.kBlocks; ++blk) {
    const uint8_t* q = row + blk * l.blobSize;
    const float* a = permuted + blk * l.blockSize;
    float acc = 0.f;
    for (int64_t c = 0; c < l.blobSize; c += w) {
      for (int64_t p = 0; p < v; ++p) {
        for (int64_t j = 0; j < w; ++j) {
          acc += static_cast<float>((q[c + j] >> (p * l.bits)) & mask) * a[c * v + p * w + j];
        }
      }
    }
    total += scales[blk] * acc;
  }
  return total;
}

#if KILN_NBITS_AVX2
KILN_AVX2_TARGET inline float horizontalSum(__m256 v) {
  __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  s = _mm_add_ps(s, _mm_movehl_ps(s, s));
  s = _mm_add_ss(s, _mm_movehdup_ps(s));
  return _mm_cvtss_f32(s);
}

KILN_AVX2_TARGET float dotAvx2(const float* a, const float* b, int64_t n) {
  __m256 acc = _mm256_setzero_ps();
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) acc = _mm256_fmadd_ps(_mm256_loadu_ps(a + i), _mm256_loadu_ps(b + i), acc);
  float s = horizontalSum(acc);
  for (; i < n; ++i) s += a[i] * b[i];
  return s;
}

// R rows of B against one prepared row of A, 8-byte chunks: each A load serves R rows, each chunk's codes are split
// into planes with 64-bit integer shifts and widened eight at a time. Per block the partial dot is scaled into a
// running vector sum, so there is one horizontal sum per row.
template <int Bits, int R>
KILN_AVX2_TARGET void dotRowsAvx2(const Layout& l, const uint8_t* const* rows, const float* const* scales,
                                  const float* permuted, float* out) {
  constexpr int V = 8 / Bits;
  __m256 total[R];
  for (int r = 0; r < R; ++r) total[r] = _mm256_setzero_ps();
  for (int64_t blk = 0; blk < l.kBlocks; ++blk) {
    __m256 acc[R];
    for (int r = 0; r < R; ++r) acc[r] = _mm256_setzero_ps();
    const float* a = permuted + blk * l.blockSize;
    const int64_t offset = blk * l.blobSize;
    for (int64_t c = 0; c < l.blobSize; c += 8) {
      uint64_t x[R];
      for (int r = 0; r < R; ++r) std::memcpy(&x[r], rows[r] + offset + c, 8);
      for (int p = 0; p < V; ++p) {
        const __m256 av = _mm256_loadu_ps(a + c * V + p * 8);
        for (int r = 0; r < R; ++r) {
          const uint64_t q = (x[r] >> (p * Bits)) & kPlaneMask<Bits>;
          const __m256 wv = _mm256_cvtepi32_ps(_mm256_cvtepu8_epi32(_mm_cvtsi64_si128(static_cast<long long>(q))));
          acc[r] = _mm256_fmadd_ps(wv, av, acc[r]);
        }
      }
    }
    for (int r = 0; r < R; ++r) total[r] = _mm256_fmadd_ps(_mm256_set1_ps(scales[r][blk]), acc[r], total[r]);
  }
  for (int r = 0; r < R; ++r) out[r] = horizontalSum(total[r]);
}

template <int Bits>
KILN_AVX2_TARGET void dotRangeAvx2(const Layout& l, const uint8_t* b, const BlockParams& p, const float* permuted,
                                   int64_t n0, int64_t n1, float* y) {
  constexpr int R = 4;
  const int64_t rowBytes = l.kBlocks * l.blobSize;
  int64_t n = n0;
  for (; n + R <= n1; n += R) {
    const uint8_t* rows[R];
    const float* scales[R];
    for (int r = 0; r < R; ++r) {
      rows[r] = b + (n + r) * rowBytes;
      scales[r] = p.scales.data() + (n + r) * l.kBlocks;
    }
    dotRowsAvx2<Bits, R>(l, rows, scales, permuted, y + (n - n0));
  }
  for (; n < n1; ++n) {
    const uint8_t* row = b + n * rowBytes;
    const float* scales = p.scales.data() + n * l.kBlocks;
    dotRowsAvx2<Bits, 1>(l, &row, &scales, permuted, y + (n - n0));
  }
}

// 4-bit rows dequantized in natural order: the low and high nibble planes of 8 bytes interleave back into 16 codes.
KILN_AVX2_TARGET void dequantizeRows4Avx2(const Layout& l, const uint8_t* b, const BlockParams& p, int64_t n0,
                                          int64_t n1, float* out) {
  const int64_t rowBytes = l.kBlocks * l.blobSize, ld = l.paddedK();
  for (int64_t n = n0; n < n1; ++n) {
    float* dst = out + (n - n0) * ld;
    for (int64_t blk = 0; blk < l.kBlocks; ++blk) {
      const uint8_t* q = b + n * rowBytes + blk * l.blobSize;
      const __m256 scale = _mm256_set1_ps(p.scales[n * l.kBlocks + blk]);
      const __m256 zero = _mm256_set1_ps(p.zeroPoints[n * l.kBlocks + blk]);
      float* d = dst + blk * l.blockSize;
      for (int64_t c = 0; c < l.blobSize; c += 8) {
        uint64_t x;
        std::memcpy(&x, q + c, 8);
        const __m128i lo = _mm_cvtsi64_si128(static_cast<long long>(x & kPlaneMask<4>));
        const __m128i hi = _mm_cvtsi64_si128(static_cast<long long>((x >> 4) & kPlaneMask<4>));
        const __m128i codes = _mm_unpacklo_epi8(lo, hi);
        const __m256 f0 = _mm256_cvtepi32_ps(_mm256_cvtepu8_epi32(codes));
        const __m256 f1 = _mm256_cvtepi32_ps(_mm256_cvtepu8_epi32(_mm_srli_si128(codes, 8)));
        _mm256_storeu_ps(d + 2 * c, _mm256_mul_ps(_mm256_sub_ps(f0, zero), scale));
        _mm256_storeu_ps(d + 2 * c + 8, _mm256_mul_ps(_mm256_sub_ps(f1, zero), scale));
      }
    }
  }
}

#endif

void dequantizeRowsScalar(const Layout& l, const uint8_t* b, const BlockParams& p, int64_t n0, int64_t n1,
                          float* out) {
  const int64_t v = valuesPerByte(l), rowBytes = l.kBlocks * l.blobSize, ld = l.paddedK();
  const unsigned mask = (1u << l.bits) - 1u;
  for (int64_t n = n0; n < n1; ++n) {
    float* dst = out + (n - n0) * ld;
    for (int64_t blk = 0; blk < l.kBlocks; ++blk) {
      const uint8_t* q = b + n * rowBytes + blk * l.blobSize;
      const float scale = p.scales[n * l.kBlocks + blk], zero = p.zeroPoints[n * l.kBlocks + blk];
      float* d = dst + blk * l.blockSize;
      for (int64_t j = 0; j < l.blobSize; ++j) {
        for (int64_t k = 0; k < v; ++k) d[j * v + k] = (static_cast<float>((q[j] >> (k * l.bits)) & mask) - zero) * scale;
      }
    }
  }
}

bool useAvx2(const Layout& l) {
#if KILN_NBITS_AVX2
  return cpuHasAvx2Fma() && l.chunkBytes() == 8;
#else
  (void)l;
  return false;
#endif
}

}  // namespace

void prepareActivationRow(const Layout& l, const float* a, float* permuted, float* blockSums) {
  const int64_t v = valuesPerByte(l), w = l.chunkBytes(), chunkValues = v * w, padded = l.paddedK();
  for (int64_t e0 = 0; e0 < padded; e0 += chunkValues) {
    for (int64_t j = 0; j < w; ++j) {
      for (int64_t p = 0; p < v; ++p) {
        const int64_t k = e0 + j * v + p;
        permuted[e0 + p * w + j] = k < l.K ? a[k] : 0.f;
      }
    }
  }
  for (int64_t blk = 0; blk < l.kBlocks; ++blk) {
    const int64_t begin = blk * l.blockSize, end = std::min(l.K, begin + l.blockSize);
    float s = 0.f;
    for (int64_t k = begin; k < end; ++k) s += a[k];
    blockSums[blk] = s;
  }
}

void dotRows(const Layout& l, const uint8_t* b, const BlockParams& p, const float* permuted, const float* blockSums,
             int64_t n0, int64_t n1, float* y) {
  const int64_t rowBytes = l.kBlocks * l.blobSize;
#if KILN_NBITS_AVX2
  if (useAvx2(l)) {
    if (l.bits == 4) dotRangeAvx2<4>(l, b, p, permuted, n0, n1, y);
    if (l.bits == 8) dotRangeAvx2<8>(l, b, p, permuted, n0, n1, y);
    if (l.bits == 2) dotRangeAvx2<2>(l, b, p, permuted, n0, n1, y);
    for (int64_t n = n0; n < n1; ++n) {
      y[n - n0] -= dotAvx2(p.scaledZeroPoints.data() + n * l.kBlocks, blockSums, l.kBlocks);
    }
    return;
  }
#endif
  for (int64_t n = n0; n < n1; ++n) {
    const float* scales = p.scales.data() + n * l.kBlocks;
    y[n - n0] = dotRowScalar(l, b + n * rowBytes, scales, permuted) -
                dotScalar(p.scaledZeroPoints.data() + n * l.kBlocks, blockSums, l.kBlocks);
  }
}

void dequantizeRows(const Layout& l, const uint8_t* b, const BlockParams& p, int64_t n0, int64_t n1, float* out) {
#if KILN_NBITS_AVX2
  if (useAvx2(l) && l.bits == 4) {
    dequantizeRows4Avx2(l, b, p, n0, n1, out);
    return;
  }
#endif
  dequantizeRowsScalar(l, b, p, n0, n1, out);
}

void quantizeActivationRowInt8(float* a, int64_t K, int64_t blockSize) {
  for (int64_t begin = 0; begin < K; begin += blockSize) {
    const int64_t end = std::min(K, begin + blockSize);
    float amax = 0.f;
    for (int64_t k = begin; k < end; ++k) amax = std::max(amax, std::fabs(a[k]));
    // MLAS takes 127 / amax for the reciprocal (not 1 / scale): the two differ in the last bit, which moves values
    // that sit on a rounding tie.
    const float scale = amax / 127.f, inverse = amax != 0.f ? 127.f / amax : 0.f;
    for (int64_t k = begin; k < end; ++k) a[k] = std::nearbyint(a[k] * inverse) * scale;
  }
}

}  // namespace kiln::cpu::nbits
