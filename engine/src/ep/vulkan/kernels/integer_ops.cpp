// Vulkan kernels: MatMulInteger, ConvInteger (int32 y) and QLinearMatMul, QLinearConv (requantized 8-bit y)
// on uint8/int8 operands: shaders/matmul_int.comp and shaders/conv_int.comp accumulate in tiles, and for the
// QLinear ops shaders/requantize.comp turns the int32 accumulators (in scratch) into 8-bit y. Accumulation is
// exact in int32, so the results equal the CPU EP's (engine/src/ep/cpu/kernels/math.cpp, conv.cpp,
// qlinear_ops.cpp) bit for bit; the requantization multipliers ((input scale * weight scale) / y_scale) are
// computed on the device in the CPU EP's float order with a correctly rounded division (requantize.comp,
// MULTIPLIERS), so scales may be constants or run-time values. Zero points are read on the device (they may
// be DynamicQuantizeLinear outputs): per tensor, per row of A / column of B, per output channel of w.
// Convolutions take 1 or 2 spatial dims; MatMul batches broadcast numpy-style over at most 4 batch dims.
#include <algorithm>
#include <array>
#include <optional>
#include <string>
#include <utility>

#include "ep/vulkan/kernel_registry.h"
#include "ep/vulkan/kernel_utils.h"
#include "ops/window_geometry.h"

