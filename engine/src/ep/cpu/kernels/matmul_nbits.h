// Private to the MatMulNBits kernel (matmul_nbits.cpp): the block-quantized weight layout of onnxruntime's
// com.microsoft MatMulNBits and the two ways the kernel multiplies by it: a fused dequantize-and-dot for a few rows
// of A (decode, memory-bound: B is read once, packed) and a dequantized panel of B for a GEMM (prefill).
#pragma once

#include <cstdint>
#include <vector>

namespace kiln::cpu::nbits {

// B is [N, kBlocks, blobSize] bytes: row n holds K codes of `bits` bits, low bits first, in blocks of blockSize
// codes (the last block padded); code q of block b dequantizes to (q - zeroPoint[n, b]) * scale[n, b].
struct Layout {
  int64_t K = 0, N = 0, bits = 4, blockSize = 32;
  int64_t kBlocks = 0, blobSize = 0;
  int64_t paddedK() const { return kBlocks * blockSize; }
  // Bytes of B handled as one unit by the dot kernels: 8, or the whole block where a block is smaller (2-bit codes
  // in blocks of 16).
  int64_t chunkBytes() const { return blobSize < 8 ? blobSize : 8; }
};

// B's per-block constants in float, [N * kBlocks] each.
struct BlockParams {
  std::vector<float> scales;
  std::vector<float> scaledZeroPoints;  // scale * zero point: the dot kernel subtracts it times the block's A sum
  std::vector<float> zeroPoints;
};

// One row of A ready for the dot kernel: `permuted` (paddedK floats) reorders each chunk's values plane by plane
// (the codes in bits [p*bits, (p+1)*bits) of each byte, then the next plane) so that a plane of a chunk of B meets
// contiguous A values; the padding is zeros. `blockSums` (kBlocks) holds each block's sum of A.
void prepareActivationRow(const Layout& l, const float* a, float* permuted, float* blockSums);

// y[n - n0] = sum_k a[k] * W[n, k] for n in [n0, n1), with `permuted` and `blockSums` from prepareActivationRow and
// W the dequantized B.
void dotRows(const Layout& l, const uint8_t* b, const BlockParams& p, const float* permuted, const float* blockSums,
             int64_t n0, int64_t n1, float* y);

// Rows [n0, n1) of W, dequantized into `out` ([n1 - n0, paddedK], row-major; the padding holds dequantized
// padding codes, which callers leave out of their products).
void dequantizeRows(const Layout& l, const uint8_t* b, const BlockParams& p, int64_t n0, int64_t n1, float* out);

// accuracy_level 4 on few rows (matmul_nbits_int8.cpp): A as int8 codes with one scale per block, multiplied by B's
// codes in integers (exact sums, as MLAS does), where the CPU and layout allow it: AVX2, 4-bit codes, blocks of at
// least 32. An AVX-512 VNNI twin gives the AVX2 loop's results bit for bit.
bool int8DotSupported(const Layout& l);
// Length of a row of int8 codes: paddedK rounded up to 128, the codes of 64 bytes of B.
int64_t int8RowLength(const Layout& l);
// One row of A as int8 steps of each block's largest magnitude / 127 (MLAS's rounding): `codes` (int8RowLength;
// each 128 values permuted as the low nibbles of 64 bytes of B, then the high ones; zeros past K), `scales` and
// `blockSums` (sum of the dequantized steps) per block (kBlocks).
void quantizeActivationRowForDot(const Layout& l, const float* a, int8_t* codes, float* scales, float* blockSums);
// dotRows for a row from quantizeActivationRowForDot.
void dotRowsInt8(const Layout& l, const uint8_t* b, const BlockParams& p, const int8_t* codes, const float* aScales,
                 const float* blockSums, int64_t n0, int64_t n1, float* y);

// Rounds each block of `blockSize` values of a row (the last one shorter) to int8 steps of its largest magnitude
// / 127, in place: what onnxruntime's CPU kernel does to A at accuracy_level 4 (MLAS's int8 compute type).
void quantizeActivationRowInt8(float* a, int64_t K, int64_t blockSize);

}  // namespace kiln::cpu::nbits
