// MatMulNBits (com.microsoft, onnxruntime's contrib operator): Y = A x dequant(B)^T (+ bias), Y [..., N] from
// A [..., K], with B [N, ceil(K / block_size), block_size * bits / 8] holding `bits`-bit codes (2, 4 or 8), low bits
// first, that dequantize per block of block_size along K as (code - zero_point) * scale.
//  - scales [N * k_blocks] or [N, k_blocks], of A's type (float or float16);
//  - zero_points either uint8 codes packed like B ([N * ceil(k_blocks * bits / 8)] or 2-D) or of A's type
//    ([N * k_blocks] or 2-D); absent = 2^(bits - 1);
//  - g_idx (act-order block indices) is refused with NOT_IMPLEMENTED; bias [N] is added last.
// As onnxruntime's CPU kernel: float16 computes in float and rounds once; accuracy_level 4 with a constant B and
// uint8 or absent zero points rounds A to int8 steps per block (MLAS's int8 compute type) before the product.
// A few rows of A (decode: up to 4, or 32 for the int8 dot of accuracy_level 4, which multiplies the codes in
// integers) take a fused dequantize-and-dot over packed B, threaded over N; more rows dequantize B one panel at a
// time into a per-thread buffer for the float GEMM, so no full float copy of B is ever kept.
#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include "ep/cpu/kernel_registry.h"
#include "ep/cpu/kernel_utils.h"
#include "ep/cpu/kernels/gemm_helpers.h"
#include "ep/cpu/kernels/half_convert.h"
#include "ep/cpu/kernels/matmul_nbits.h"

namespace kiln::cpu {
namespace {

using nbits::BlockParams;
using nbits::Layout;

// Rows of A up to which the fused dequantize-and-dot beats dequantizing B for a GEMM (B is read once per row).
constexpr int64_t kMaxDotRows = 4;
// The same for the int8 dot of accuracy_level 4, which costs less per row (K = N = 4096 on one thread: M = 16 in
// 4.2 ms against 10.3 through the GEMM, M = 32 in 10.6 against 12.9).
constexpr int64_t kMaxInt8DotRows = 32;
// Rows of B in slices of 64 (128 KiB at K = 4096 and 4 bits) stay in L2 while every row of A passes over them.
constexpr int64_t kSliceRows = 64;
// Floats per dequantized panel of B in the GEMM path (4 MiB per thread): the GEMM packs all of A again for every
// panel, so panels must be wide (M = 128, K = N = 4096 on one thread: 47 ms with 64-row panels, 28-34 with 256).
constexpr int64_t kPanelFloats = int64_t{1} << 20;

enum Input : size_t { kA = 0, kB = 1, kScales = 2, kZeroPoints = 3, kGroupIndex = 4, kBias = 5 };

const Tensor* inputIfConstant(const KernelInfo& info, size_t i) {
  const bool present = i < info.node.inputs.size() && !info.node.inputs[i].empty();
  return present && i < info.constantInputs.size() ? info.constantInputs[i] : nullptr;
}

bool hasInputAt(const KernelInfo& info, size_t i) { return i < info.node.inputs.size() && !info.node.inputs[i].empty(); }

std::vector<float> valuesAsFloat(const Tensor& t) {
  std::vector<float> out(static_cast<size_t>(t.numel()));
  if (t.dtype() == DataType::FLOAT16) {
    halvesToFloats(t.data<Float16>(), out.data(), t.numel());
  } else {
    std::copy(t.data<float>(), t.data<float>() + t.numel(), out.begin());
  }
  return out;
}

class MatMulNBitsKernel : public Kernel {
 public:
  explicit MatMulNBitsKernel(const KernelInfo& info)
      : label_(info.node.label()), accuracyLevel_(info.node.attrInt("accuracy_level", 0)), pool_(info.threadPool) {
    l_.K = info.node.attrInt("K", 0);
    l_.N = info.node.attrInt("N", 0);
    l_.bits = info.node.attrInt("bits", 4);
    l_.blockSize = info.node.attrInt("block_size", 0);
    attributeStatus_ = checkAttributes();
    if (!attributeStatus_.isOk()) return;
    l_.kBlocks = (l_.K + l_.blockSize - 1) / l_.blockSize;
    l_.blobSize = l_.blockSize * l_.bits / 8;
    // Constant weights (as real models have them): their block constants are converted to float once.
    const Tensor* b = inputIfConstant(info, kB);
    const Tensor* scales = inputIfConstant(info, kScales);
    const Tensor* zeroPoints = inputIfConstant(info, kZeroPoints);
    bConstant_ = b != nullptr;
    if (b && scales && (zeroPoints || !hasInputAt(info, kZeroPoints)) &&
        checkWeights(*b, *scales, zeroPoints, scales->dtype()).isOk()) {
      constantParams_ = blockParams(*scales, zeroPoints);
    }
  }