namespace kiln::vk {
namespace {

constexpr uint32_t kLocal = 64;
constexpr size_t kMaxBatchRank = 4;
// conv_int.comp's weight blocks hold kChannelTile output channels; each invocation computes a tile of blocks
// x output pixels, chosen as for the float conv2d.comp (CPU drivers: 2 blocks x 8 pixels; GPUs: up to 4
// blocks x 1 pixel) or, with kiln.vulkan.autotune=1, timed among kConvTiles on the first run.
constexpr int64_t kChannelTile = 4;
constexpr std::pair<int64_t, int64_t> kConvTiles[] = {{1, 1}, {2, 1}, {4, 1}, {1, 4},
                                                      {2, 4}, {1, 8}, {2, 8}, {4, 4}};

bool isQuantized8(DataType type) { return type == DataType::UINT8 || type == DataType::INT8; }

std::string typeName(DataType type) {
  return type == DataType::UNDEFINED ? std::string("of unknown type") : dataTypeName(type);
}

bool present(const ir::Node& node, size_t i) { return i < node.inputs.size() && !node.inputs[i].empty(); }

Status invalid(const std::string& op, const std::string& what) {
  return Status(StatusCode::INVALID_ARGUMENT, op + ": " + what);
}

// A zero-point input on the device: its buffer and value count (0 when absent), checked to hold 1 or `count`
// values of the operand's type.
struct ZeroPoint {
  BufferRange range;
  uint64_t count = 0;
};
Result<ZeroPoint> zeroPoint(RecordContext& ctx, const std::string& op, size_t i, DataType type, int64_t count,
                            const BufferRange& fallback, const char* name) {
  ZeroPoint zp{fallback, 0};
  if (!ctx.input(i)) return zp;
  KILN_ASSIGN_OR_RETURN(const VkTensor* t, ctx.deviceInput(i));
  if (t->dtype != type)
    return invalid(op, std::string(name) + " must have its operand's type " + dataTypeName(type));
  const bool perTensor = t->elementCount() == 1 && t->shape.size() <= 1;
  if (!perTensor && (t->shape.size() != 1 || t->elementCount() != count)) {
    return invalid(op, std::string(name) + " " + shapeToString(t->shape) + " must hold 1 or " +
                           std::to_string(count) + " values");
  }
  zp.range = t->range();
  zp.count = perTensor ? 1 : static_cast<uint64_t>(count);
  return zp;
}

// An operand input with the element type the kernel was created for.
Result<const VkTensor*> operand(RecordContext& ctx, const std::string& op, size_t i, DataType type) {
  KILN_ASSIGN_OR_RETURN(const VkTensor* t, ctx.deviceInput(i));
  if (t->dtype != type)
    return invalid(op, "input " + std::to_string(i) + " is " + dataTypeName(t->dtype) + ", expected " +
                           dataTypeName(type));
  return t;
}

// requantize.comp's variant for an 8-bit output of `type`.
ShaderVariant requantizeVariant(DataType type, bool multipliers = false) {
  ShaderVariant variant{"requantize", {}, 4, kLocal};
  variant.define("SIGNED", type == DataType::INT8 ? 1 : 0).define("MULTIPLIERS", multipliers ? 1 : 0);
  return variant;
}

// A scale input on the device: float32, holding 1 value (per tensor) or `count` (1-D).
struct Scale {
  BufferRange range;
  uint64_t count = 1;
};
Result<Scale> scaleInput(RecordContext& ctx, const std::string& op, size_t i, int64_t count,
                         const char* name) {
  if (!ctx.input(i)) return invalid(op, std::string("input '") + name + "' is required");
  KILN_ASSIGN_OR_RETURN(const VkTensor* t, ctx.deviceInput(i));
  if (t->dtype != DataType::FLOAT) return invalid(op, std::string(name) + " must be float32");
  const bool perTensor = t->elementCount() == 1 && t->shape.size() <= 1;
  if (!perTensor && (t->shape.size() != 1 || t->elementCount() != count)) {
    return invalid(op, std::string(name) + " " + shapeToString(t->shape) + " must hold 1 or " +
                           std::to_string(count) + " values");
  }
  return Scale{t->range(), perTensor ? 1 : static_cast<uint64_t>(count)};
}

// Records the multiplier table [rows][cols] = (a[r] * b[c]) / y[r] into scratch and returns it.
Result<BufferRange> recordMultipliers(RecordContext& ctx, uint32_t shader, const Scale& a, const Scale& b,
                                      const Scale& y, uint64_t rows, uint64_t cols) {
  KILN_ASSIGN_OR_RETURN(BufferRange table, ctx.scratch(rows * cols * sizeof(float)));
  uint32_t rowStride = 0;
  const auto groups = linearGroups(rows * cols, kLocal, &rowStride);
  PushConstants push;
  push.u32(rows * cols).u32(rowStride).u32(cols).u32(a.count).u32(b.count).u32(y.count);
  const BufferRange buffers[] = {a.range, b.range, y.range, table};
  KILN_RETURN_IF_ERROR(ctx.dispatch(shader, buffers, push.data(), push.size(), groups));
  return table;
}

// Where requantize.comp finds each element's multiplier and y zero point (see the shader).
struct RequantLayout {
  uint64_t rowInner = 1, rows = 1, colInner = 1, cols = 1, yInner = 1, yCount = 0;
};

// Records y = requantize(acc) over `count` elements.
Status recordRequantize(RecordContext& ctx, uint32_t shader, uint64_t count, const RequantLayout& l,
                        const BufferRange& acc, const BufferRange& multipliers, const BufferRange& yZero,
                        const BufferRange& y) {
  uint32_t rowStride = 0;
  const auto groups = linearGroups((count + 3) / 4, kLocal, &rowStride);
  PushConstants push;
  push.u32(count)
      .u32(rowStride)
      .u32(l.rowInner)
      .u32(l.rows)
      .u32(l.colInner)
      .u32(l.cols)
      .u32(l.yInner)
      .u32(l.yCount);
  const BufferRange buffers[] = {acc, multipliers, yZero, y};
  return ctx.dispatch(shader, buffers, push.data(), push.size(), groups);
}

// The output element type of a QLinear op: y_zero_point's, uint8 without one.
DataType qlinearOutputType(const KernelCreateInfo& info) {
  return present(info.node, 7) ? info.inputType(7) : DataType::UINT8;
}

// ---------------------------------------------------------------------------------------------------------------
// MatMulInteger (inputs A, B, a_zero_point, b_zero_point) and QLinearMatMul (a, a_scale, a_zero_point, b,
// b_scale, b_zero_point, y_scale, y_zero_point).
class IntegerMatMulKernel final : public VkKernel {
 public:
  IntegerMatMulKernel(const KernelCreateInfo& info, bool requant)
      : op_(info.node.opType), requant_(requant), b_(requant ? 3 : 1), bZero_(requant ? 5 : 3) {
    aType_ = info.inputType(a_);
    bType_ = info.inputType(b_);
    yType_ = requant ? qlinearOutputType(info) : DataType::INT32;
    ShaderVariant variant{"matmul_int", {}, 5, kLocal};
    variant.define("A_SIGNED", aType_ == DataType::INT8 ? 1 : 0)
        .define("B_SIGNED", bType_ == DataType::INT8 ? 1 : 0);
    shader_ = useShader(variant);
    if (requant) {
      requantShader_ = useShader(requantizeVariant(yType_));
      multiplierShader_ = useShader(requantizeVariant(yType_, true));
    }
  }

