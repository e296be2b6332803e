// Vulkan kernels: Gemm (transA/transB, alpha, beta, C broadcast to (M, N)) and MatMul (numpy batch
// broadcasting, 1-D operands), float32 or float16 storage. Both run shaders/gemm.comp: operands are read through strides, so
// transposes and broadcast batches need no copies.
#include <algorithm>

#include "ep/vulkan/kernel_registry.h"
#include "ep/vulkan/kernel_utils.h"

namespace kiln::vk {
namespace {

constexpr uint32_t kLocal = 64;
constexpr size_t kMaxBatchRank = 4;

// One product's geometry: strides of A (M x K) and B (K x N), batch dims with per-operand batch strides.
struct Product {
  int64_t M = 0, N = 0, K = 0;
  int64_t aRow = 0, aCol = 0, bRow = 0, bCol = 0, cRow = 0, cCol = 0;
  std::vector<uint32_t> batchDims, aBatch, bBatch;
  float alpha = 1, beta = 0;
};

// The shaders of one product: the 4 x 4 tiles (tuned workgroup size) and the skinny variant for M <= 4.
struct ProductShaders {
  uint32_t tiled = 0, skinny = 0;
  uint32_t tiledLocalSize = kLocal;
};
constexpr int64_t kSkinnyRows = 4;

ShaderVariant skinnyVariant(const KernelCreateInfo& info, bool hasC) {
  ShaderVariant variant{"gemm", {}, 4, kLocal};
  variant.define("HAS_C", hasC ? 1 : 0).define("SKINNY");
  return storedAs(variant, floatStorage(info));
}

Status recordProduct(RecordContext& ctx, const ProductShaders& shaders, const Product& pr, const BufferRange& a,
                     const BufferRange& b, const BufferRange& c, const BufferRange& y) {
  if (pr.batchDims.size() > kMaxBatchRank) {
    return Status(StatusCode::NOT_IMPLEMENTED, "more than 4 batch dimensions");
  }
  uint64_t batches = 1;
  for (uint32_t d : pr.batchDims) batches *= d;
  if (pr.M == 0 || pr.N == 0 || batches == 0) return Status::ok();
  if (batches > 65535) return Status(StatusCode::NOT_IMPLEMENTED, "more than 65535 batched products");
  const int64_t nBlocks = (pr.N + 3) / 4, tiles = (pr.M + 3) / 4 * nBlocks;
  const bool skinny = pr.M <= kSkinnyRows;
  uint32_t rowStride = 0;
  auto groups = skinny ? linearGroups(static_cast<uint64_t>(pr.N), kLocal, &rowStride)
                       : linearGroups(static_cast<uint64_t>(tiles), shaders.tiledLocalSize, &rowStride);
  groups[2] = static_cast<uint32_t>(batches);
  PushConstants push;
  push.u32(pr.M).u32(pr.N).u32(pr.K).u32(pr.aRow).u32(pr.aCol).u32(pr.bRow).u32(pr.bCol).u32(pr.cRow).u32(pr.cCol);
  push.u32(nBlocks).u32(tiles).u32(rowStride).u32(pr.batchDims.size());
  push.u32Array(pr.batchDims, kMaxBatchRank, 1).u32Array(pr.aBatch, kMaxBatchRank).u32Array(pr.bBatch, kMaxBatchRank);
  push.f32(pr.alpha).f32(pr.beta);
  const BufferRange buffers[] = {a, b, c, y};
  return ctx.dispatch(skinny ? shaders.skinny : shaders.tiled, buffers, push.data(), push.size(), groups);
}

class GemmKernel final : public WorkgroupTunedKernel {
 public:
  explicit GemmKernel(const KernelCreateInfo& info)
      : WorkgroupTunedKernel(info),
        transA_(info.node.attrInt("transA", 0) != 0),
        transB_(info.node.attrInt("transB", 0) != 0),
        alpha_(info.node.attrFloat("alpha", 1.0f)),
        beta_(info.node.attrFloat("beta", 1.0f)) {
    for (int hasC = 0; hasC < 2; ++hasC) {
      ShaderVariant variant{"gemm", {}, 4, kLocal};
      variant.define("HAS_C", hasC);
      (hasC ? withC_ : withoutC_) = useTunedShader(storedAs(variant, floatStorage(info)));
      (hasC ? skinnyWithC_ : skinnyWithoutC_) = useShader(skinnyVariant(info, hasC != 0));
    }
  }