  Status compute(KernelContext& ctx) override {
    KILN_RETURN_IF_ERROR(attributeStatus_);
    const Tensor* a = ctx.input(kA);
    const Tensor* b = ctx.input(kB);
    const Tensor* scales = ctx.input(kScales);
    const Tensor* zeroPoints = ctx.input(kZeroPoints);
    const Tensor* bias = ctx.input(kBias);
    if (!a || !b || !scales) return fail("inputs A, B and scales are required");
    if (ctx.hasInput(kGroupIndex)) {
      return Status(StatusCode::NOT_IMPLEMENTED, label_ + ": g_idx (act-order block indices) is not supported");
    }
    if (a->dtype() != DataType::FLOAT && a->dtype() != DataType::FLOAT16) {
      return fail(std::string("A must be float or float16, got ") + dataTypeName(a->dtype()));
    }
    if (a->rank() < 1 || a->shape().back() != l_.K) {
      return fail("A's last dimension must be K = " + std::to_string(l_.K) + ", got A " + shapeToString(a->shape()));
    }
    KILN_RETURN_IF_ERROR(checkWeights(*b, *scales, zeroPoints, a->dtype()));
    if (bias && (bias->dtype() != a->dtype() || bias->shape() != Shape{l_.N})) {
      return fail("bias must be " + shapeToString(Shape{l_.N}) + " (N) of A's type, got " +
                  dataTypeName(bias->dtype()) + " " + shapeToString(bias->shape()));
    }
    Shape outShape = a->shape();
    outShape.back() = l_.N;
    Tensor& y = ctx.allocateUninitializedOutput(0, a->dtype(), outShape);
    const int64_t M = l_.K > 0 ? a->numel() / l_.K : 0;
    if (y.numel() == 0) return Status::ok();

    const BlockParams runParams = constantParams_ ? BlockParams{} : blockParams(*scales, zeroPoints);
    const BlockParams& params = constantParams_ ? *constantParams_ : runParams;
    const uint8_t* codes = b->data<uint8_t>();

    // A in float: float16 is widened; accuracy_level 4 rounds A to onnxruntime's int8 steps, as int8 codes for the
    // integer dot or else as a float copy for the float paths.
    const bool int8Activations =
        accuracyLevel_ == 4 && bConstant_ && (!zeroPoints || zeroPoints->dtype() == DataType::UINT8);
    std::vector<float> aCopy;
    const float* aData = a->dtype() == DataType::FLOAT ? a->data<float>() : nullptr;
    const bool int8Dot = int8Activations && M <= kMaxInt8DotRows && nbits::int8DotSupported(l_);
    if (!aData || (int8Activations && !int8Dot)) {
      aCopy.resize(static_cast<size_t>(a->numel()));
      if (aData) {
        std::copy(aData, aData + a->numel(), aCopy.begin());
      } else {
        halvesToFloats(a->data<Float16>(), aCopy.data(), a->numel());
      }
      if (int8Activations && !int8Dot) {
        for (int64_t m = 0; m < M; ++m) nbits::quantizeActivationRowInt8(aCopy.data() + m * l_.K, l_.K, l_.blockSize);
      }
      aData = aCopy.data();
    }
    std::vector<float> yCopy;
    float* yData = y.dtype() == DataType::FLOAT ? y.data<float>() : nullptr;
    if (!yData) {
      yCopy.resize(static_cast<size_t>(y.numel()));
      yData = yCopy.data();
    }

    if (int8Dot) {
      multiplyFewRowsInt8(codes, params, aData, M, yData);
    } else if (M <= kMaxDotRows) {
      multiplyFewRows(codes, params, aData, M, yData);
    } else {
      multiplyManyRows(codes, params, aData, M, yData);
    }
    if (bias) {
      const std::vector<float> biasValues = valuesAsFloat(*bias);
      for (int64_t m = 0; m < M; ++m) {
        float* row = yData + m * l_.N;
        for (int64_t n = 0; n < l_.N; ++n) row[n] += biasValues[n];
      }
    }
    if (y.dtype() == DataType::FLOAT16) floatsToHalves(yData, y.data<Float16>(), y.numel());
    return Status::ok();
  }