  Status record(RecordContext& ctx) override {
    KILN_ASSIGN_OR_RETURN(const VkTensor* a, operand(ctx, op_, a_, aType_));
    KILN_ASSIGN_OR_RETURN(const VkTensor* b, operand(ctx, op_, b_, bType_));
    if (a->shape.empty() || b->shape.empty()) return invalid(op_, "operands must not be scalars");
    // 1-D operands become a row (A) or a column (B) whose dimension is dropped from the output, as in MatMul.
    Shape as = a->shape, bs = b->shape;
    if (as.size() == 1) as.insert(as.begin(), 1);
    if (bs.size() == 1) bs.push_back(1);
    const int64_t M = as[as.size() - 2], K = as.back(), N = bs.back();
    if (bs[bs.size() - 2] != K) {
      return invalid(
          op_, "shapes " + shapeToString(a->shape) + " and " + shapeToString(b->shape) + " do not match");
    }
    const Shape aBatch(as.begin(), as.end() - 2), bBatch(bs.begin(), bs.end() - 2);
    auto batch = broadcastShapes(aBatch, bBatch);
    if (!batch.isOk()) return invalid(op_, "batch dimensions do not broadcast");
    if (batch->size() > kMaxBatchRank)
      return Status(StatusCode::NOT_IMPLEMENTED, op_ + ": more than 4 batch dimensions");
    Shape ys = *batch;
    if (a->shape.size() > 1) ys.push_back(M);
    if (b->shape.size() > 1) ys.push_back(N);
    KILN_ASSIGN_OR_RETURN(ZeroPoint az, zeroPoint(ctx, op_, aZero_, aType_, M, a->range(), "a_zero_point"));
    KILN_ASSIGN_OR_RETURN(ZeroPoint bz, zeroPoint(ctx, op_, bZero_, bType_, N, a->range(), "b_zero_point"));
    ZeroPoint yz{a->range(), 0};
    Scale aScale, bScale, yScale;
    if (requant_) {
      KILN_ASSIGN_OR_RETURN(aScale, scaleInput(ctx, op_, 1, M, "a_scale"));
      KILN_ASSIGN_OR_RETURN(bScale, scaleInput(ctx, op_, 4, N, "b_scale"));
      KILN_ASSIGN_OR_RETURN(yScale, scaleInput(ctx, op_, 6, M, "y_scale"));
      KILN_ASSIGN_OR_RETURN(yz, zeroPoint(ctx, op_, 7, yType_, M, a->range(), "y_zero_point"));
    }
    KILN_ASSIGN_OR_RETURN(const VkTensor* y, ctx.allocateOutput(0, yType_, ys));
    const uint64_t count = static_cast<uint64_t>(y->elementCount());
    if (count == 0) return Status::ok();
    std::vector<uint32_t> dims, aStrides, bStrides;
    for (int64_t d : *batch) dims.push_back(static_cast<uint32_t>(d));
    for (uint32_t s : broadcastStrides(aBatch, *batch)) aStrides.push_back(s * static_cast<uint32_t>(M * K));
    for (uint32_t s : broadcastStrides(bBatch, *batch)) bStrides.push_back(s * static_cast<uint32_t>(K * N));
    uint64_t batches = 1;
    for (uint32_t d : dims) batches *= d;
    const uint64_t tiles = batches * static_cast<uint64_t>((M + 3) / 4) * static_cast<uint64_t>((N + 3) / 4);
    uint32_t rowStride = 0;
    const auto groups = linearGroups(tiles, kLocal, &rowStride);
    PushConstants push;
    push.u32(tiles).u32(rowStride).u32(M).u32(N).u32(K).u32(dims.size());
    push.u32Array(dims, kMaxBatchRank, 1).u32Array(aStrides, kMaxBatchRank).u32Array(bStrides, kMaxBatchRank);
    push.u32(az.count).u32(bz.count);
    BufferRange acc = y->range();
    if (requant_) {
      KILN_ASSIGN_OR_RETURN(acc, ctx.scratch(count * sizeof(int32_t)));
    }
    const BufferRange buffers[] = {a->range(), b->range(), az.range, bz.range, acc};
    KILN_RETURN_IF_ERROR(ctx.dispatch(shader_, buffers, push.data(), push.size(), groups));
    if (!requant_) return Status::ok();
    RequantLayout layout;
    layout.rowInner = static_cast<uint64_t>(N);
    layout.rows = std::max(aScale.count, yScale.count);
    layout.cols = bScale.count;
    layout.yInner = static_cast<uint64_t>(N);
    layout.yCount = yz.count;
    KILN_ASSIGN_OR_RETURN(BufferRange table, recordMultipliers(ctx, multiplierShader_, aScale, bScale, yScale,
                                                               layout.rows, layout.cols));
    return recordRequantize(ctx, requantShader_, count, layout, acc, table, yz.range, y->range());
  }

