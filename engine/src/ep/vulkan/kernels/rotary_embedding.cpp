// Vulkan kernel: RotaryEmbedding in its two forms (shaders/rotary_embedding.comp), as the CPU kernels
// (engine/src/ep/cpu/kernels/rotary_embedding.cpp) define them:
//  - ai.onnx (opset 23): inputs X, cos_cache, sin_cache, position_ids; X 4-D [batch, heads, seq, head] or 3-D
//    [batch, seq, heads * head] (num_heads); caches [max_position, rotary / 2] with position_ids, else
//    [batch, seq, rotary / 2];
//  - com.microsoft: inputs input, position_ids (a start position or [batch, seq]), cos_cache, sin_cache
//    ([max_position, width]); the head size is 2 * width unless rotary_embedding_dim is given.
// Positions are read on the device (int64); ones known on the host are checked against the caches here, the
// others are clamped by the shader.
#include <string>

#include "ep/vulkan/kernel_registry.h"
#include "ep/vulkan/kernel_utils.h"

namespace kiln::vk {
namespace {

constexpr uint32_t kLocal = 64;

enum Rows : int { kRowPerToken = 0, kStartPosition = 1, kPositionIds = 2 };

struct Layout {
  int64_t batch = 0, seq = 0, heads = 0, headSize = 0, rotary = 0, cacheWidth = 0, cacheRows = 0;
  int64_t batchStride = 0, headStride = 0, seqStride = 0;
};

class RotaryEmbeddingKernel final : public VkKernel {
 public:
  RotaryEmbeddingKernel(const KernelCreateInfo& info, bool contrib)
      : contrib_(contrib),
        interleaved_(info.node.attrInt("interleaved", 0) != 0),
        rotaryDim_(info.node.attrInt("rotary_embedding_dim", 0)),
        numHeads_(info.node.attrInt("num_heads", 0)) {
    for (int rows : {kRowPerToken, kStartPosition, kPositionIds}) {
      ShaderVariant variant{"rotary_embedding", {}, 5, kLocal};
      variant.define("ROWS", rows);
      shaders_[rows] = useShader(storedAs(variant, floatStorage(info)));
    }
  }

  Status record(RecordContext& ctx) override {
    KILN_ASSIGN_OR_RETURN(const VkTensor* x, ctx.deviceInput(0));
    KILN_ASSIGN_OR_RETURN(const VkTensor* cosCache, ctx.deviceInput(contrib_ ? 2 : 1));
    KILN_ASSIGN_OR_RETURN(const VkTensor* sinCache, ctx.deviceInput(contrib_ ? 3 : 2));
    const size_t positionInput = contrib_ ? 1 : 3;
    const VkTensor* positions = ctx.input(positionInput);
    if (x->shape.size() != 3 && x->shape.size() != 4) return fail("X must be 3-D or 4-D, got " + shapeToString(x->shape));
    if (sinCache->shape != cosCache->shape) return fail("cos_cache and sin_cache must have one shape");
    Layout l;
    KILN_RETURN_IF_ERROR(contrib_ ? contribLayout(*x, *cosCache, l) : onnxLayout(*x, *cosCache, positions != nullptr, l));
    Rows rows = kRowPerToken;
    const VkTensor* positionBuffer = x;
    if (positions) {
      const bool start = contrib_ && positions->elementCount() == 1;
      if (!start && positions->shape != Shape{l.batch, l.seq}) {
        return fail("position_ids must be " + std::string(contrib_ ? "one start position or " : "") + "[batch, seq] = " +
                    shapeToString(Shape{l.batch, l.seq}) + ", got " + shapeToString(positions->shape));
      }
      if (positions->dtype != DataType::INT64) return fail("position_ids must be int64");
      if (positions->host) {
        KILN_ASSIGN_OR_RETURN(const std::vector<int64_t> ids, hostInts(positions, "position_ids"));
        for (int64_t id : ids) {
          const int64_t last = start ? id + l.seq - 1 : id;
          if (id < 0 || last >= l.cacheRows) {
            return fail("position " + std::to_string(last) + " is outside the cache's " + std::to_string(l.cacheRows) +
                        " rows");
          }
        }
      }
      KILN_ASSIGN_OR_RETURN(positionBuffer, ctx.deviceInput(positionInput));
      rows = start ? kStartPosition : kPositionIds;
    }
    KILN_ASSIGN_OR_RETURN(const VkTensor* y, ctx.allocateOutput(0, x->dtype, x->shape));
    if (x->elementCount() == 0) return Status::ok();
    uint32_t rowStride = 0;
    const auto groups = linearGroups(static_cast<uint64_t>(x->elementCount()), kLocal, &rowStride);
    PushConstants push;
    push.u32(x->elementCount()).u32(rowStride).u32(l.seq).u32(l.heads).u32(l.headSize).u32(l.rotary);
    push.u32(l.batchStride).u32(l.headStride).u32(l.seqStride).u32(l.cacheWidth).u32(l.cacheRows);
    push.u32(interleaved_ ? 1 : 0);
    const BufferRange buffers[] = {x->range(), cosCache->range(), sinCache->range(), positionBuffer->range(),
                                   y->range()};
    return ctx.dispatch(shaders_[rows], buffers, push.data(), push.size(), groups);
  }