  Status record(RecordContext& ctx) override {
    KILN_ASSIGN_OR_RETURN(const VkTensor* a, ctx.deviceInput(0));
    KILN_ASSIGN_OR_RETURN(const VkTensor* b, ctx.deviceInput(1));
    if (a->shape.size() != 2 || b->shape.size() != 2) {
      return Status(StatusCode::INVALID_ARGUMENT, "Gemm takes 2-D A and B");
    }
    Product pr;
    pr.M = transA_ ? a->shape[1] : a->shape[0];
    pr.K = transA_ ? a->shape[0] : a->shape[1];
    pr.N = transB_ ? b->shape[0] : b->shape[1];
    if ((transB_ ? b->shape[1] : b->shape[0]) != pr.K) {
      return Status(StatusCode::INVALID_ARGUMENT, "Gemm shapes " + shapeToString(a->shape) + " and " +
                                                      shapeToString(b->shape) + " do not match");
    }
    pr.aRow = transA_ ? 1 : pr.K;
    pr.aCol = transA_ ? pr.M : 1;
    pr.bRow = transB_ ? 1 : pr.N;
    pr.bCol = transB_ ? pr.K : 1;
    pr.alpha = alpha_;
    pr.beta = beta_;
    const Shape ys = {pr.M, pr.N};
    KILN_ASSIGN_OR_RETURN(const VkTensor* y, ctx.allocateOutput(0, a->dtype, ys));
    const VkTensor* c = nullptr;
    if (ctx.input(2) && beta_ != 0) {
      KILN_ASSIGN_OR_RETURN(c, ctx.deviceInput(2));
      auto merged = broadcastShapes(c->shape, ys);
      if (c->shape.size() > 2 || !merged.isOk() || *merged != ys) {
        return Status(StatusCode::INVALID_ARGUMENT, "Gemm C " + shapeToString(c->shape) + " does not broadcast to " +
                                                        shapeToString(ys));
      }
      const std::vector<uint32_t> strides = broadcastStrides(c->shape, ys);
      pr.cRow = strides[0];
      pr.cCol = strides[1];
    }
    const ProductShaders shaders{shader(c ? withC_ : withoutC_), c ? skinnyWithC_ : skinnyWithoutC_, localSize()};
    return recordProduct(ctx, shaders, pr, a->range(), b->range(), c ? c->range() : a->range(), y->range());
  }

 private:
  bool transA_, transB_;
  float alpha_, beta_;
  uint32_t withC_ = 0, withoutC_ = 0, skinnyWithC_ = 0, skinnyWithoutC_ = 0;
};

class MatMulKernel final : public WorkgroupTunedKernel {
 public:
  explicit MatMulKernel(const KernelCreateInfo& info) : WorkgroupTunedKernel(info) {
    ShaderVariant variant{"gemm", {}, 4, kLocal};
    variant.define("HAS_C", 0);
    shader_ = useTunedShader(storedAs(variant, floatStorage(info)));
    skinny_ = useShader(skinnyVariant(info, false));
  }

  Status record(RecordContext& ctx) override {
    KILN_ASSIGN_OR_RETURN(const VkTensor* a, ctx.deviceInput(0));
    KILN_ASSIGN_OR_RETURN(const VkTensor* b, ctx.deviceInput(1));
    if (a->shape.empty() || b->shape.empty()) return Status(StatusCode::INVALID_ARGUMENT, "MatMul of a scalar");
    // 1-D operands become a row (A) or a column (B) whose dimension is dropped from the output.
    Shape as = a->shape, bs = b->shape;
    if (as.size() == 1) as.insert(as.begin(), 1);
    if (bs.size() == 1) bs.push_back(1);
    Product pr;
    pr.M = as[as.size() - 2];
    pr.K = as.back();
    pr.N = bs.back();
    if (bs[bs.size() - 2] != pr.K) {
      return Status(StatusCode::INVALID_ARGUMENT, "MatMul shapes " + shapeToString(a->shape) + " and " +
                                                      shapeToString(b->shape) + " do not match");
    }
    const Shape aBatch(as.begin(), as.end() - 2), bBatch(bs.begin(), bs.end() - 2);
    auto batch = broadcastShapes(aBatch, bBatch);
    if (!batch.isOk()) return Status(StatusCode::INVALID_ARGUMENT, "MatMul batch dimensions do not broadcast");
    if (batch->size() > kMaxBatchRank) return Status(StatusCode::NOT_IMPLEMENTED, "more than 4 batch dimensions");
    pr.aRow = pr.K;
    pr.aCol = 1;
    pr.bRow = pr.N;
    pr.bCol = 1;
    for (int64_t d : *batch) pr.batchDims.push_back(static_cast<uint32_t>(d));
    for (uint32_t s : broadcastStrides(aBatch, *batch)) pr.aBatch.push_back(s * static_cast<uint32_t>(pr.M * pr.K));
    for (uint32_t s : broadcastStrides(bBatch, *batch)) pr.bBatch.push_back(s * static_cast<uint32_t>(pr.K * pr.N));
    Shape ys = *batch;
    if (a->shape.size() > 1) ys.push_back(pr.M);
    if (b->shape.size() > 1) ys.push_back(pr.N);
    KILN_ASSIGN_OR_RETURN(const VkTensor* y, ctx.allocateOutput(0, a->dtype, ys));
    return recordProduct(ctx, {shader(shader_), skinny_, localSize()}, pr, a->range(), b->range(), a->range(),
                         y->range());
  }

 private:
  uint32_t shader_ = 0, skinny_ = 0;
};

}  // namespace

void registerGemmKernels(std::vector<KernelEntry>& out) {
  out.push_back({"Gemm", 7, 1 << 30,
                 [](const SupportQuery& q) {
                   NodeSupport s = requireFloat(q, {0, 1, 2});
                   if (s.supported && q.inputRank(2) > 2) s = unsupported("C has rank above 2");
                   return s;
                 },
                 [](const KernelCreateInfo& info) -> Result<std::unique_ptr<VkKernel>> {
                   return std::unique_ptr<VkKernel>(new GemmKernel(info));
                 }});
  out.push_back({"MatMul", 1, 1 << 30,
                 [](const SupportQuery& q) {
                   NodeSupport s = requireFloat(q, {0, 1});
                   if (s.supported) s = requireRankAtMost(q, 0, kMaxBatchRank + 2);
                   if (s.supported) s = requireRankAtMost(q, 1, kMaxBatchRank + 2);
                   return s;
                 },
                 [](const KernelCreateInfo& info) -> Result<std::unique_ptr<VkKernel>> {
                   return std::unique_ptr<VkKernel>(new MatMulKernel(info));
                 }});
}

}  // namespace kiln::vk