 private:
  std::string op_;
  bool requant_;
  static constexpr size_t a_ = 0, aZero_ = 2;  // the same in both ops
  size_t b_, bZero_;
  DataType aType_ = DataType::UINT8, bType_ = DataType::UINT8, yType_ = DataType::INT32;
  uint32_t shader_ = 0, requantShader_ = 0, multiplierShader_ = 0;
};

// ---------------------------------------------------------------------------------------------------------------
// ConvInteger (x, w, x_zero_point, w_zero_point) and QLinearConv (x, x_scale, x_zero_point, w, w_scale,
// w_zero_point, y_scale, y_zero_point, B).

// Spatial dims as (H, W): 1-D convolutions run with height 1.
std::array<int64_t, 2> hw(const std::vector<int64_t>& v, int64_t fill) {
  return v.size() == 1 ? std::array<int64_t, 2>{fill, v[0]} : std::array<int64_t, 2>{v[0], v[1]};
}

// Records widen_int8.comp: `count` int32 values of `src` minus its zero point into `dst` (see the shader).
Status recordWiden(RecordContext& ctx, uint32_t shader, uint64_t count, const BufferRange& src,
                   const ZeroPoint& zero, int64_t Mg, int64_t taps, int64_t mBlocks, const BufferRange& dst) {
  uint32_t rowStride = 0;
  const auto groups = linearGroups(count, kLocal, &rowStride);
  PushConstants push;
  push.u32(count).u32(rowStride).u32(zero.count).u32(Mg).u32(taps).u32(mBlocks);
  const BufferRange buffers[] = {src, zero.range, dst};
  return ctx.dispatch(shader, buffers, push.data(), push.size(), groups);
}

class IntegerConvKernel final : public VkKernel {
 public:
  IntegerConvKernel(const KernelCreateInfo& info, bool requant)
      : op_(info.node.opType),
        requant_(requant),
        attrs_(ops::WindowAttributes::read(info.node)),
        group_(info.node.attrInt("group", 1)),
        w_(requant ? 3 : 1),
        xZero_(2),
        wZero_(requant ? 5 : 3) {
    xType_ = info.inputType(0);
    wType_ = info.inputType(w_);
    yType_ = requant ? qlinearOutputType(info) : DataType::INT32;
    auto widen = [](bool weights, DataType type) {
      ShaderVariant variant{"widen_int8", {}, 3, kLocal};
      variant.define("WEIGHTS", weights ? 1 : 0).define("SIGNED", type == DataType::INT8 ? 1 : 0);
      return variant.define("CB", std::to_string(kChannelTile) + "u");
    };
    widenX_ = useShader(widen(false, xType_));
    widenW_ = useShader(widen(true, wType_));
    ShaderVariant variant{"conv_int", {}, 4, kLocal};
    variant.define("HAS_BIAS", requant && present(info.node, 8) ? 1 : 0);
    const bool cpu = info.device.isCpu();
    std::vector<std::pair<int64_t, int64_t>> tiles = {cpu ? std::pair<int64_t, int64_t>{2, 8}
                                                          : std::pair<int64_t, int64_t>{4, 1}};
    if (info.autotune) {
      for (const auto& tile : kConvTiles) {
        if (std::find(tiles.begin(), tiles.end(), tile) == tiles.end()) tiles.push_back(tile);
      }
    }
    for (const auto& [blocks, pixels] : tiles) {
      ShaderVariant tiled = variant;
      tiled.define("CB", std::to_string(blocks) + "u").define("PIX", std::to_string(pixels) + "u");
      candidates_.push_back({blocks, pixels, useShader(tiled)});
    }
    selectCandidate(0);
    if (requant) {
      requantShader_ = useShader(requantizeVariant(yType_));
      multiplierShader_ = useShader(requantizeVariant(yType_, true));
    }
  }

