// Vulkan kernel: com.microsoft MatMulNBits (onnxruntime's contrib operator, semantics as the CPU kernel in
// ep/cpu/kernels/matmul_nbits.cpp): Y [..., N] = A [..., K] x dequant(B)^T (+ bias), B uint8 [N, k_blocks, blob]
// holding 2-, 4- or 8-bit codes low bits first, dequantized per block of block_size along K as
// (code - zero_point) * scale. B stays packed in device memory as the model stores it; shaders/matmul_nbits.comp
// dequantizes in registers (decode: one workgroup per output column streaming B's row once; prefill: 4 x 4 tiles).
// scales [N * k_blocks] or [N, k_blocks] of A's type; zero_points uint8 packed like B or of A's type, absent =
// 2^(bits - 1); bias [N]. A and Y float32, or float16 storage. accuracy_level 4 with a constant B and uint8 or no
// zero points rounds A to int8 steps per block first, as onnxruntime's CPU kernel does (so results match it).
#include <algorithm>
#include <array>

#include "ep/vulkan/kernel_registry.h"
#include "ep/vulkan/kernel_utils.h"

namespace kiln::vk {
namespace {

enum Input : size_t { kA = 0, kB = 1, kScales = 2, kZeroPoints = 3, kGroupIndex = 4, kBias = 5 };

// Rows of A up to which the column-per-workgroup dot runs (B is read once for all of them); more take tiles.
constexpr int64_t kDotRows = 4;
constexpr uint32_t kDotLocal = 64, kTileLocal = 64, kQuantizeLocal = 64;
constexpr uint32_t kMaxGroupsX = 65535;

enum class ZeroPoints { kNone = 0, kPacked = 1, kFloat = 2 };

bool hasInputAt(const ir::Node& node, size_t i) { return i < node.inputs.size() && !node.inputs[i].empty(); }

class MatMulNBitsKernel final : public VkKernel {
 public:
  explicit MatMulNBitsKernel(const KernelCreateInfo& info)
      : K_(info.node.attrInt("K", 0)),
        N_(info.node.attrInt("N", 0)),
        bits_(info.node.attrInt("bits", 4)),
        blockSize_(info.node.attrInt("block_size", 0)),
        hasBias_(hasInputAt(info.node, kBias)) {
    kBlocks_ = blockSize_ > 0 ? (K_ + blockSize_ - 1) / blockSize_ : 0;
    if (hasInputAt(info.node, kZeroPoints)) {
      zeroPoints_ = info.inputType(kZeroPoints) == DataType::UINT8 ? ZeroPoints::kPacked : ZeroPoints::kFloat;
    }
    // The CPU kernel's condition for int8 activations (onnxruntime's: MLAS's int8 compute type needs prepacked B).
    const bool bConstant = kB < info.constantInputs.size() && info.constantInputs[kB];
    int8A_ = info.node.attrInt("accuracy_level", 0) == 4 && bConstant && zeroPoints_ != ZeroPoints::kFloat;
    const DataType storage = floatStorage(info);
    auto product = [&](const char* form, uint32_t local, bool subgroupCols) {
      ShaderVariant variant{"matmul_nbits", {}, 6, local};
      variant.define(form).define("SUBGROUP_COLS", subgroupCols ? 1 : 0).define("BITS", bits_);
      variant.define("DOT_ROWS", kDotRows).define("ZP_MODE", static_cast<int64_t>(zeroPoints_));
      variant.define("HAS_BIAS", hasBias_ ? 1 : 0).define("A_FLOAT32", int8A_ ? 1 : 0);
      return useShader(storedAs(variant, storage));
    };
    // Decode: a subgroup per column where the device reduces over subgroups (no barriers), else a workgroup.
    subgroupCols_ = info.device.subgroupArithmetic;
    dot_ = product("DOT", kDotLocal, subgroupCols_);
    if (subgroupCols_) {
      colsPerGroup_ = std::max<uint32_t>(1, kDotLocal / std::max<uint32_t>(1, info.device.subgroupSize));
    }
    tile_ = product("TILE", kTileLocal, false);
    if (int8A_) {
      ShaderVariant variant{"matmul_nbits", {}, 2, kQuantizeLocal};
      quantize_ = useShader(storedAs(variant.define("QUANTIZE_A"), storage));
    }
  }