 private:
  Status checkAttributes() const {
    // The bounds keep the layout's sizes (N * k_blocks * blob) far from int64 overflow; real models are far below.
    constexpr int64_t kMaxDim = int64_t{1} << 40;
    if (l_.K <= 0 || l_.N <= 0 || l_.K > kMaxDim || l_.N > kMaxDim) {
      return fail("attributes K and N must be in [1, 2^40], got K = " + std::to_string(l_.K) +
                  ", N = " + std::to_string(l_.N));
    }
    if (l_.bits != 2 && l_.bits != 4 && l_.bits != 8) {
      return fail("bits must be 2, 4 or 8, got " + std::to_string(l_.bits));
    }
    if (l_.blockSize < 16 || l_.blockSize > (int64_t{1} << 20) || (l_.blockSize & (l_.blockSize - 1)) != 0) {
      return fail("block_size must be a power of 2 and at least 16 (at most 2^20), got " +
                  std::to_string(l_.blockSize));
    }
    return Status::ok();
  }

  // B, scales and zero points against the attributes; `aType` is A's element type (the scales' at creation).
  Status checkWeights(const Tensor& b, const Tensor& scales, const Tensor* zeroPoints, DataType aType) const {
    const Shape bShape{l_.N, l_.kBlocks, l_.blobSize};
    if (b.dtype() != DataType::UINT8 || b.shape() != bShape) {
      return fail("B must be uint8 " + shapeToString(bShape) + " (N, k_blocks, block_size * bits / 8), got " +
                  dataTypeName(b.dtype()) + " " + shapeToString(b.shape()));
    }
    const Shape perBlock1d{l_.N * l_.kBlocks}, perBlock2d{l_.N, l_.kBlocks};
    if (scales.dtype() != aType || (scales.shape() != perBlock1d && scales.shape() != perBlock2d)) {
      return fail("scales must be " + shapeToString(perBlock1d) + " or " + shapeToString(perBlock2d) + " of A's type " +
                  dataTypeName(aType) + ", got " + dataTypeName(scales.dtype()) + " " + shapeToString(scales.shape()));
    }
    if (!zeroPoints) return Status::ok();
    if (zeroPoints->dtype() == DataType::UINT8) {
      const int64_t bytes = (l_.kBlocks * l_.bits + 7) / 8;
      if (zeroPoints->shape() != Shape{l_.N * bytes} && zeroPoints->shape() != Shape{l_.N, bytes}) {
        return fail("uint8 zero_points must be " + shapeToString(Shape{l_.N * bytes}) + " or " +
                    shapeToString(Shape{l_.N, bytes}) + " (packed like B), got " + shapeToString(zeroPoints->shape()));
      }
    } else if (zeroPoints->dtype() != aType ||
               (zeroPoints->shape() != perBlock1d && zeroPoints->shape() != perBlock2d)) {
      return fail("zero_points must be packed uint8 or " + shapeToString(perBlock1d) + " of A's type, got " +
                  dataTypeName(zeroPoints->dtype()) + " " + shapeToString(zeroPoints->shape()));
    }
    return Status::ok();
  }

  // The float block constants of checked weights.
  BlockParams blockParams(const Tensor& scales, const Tensor* zeroPoints) const {
    BlockParams p;
    p.scales = valuesAsFloat(scales);
    const size_t count = static_cast<size_t>(l_.N * l_.kBlocks);
    if (!zeroPoints) {
      p.zeroPoints.assign(count, static_cast<float>(1 << (l_.bits - 1)));
    } else if (zeroPoints->dtype() == DataType::UINT8) {
      const int64_t bytes = (l_.kBlocks * l_.bits + 7) / 8;
      const uint8_t* z = zeroPoints->data<uint8_t>();
      const unsigned mask = (1u << l_.bits) - 1u;
      p.zeroPoints.resize(count);
      for (int64_t n = 0; n < l_.N; ++n) {
        for (int64_t blk = 0; blk < l_.kBlocks; ++blk) {
          const int64_t bit = blk * l_.bits;
          p.zeroPoints[n * l_.kBlocks + blk] = static_cast<float>((z[n * bytes + bit / 8] >> (bit % 8)) & mask);
        }
      }
    } else {
      p.zeroPoints = valuesAsFloat(*zeroPoints);
    }
    p.scaledZeroPoints.resize(count);
    for (size_t i = 0; i < count; ++i) p.scaledZeroPoints[i] = p.scales[i] * p.zeroPoints[i];
    return p;
  }