  size_t candidateCount() const override { return candidates_.size() > 1 ? candidates_.size() : 0; }
  void selectCandidate(size_t index) override { tile_ = candidates_[index]; }
  std::string candidateName(size_t index) const override {
    return std::to_string(candidates_[index].pixels) + "px x " + std::to_string(candidates_[index].blocks) +
           "cb";
  }

  Status record(RecordContext& ctx) override {
    KILN_ASSIGN_OR_RETURN(const VkTensor* x, operand(ctx, op_, 0, xType_));
    KILN_ASSIGN_OR_RETURN(const VkTensor* w, operand(ctx, op_, w_, wType_));
    const Shape &xs = x->shape, &ws = w->shape;
    if (xs.size() < 3 || xs.size() > 4 || ws.size() != xs.size()) {
      return invalid(op_,
                     "x " + shapeToString(xs) + " and w " + shapeToString(ws) + " must both be 3-D or 4-D");
    }
    const int64_t M = ws[0], Cg = ws[1];
    if (group_ <= 0 || xs[1] != Cg * group_ || M % group_ != 0) {
      return invalid(op_, "x " + shapeToString(xs) + " does not match w " + shapeToString(ws) +
                              " with group " + std::to_string(group_));
    }
    const std::vector<int64_t> spatial(xs.begin() + 2, xs.end()), kernel(ws.begin() + 2, ws.end());
    KILN_ASSIGN_OR_RETURN(ops::WindowGeometry g, ops::resolveForwardWindow(attrs_, spatial, kernel));
    Shape ys = {xs[0], M};
    ys.insert(ys.end(), g.out.begin(), g.out.end());
    KILN_ASSIGN_OR_RETURN(ZeroPoint xz, zeroPoint(ctx, op_, xZero_, xType_, 1, x->range(), "x_zero_point"));
    KILN_ASSIGN_OR_RETURN(ZeroPoint wz, zeroPoint(ctx, op_, wZero_, wType_, M, x->range(), "w_zero_point"));
    ZeroPoint yz{x->range(), 0};
    BufferRange bias = x->range();
    bool hasBias = false;
    Scale xScale, wScale, yScale;
    if (requant_) {
      KILN_ASSIGN_OR_RETURN(xScale, scaleInput(ctx, op_, 1, 1, "x_scale"));
      KILN_ASSIGN_OR_RETURN(wScale, scaleInput(ctx, op_, 4, M, "w_scale"));
      KILN_ASSIGN_OR_RETURN(yScale, scaleInput(ctx, op_, 6, 1, "y_scale"));
      KILN_ASSIGN_OR_RETURN(yz, zeroPoint(ctx, op_, 7, yType_, 1, x->range(), "y_zero_point"));
      if (ctx.input(8)) {
        KILN_ASSIGN_OR_RETURN(const VkTensor* b, ctx.deviceInput(8));
        if (b->dtype != DataType::INT32 || b->elementCount() != M) {
          return invalid(op_, "B must be int32 with M values, got " + shapeToString(b->shape));
        }
        bias = b->range();
        hasBias = true;
      }
    }
    KILN_ASSIGN_OR_RETURN(const VkTensor* y, ctx.allocateOutput(0, yType_, ys));
    const uint64_t count = static_cast<uint64_t>(y->elementCount());
    if (count == 0) return Status::ok();
    const auto in = hw(g.in, 1), out = hw(g.out, 1), k = hw(g.kernel, 1), s = hw(g.strides, 1),
               d = hw(g.dilations, 1), pad = hw(g.padBegin, 0);
    const int64_t Mg = M / group_, mBlocks = (Mg + kChannelTile - 1) / kChannelTile, taps = Cg * k[0] * k[1];
    // x and w widened to int32 minus their zero points (w in 4-channel blocks), then the tiled convolution.
    const uint64_t xCount = static_cast<uint64_t>(x->elementCount());
    const uint64_t wCount = static_cast<uint64_t>(group_ * mBlocks * taps * kChannelTile);
    KILN_ASSIGN_OR_RETURN(BufferRange xw, ctx.scratch(xCount * sizeof(int32_t)));
    KILN_ASSIGN_OR_RETURN(BufferRange ww, ctx.scratch(wCount * sizeof(int32_t)));
    KILN_RETURN_IF_ERROR(recordWiden(ctx, widenX_, xCount, x->range(), xz, 0, 0, 0, xw));
    KILN_RETURN_IF_ERROR(recordWiden(ctx, widenW_, wCount, w->range(), wz, Mg, taps, mBlocks, ww));
    const int64_t chunks = (mBlocks + tile_.blocks - 1) / tile_.blocks;
    uint32_t rowStride = 0;
    auto groups = linearGroups(static_cast<uint64_t>((out[0] * out[1] + tile_.pixels - 1) / tile_.pixels),
                               kLocal, &rowStride);
    const int64_t gz = xs[0] * group_ * chunks;
    if (gz > 65535)
      return Status(StatusCode::NOT_IMPLEMENTED, op_ + ": too many images x channel blocks for one dispatch");
    groups[2] = static_cast<uint32_t>(gz);
    PushConstants push;
    push.u32(Cg).u32(in[0]).u32(in[1]).u32(out[0]).u32(out[1]).u32(Mg).u32(group_).u32(mBlocks);
    push.u32(k[0]).u32(k[1]).u32(s[0]).u32(s[1]).u32(d[0]).u32(d[1]).i32(pad[0]).i32(pad[1]);
    push.u32(rowStride).u32(chunks);
    BufferRange acc = y->range();
    if (requant_) {
      KILN_ASSIGN_OR_RETURN(acc, ctx.scratch(count * sizeof(int32_t)));
    }
    const BufferRange buffers[] = {xw, ww, hasBias ? bias : xw, acc};
    KILN_RETURN_IF_ERROR(ctx.dispatch(tile_.shader, buffers, push.data(), push.size(), groups));
    if (!requant_) return Status::ok();
    // One multiplier per output channel (or one): the table's columns, (x_scale * w_scale[m]) / y_scale.
    RequantLayout layout;
    layout.colInner = static_cast<uint64_t>(out[0] * out[1]);
    layout.cols = wScale.count;
    layout.yCount = yz.count;
    KILN_ASSIGN_OR_RETURN(BufferRange table,
                          recordMultipliers(ctx, multiplierShader_, xScale, wScale, yScale, 1, layout.cols));
    return recordRequantize(ctx, requantShader_, count, layout, acc, table, yz.range, y->range());
  }