 private:
  static void setStrides(const Shape& s, Layout& l) {
    if (s.size() == 4) {  // [batch, heads, seq, head]
      l.batchStride = s[1] * s[2] * s[3];
      l.headStride = s[2] * s[3];
      l.seqStride = s[3];
    } else {  // [batch, seq, heads * head]
      l.batchStride = s[1] * s[2];
      l.seqStride = s[2];
      l.headStride = l.headSize;
    }
  }

  Status onnxLayout(const VkTensor& x, const VkTensor& cache, bool hasPositions, Layout& l) const {
    const Shape& s = x.shape;
    l.batch = s[0];
    if (s.size() == 4) {
      if (numHeads_ != 0 && numHeads_ != s[1]) return fail("num_heads disagrees with X's dimension 1");
      l.heads = s[1];
      l.seq = s[2];
      l.headSize = s[3];
    } else {
      if (numHeads_ <= 0 || s[2] % numHeads_ != 0) return fail("a 3-D X needs num_heads dividing its hidden size");
      l.heads = numHeads_;
      l.seq = s[1];
      l.headSize = s[2] / numHeads_;
    }
    l.rotary = rotaryDim_ == 0 ? l.headSize : rotaryDim_;
    if (l.rotary <= 0 || l.rotary > l.headSize || l.rotary % 2 != 0) {
      return fail("rotary_embedding_dim " + std::to_string(l.rotary) + " must be even and at most the head size");
    }
    l.cacheWidth = l.rotary / 2;
    const Shape want = hasPositions ? Shape{cache.shape.empty() ? 0 : cache.shape[0], l.cacheWidth}
                                    : Shape{l.batch, l.seq, l.cacheWidth};
    if (cache.shape != want) return fail("the caches must be " + shapeToString(want) + ", got " + shapeToString(cache.shape));
    l.cacheRows = hasPositions ? cache.shape[0] : l.batch * l.seq;
    setStrides(s, l);
    return Status::ok();
  }

  Status contribLayout(const VkTensor& x, const VkTensor& cache, Layout& l) const {
    const Shape& s = x.shape;
    if (cache.shape.size() != 2) return fail("the caches must be [max_position, width]");
    if (rotaryDim_ > 0 && numHeads_ <= 0) return fail("num_heads is required with rotary_embedding_dim");
    const bool transposed = s.size() == 4;
    const int64_t hidden = transposed ? s[1] * s[3] : s[2];
    l.batch = s[0];
    l.seq = transposed ? s[2] : s[1];
    l.cacheWidth = cache.shape[1];
    l.cacheRows = cache.shape[0];
    l.headSize = rotaryDim_ == 0 ? 2 * l.cacheWidth : hidden / numHeads_;
    if (l.headSize <= 0 || hidden % l.headSize != 0) return fail("the hidden size does not split into heads");
    l.heads = numHeads_ > 0 ? numHeads_ : hidden / l.headSize;
    if (transposed && l.heads != s[1]) return fail("num_heads disagrees with input's dimension 1");
    l.rotary = rotaryDim_ > 0 ? rotaryDim_ : l.headSize;
    if (l.rotary > l.headSize || l.rotary % 2 != 0 || l.rotary / 2 > l.cacheWidth) {
      return fail("rotary_embedding_dim " + std::to_string(l.rotary) + " does not fit the head and the caches");
    }
    setStrides(s, l);
    return Status::ok();
  }

  Status fail(const std::string& message) const {
    return Status(StatusCode::INVALID_ARGUMENT, "RotaryEmbedding: " + message);
  }

  bool contrib_, interleaved_;
  int64_t rotaryDim_, numHeads_;
  uint32_t shaders_[3] = {0, 0, 0};
};

NodeSupport checkRotary(const SupportQuery& q, bool contrib) {
  NodeSupport s = requireFloat(q, contrib ? std::initializer_list<size_t>{0, 2, 3} : std::initializer_list<size_t>{0, 1, 2});
  if (!s.supported) return s;
  const size_t positions = contrib ? 1 : 3;
  if (q.hasInput(positions) && q.inputType(positions) != DataType::INT64) return unsupported("position_ids is not int64");
  if (contrib && q.node.attrInt("is_packed_batching", 0) != 0) return unsupported("is_packed_batching=1");
  return supported();
}

KernelFactory rotary(bool contrib) {
  return [contrib](const KernelCreateInfo& info) -> Result<std::unique_ptr<VkKernel>> {
    return std::unique_ptr<VkKernel>(new RotaryEmbeddingKernel(info, contrib));
  };
}

}  // namespace

void registerRotaryEmbeddingKernels(std::vector<KernelEntry>& out) {
  out.push_back({"RotaryEmbedding", 23, 1 << 30, [](const SupportQuery& q) { return checkRotary(q, false); },
                 rotary(false)});
  out.push_back({"RotaryEmbedding", 1, 1 << 30, [](const SupportQuery& q) { return checkRotary(q, true); },
                 rotary(true), ir::kMicrosoftDomain});
}

}  // namespace kiln::vk