  Status record(RecordContext& ctx) override {
    KILN_ASSIGN_OR_RETURN(const VkTensor* a, ctx.deviceInput(kA));
    KILN_ASSIGN_OR_RETURN(const VkTensor* b, ctx.deviceInput(kB));
    KILN_ASSIGN_OR_RETURN(const VkTensor* scales, ctx.deviceInput(kScales));
    if (a->shape.empty() || a->shape.back() != K_) {
      return fail("A's last dimension must be K = " + std::to_string(K_) + ", got A " + shapeToString(a->shape));
    }
    const int64_t blob = blockSize_ * bits_ / 8;
    const Shape bShape{N_, kBlocks_, blob};
    if (b->dtype != DataType::UINT8 || b->shape != bShape) {
      return fail("B must be uint8 " + shapeToString(bShape) + ", got " + dataTypeName(b->dtype) + " " +
                  shapeToString(b->shape));
    }
    const int64_t perBlock = N_ * kBlocks_;
    if (scales->elementCount() != perBlock) {
      return fail("scales must hold N * k_blocks = " + std::to_string(perBlock) + " values, got " +
                  shapeToString(scales->shape));
    }
    const int64_t zpBytes = (kBlocks_ * bits_ + 7) / 8;
    const VkTensor* zeroPoints = scales;
    if (zeroPoints_ != ZeroPoints::kNone) {
      KILN_ASSIGN_OR_RETURN(zeroPoints, ctx.deviceInput(kZeroPoints));
      const int64_t want = zeroPoints_ == ZeroPoints::kPacked ? N_ * zpBytes : perBlock;
      if (zeroPoints->elementCount() != want) {
        return fail("zero_points must hold " + std::to_string(want) + " values, got " +
                    shapeToString(zeroPoints->shape));
      }
    }
    const VkTensor* bias = scales;
    if (hasBias_) {
      KILN_ASSIGN_OR_RETURN(bias, ctx.deviceInput(kBias));
      if (bias->shape != Shape{N_}) return fail("bias must be [N] = [" + std::to_string(N_) + "]");
    }
    Shape yShape = a->shape;
    yShape.back() = N_;
    KILN_ASSIGN_OR_RETURN(const VkTensor* y, ctx.allocateOutput(0, a->dtype, yShape));
    const int64_t M = a->elementCount() / K_;
    if (M == 0) return Status::ok();

    BufferRange aRange = a->range();
    if (int8A_) {
      KILN_ASSIGN_OR_RETURN(aRange, ctx.scratch(static_cast<uint64_t>(M * K_) * sizeof(float)));
      uint32_t rowStride = 0;
      const auto groups = linearGroups(static_cast<uint64_t>(M * kBlocks_), kQuantizeLocal, &rowStride);
      PushConstants push;
      push.u32(M).u32(K_).u32(blockSize_).u32(kBlocks_).u32(rowStride);
      const BufferRange buffers[] = {a->range(), aRange};
      KILN_RETURN_IF_ERROR(ctx.dispatch(quantize_, buffers, push.data(), push.size(), groups));
    }

    const bool dot = M <= kDotRows;
    const int64_t tiles = (M + 3) / 4 * ((N_ + 3) / 4);
    uint32_t rowStride = 0;
    std::array<uint32_t, 3> groups{};
    if (dot) {
      const int64_t columnGroups = (N_ + colsPerGroup_ - 1) / colsPerGroup_;
      rowStride = static_cast<uint32_t>(std::min<int64_t>(columnGroups, kMaxGroupsX));
      groups = {rowStride, static_cast<uint32_t>((columnGroups + rowStride - 1) / rowStride), 1};
    } else {
      groups = linearGroups(static_cast<uint64_t>(tiles), kTileLocal, &rowStride);
    }
    PushConstants push;
    push.u32(M).u32(N_).u32(K_).u32(blockSize_).u32(kBlocks_).u32(blockSize_ * bits_ / 32);
    push.u32(zpBytes).u32(rowStride).u32(dot ? 0 : tiles).u32(colsPerGroup_);
    const BufferRange buffers[] = {aRange, b->range(), scales->range(), zeroPoints->range(), bias->range(),
                                   y->range()};
    return ctx.dispatch(dot ? dot_ : tile_, buffers, push.data(), push.size(), groups);
  }