  // Decode: each row of A is reordered once, then every thread streams its share of B's rows through the fused
  // dequantize-and-dot for all rows of A while they are in cache.
  void multiplyFewRows(const uint8_t* codes, const BlockParams& params, const float* a, int64_t M, float* y) const {
    const int64_t padded = l_.paddedK();
    std::vector<float> permuted(static_cast<size_t>(M * padded)), sums(static_cast<size_t>(M * l_.kBlocks));
    for (int64_t m = 0; m < M; ++m) {
      nbits::prepareActivationRow(l_, a + m * l_.K, permuted.data() + m * padded, sums.data() + m * l_.kBlocks);
    }
    const int64_t grain = std::max<int64_t>(8, (int64_t{1} << 16) / std::max<int64_t>(l_.K * M, 1));
    parallelFor(pool_, l_.N, grain, [&](int64_t n0, int64_t n1) {
      for (int64_t s0 = n0; s0 < n1; s0 += kSliceRows) {
        const int64_t s1 = std::min(n1, s0 + kSliceRows);
        for (int64_t m = 0; m < M; ++m) {
          nbits::dotRows(l_, codes, params, permuted.data() + m * padded, sums.data() + m * l_.kBlocks, s0, s1,
                         y + m * l_.N + s0);
        }
      }
    });
  }

  // Decode at accuracy_level 4: each row of A rounded to int8 once, then integer dots with B's codes.
  void multiplyFewRowsInt8(const uint8_t* codes, const BlockParams& params, const float* a, int64_t M,
                           float* y) const {
    const int64_t padded = nbits::int8RowLength(l_);
    std::vector<int8_t> aCodes(static_cast<size_t>(M * padded));
    std::vector<float> aScales(static_cast<size_t>(M * l_.kBlocks)), sums(aScales.size());
    for (int64_t m = 0; m < M; ++m) {
      nbits::quantizeActivationRowForDot(l_, a + m * l_.K, aCodes.data() + m * padded,
                                         aScales.data() + m * l_.kBlocks, sums.data() + m * l_.kBlocks);
    }
    const int64_t grain = std::max<int64_t>(8, (int64_t{1} << 17) / std::max<int64_t>(l_.K * M, 1));
    parallelFor(pool_, l_.N, grain, [&](int64_t n0, int64_t n1) {
      for (int64_t s0 = n0; s0 < n1; s0 += kSliceRows) {
        const int64_t s1 = std::min(n1, s0 + kSliceRows);
        for (int64_t m = 0; m < M; ++m) {
          nbits::dotRowsInt8(l_, codes, params, aCodes.data() + m * padded, aScales.data() + m * l_.kBlocks,
                             sums.data() + m * l_.kBlocks, s0, s1, y + m * l_.N + s0);
        }
      }
    });
  }

  // Prefill: panels of B's rows dequantized into a per-thread buffer, each multiplied by all of A.
  void multiplyManyRows(const uint8_t* codes, const BlockParams& params, const float* a, int64_t M, float* y) const {
    const int64_t padded = l_.paddedK(), panelRows = std::max<int64_t>(64, kPanelFloats / padded);
    const int64_t panels = (l_.N + panelRows - 1) / panelRows;
    parallelFor(pool_, panels, 1, [&](int64_t p0, int64_t p1) {
      // Slot 2: the GEMM's own helpers take the low slots.
      float* panel = scratchBuffer<float>(static_cast<size_t>(panelRows * padded), 2);
      for (int64_t panelIndex = p0; panelIndex < p1; ++panelIndex) {
        const int64_t n0 = panelIndex * panelRows, n1 = std::min(l_.N, n0 + panelRows);
        nbits::dequantizeRows(l_, codes, params, n0, n1, panel);
        gemm<float>(false, true, M, n1 - n0, l_.K, 1.f, a, l_.K, panel, padded, 0.f, y + n0, l_.N);
      }
    });
  }

  Status fail(const std::string& message) const { return invalidArgument(label_ + ": " + message); }

  std::string label_;
  Layout l_;
  int64_t accuracyLevel_;
  ThreadPool* pool_;
  Status attributeStatus_;
  bool bConstant_ = false;
  std::optional<BlockParams> constantParams_;  // the block constants of constant weights
};

}  // namespace

void registerMatMulNBitsKernels(KernelRegistry& registry) {
  registry.add("MatMulNBits", 1, kAnyOpset, makeFactory<MatMulNBitsKernel>(), ir::kMicrosoftDomain);
}

}  // namespace kiln::cpu