 private:
  std::string op_;
  bool requant_;
  ops::WindowAttributes attrs_;
  int64_t group_;
  size_t w_, xZero_, wZero_;
  DataType xType_ = DataType::UINT8, wType_ = DataType::UINT8, yType_ = DataType::INT32;
  struct Tile {
    int64_t blocks, pixels;
    uint32_t shader;
  };
  std::vector<Tile> candidates_;
  Tile tile_{2, 8, 0};
  uint32_t widenX_ = 0, widenW_ = 0, requantShader_ = 0, multiplierShader_ = 0;
};

// ---------------------------------------------------------------------------------------------------------------
// Support checks.

// The 8-bit operand at `i` and its zero point at `zero` (same type when present).
NodeSupport operandSupport(const SupportQuery& q, size_t i, size_t zero, const char* name) {
  const DataType type = q.inputType(i);
  if (!isQuantized8(type))
    return unsupported(std::string(name) + " is " + typeName(type) + " (uint8 or int8 only)");
  if (q.hasInput(zero) && q.inputType(zero) != type) {
    return unsupported(std::string(name) + "'s zero point is " + typeName(q.inputType(zero)) + ", not " +
                       dataTypeName(type));
  }
  return supported();
}

// QLinear ops: float32 scales (scalars or 1-D; constants or run-time values) and an 8-bit y_zero_point.
NodeSupport qlinearSupport(const SupportQuery& q) {
  for (size_t i : {1, 4, 6}) {
    if (q.inputType(i) != DataType::FLOAT || q.inputRank(i) > 1) {
      return unsupported("scale input " + std::to_string(i) + " is not a float32 scalar or 1-D tensor");
    }
  }
  if (q.hasInput(7) && !isQuantized8(q.inputType(7))) {
    return unsupported("y_zero_point is " + typeName(q.inputType(7)) + " (uint8 or int8 only)");
  }
  return supported();
}

NodeSupport convRankSupport(const SupportQuery& q, size_t w) {
  const int rank = q.inputRank(0);
  if (rank != 3 && rank != 4)
    return unsupported("x has rank " + std::to_string(rank) +
                       " (the Vulkan kernel takes 1-D and 2-D convolutions)");
  if (q.inputRank(w) >= 0 && q.inputRank(w) != rank) return unsupported("w's rank differs from x's");
  return supported();
}

NodeSupport matMulRankSupport(const SupportQuery& q, size_t a, size_t b) {
  NodeSupport s = requireRankAtMost(q, a, kMaxBatchRank + 2);
  return s.supported ? requireRankAtMost(q, b, kMaxBatchRank + 2) : s;
}

template <class... Checks>
NodeSupport all(NodeSupport first, Checks... rest) {
  if (!first.supported) return first;
  if constexpr (sizeof...(rest) > 0) return all(rest...);
  return first;
}

}  // namespace

void registerIntegerKernels(std::vector<KernelEntry>& out) {
  out.push_back({"MatMulInteger", 10, 1 << 30,
                 [](const SupportQuery& q) {
                   return all(operandSupport(q, 0, 2, "A"), operandSupport(q, 1, 3, "B"),
                              matMulRankSupport(q, 0, 1));
                 },
                 [](const KernelCreateInfo& info) -> Result<std::unique_ptr<VkKernel>> {
                   return std::unique_ptr<VkKernel>(new IntegerMatMulKernel(info, false));
                 }});
  out.push_back({"QLinearMatMul", 10, 1 << 30,
                 [](const SupportQuery& q) {
                   return all(operandSupport(q, 0, 2, "a"), operandSupport(q, 3, 5, "b"), qlinearSupport(q),
                              matMulRankSupport(q, 0, 3));
                 },
                 [](const KernelCreateInfo& info) -> Result<std::unique_ptr<VkKernel>> {
                   return std::unique_ptr<VkKernel>(new IntegerMatMulKernel(info, true));
                 }});
  out.push_back({"ConvInteger", 10, 1 << 30,
                 [](const SupportQuery& q) {
                   return all(operandSupport(q, 0, 2, "x"), operandSupport(q, 1, 3, "w"),
                              convRankSupport(q, 1));
                 },
                 [](const KernelCreateInfo& info) -> Result<std::unique_ptr<VkKernel>> {
                   return std::unique_ptr<VkKernel>(new IntegerConvKernel(info, false));
                 }});
  out.push_back({"QLinearConv", 10, 1 << 30,
                 [](const SupportQuery& q) {
                   NodeSupport s = all(operandSupport(q, 0, 2, "x"), operandSupport(q, 3, 5, "w"),
                                       qlinearSupport(q), convRankSupport(q, 3));
                   if (s.supported && q.hasInput(8) && q.inputType(8) != DataType::INT32) {
                     s = unsupported("B is " + typeName(q.inputType(8)) + " (int32 only)");
                   }
                   return s;
                 },
                 [](const KernelCreateInfo& info) -> Result<std::unique_ptr<VkKernel>> {
                   return std::unique_ptr<VkKernel>(new IntegerConvKernel(info, true));
                 }});
}

}  // namespace kiln::vk