 private:
  Status fail(const std::string& message) const {
    return Status(StatusCode::INVALID_ARGUMENT, "MatMulNBits: " + message);
  }

  int64_t K_, N_, bits_, blockSize_, kBlocks_ = 0;
  bool hasBias_;
  ZeroPoints zeroPoints_ = ZeroPoints::kNone;
  bool int8A_ = false, subgroupCols_ = false;
  uint32_t colsPerGroup_ = 1;
  uint32_t dot_ = 0, tile_ = 0, quantize_ = 0;
};

NodeSupport checkMatMulNBits(const SupportQuery& q) {
  if (q.hasInput(kGroupIndex)) return unsupported("g_idx (act-order block indices)");
  // A, scales, bias and Y one float type (float16 where the device stores it).
  NodeSupport s = q.hasInput(kBias) ? requireFloat(q, {kA, kScales, kBias}) : requireFloat(q, {kA, kScales});
  if (!s.supported) return s;
  if (q.inputType(kB) != DataType::UINT8) {
    const DataType type = q.inputType(kB);
    return unsupported("B is " + (type == DataType::UNDEFINED ? std::string("of unknown type") : dataTypeName(type)) +
                       " (the Vulkan kernel takes uint8)");
  }
  if (q.hasInput(kZeroPoints)) {
    const DataType zp = q.inputType(kZeroPoints);
    if (zp != DataType::UINT8 && zp != q.inputType(kA)) {
      return unsupported("zero_points are " +
                         (zp == DataType::UNDEFINED ? std::string("of unknown type") : dataTypeName(zp)) +
                         " (the Vulkan kernel takes uint8 or A's type)");
    }
  }
  const int64_t K = q.node.attrInt("K", 0), N = q.node.attrInt("N", 0);
  const int64_t bits = q.node.attrInt("bits", 4), block = q.node.attrInt("block_size", 0);
  // Shapes travel as uint32 push constants; the CPU EP takes (and reports) anything larger or malformed.
  constexpr int64_t kMaxDim = int64_t{1} << 30;
  if (K <= 0 || N <= 0 || K > kMaxDim || N > kMaxDim) return unsupported("K and N attributes outside [1, 2^30]");
  if (bits != 2 && bits != 4 && bits != 8) return unsupported("bits=" + std::to_string(bits) + " (takes 2, 4, 8)");
  if (block < 16 || block > (1 << 20) || (block & (block - 1)) != 0) {
    return unsupported("block_size=" + std::to_string(block) + " (takes powers of 2 from 16)");
  }
  return supported();
}

}  // namespace

void registerMatMulNBitsKernels(std::vector<KernelEntry>& out) {
  out.push_back({"MatMulNBits", 1, 1 << 30, checkMatMulNBits,
                 [](const KernelCreateInfo& info) -> Result<std::unique_ptr<VkKernel>> {
                   return std::unique_ptr<VkKernel>(new MatMulNBitsKernel(info));
                 },
                 ir::kMicrosoftDomain});
}

}  // namespace kiln::vk
