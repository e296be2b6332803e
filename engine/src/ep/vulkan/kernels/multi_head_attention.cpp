// Vulkan kernel: com.microsoft MultiHeadAttention (shaders/multi_head_attention.comp), the attention of exported
// encoders and encoder-decoders, with the CPU kernel's semantics (engine/src/ep/cpu/kernels/multi_head_attention.cpp):
//  - query [batch, seq, heads * head]; key/value [batch, kv_seq, heads * size] (projected this step) or
//    [batch, heads, kv_seq, size] (a cross-attention cache, read in place);
//  - bias [heads * (2 head + v_head)] added to query, key and value; past_key/past_value [batch, heads, past, size]
//    before this step's rows; present_key/present_value are those blocks;
//  - key_padding_mask (int32 [batch], [batch, total] or [batch, seq, total]), unidirectional, attention_bias
//    [batch or 1, heads or 1, seq, total], scale and mask_filter_value.
// Gathers (one per block, into present or scratch; half models also into a float32 block, so biased keys and values
// stay unrounded for the scores as in onnxruntime), then one workgroup per (batch, head, query position).
// Packed QKV/KV, past_sequence_length, cache_indirection and the qk output stay on the CPU EP.
#include <algorithm>
#include <cmath>
#include <string>

#include "ep/vulkan/kernel_registry.h"
#include "ep/vulkan/kernel_utils.h"

namespace kiln::vk {
namespace {

constexpr uint32_t kLocal = 64;
constexpr int64_t kMaxHead = 256;  // the attention shader's shared query row
constexpr uint32_t kMaxGroupsX = 65535;

bool requested(const ir::Node& node, size_t i) { return i < node.outputs.size() && !node.outputs[i].empty(); }

int maskModeOf(const Shape& shape) { return static_cast<int>(std::min<size_t>(shape.size(), 3)); }

class MultiHeadAttentionKernel final : public VkKernel {
 public:
  explicit MultiHeadAttentionKernel(const KernelCreateInfo& info)
      : heads_(info.node.attrInt("num_heads", 0)), scale_(info.node.attrFloat("scale", 0.0f)),
        maskFilter_(info.node.attrFloat("mask_filter_value", -10000.0f)),
        causal_(info.node.attrInt("unidirectional", 0) != 0) {
    const DataType storage = floatStorage(info);
    half_ = storage == DataType::FLOAT16;
    gatherShader_ = useShader(storedAs(ShaderVariant{"multi_head_attention", {{"GATHER", "1"}}, 4, kLocal}, storage));
    if (half_) {
      floatGatherShader_ = useShader(
          storedAs(ShaderVariant{"multi_head_attention", {{"GATHER", "1"}, {"BLOCK_FLOAT", "1"}}, 4, kLocal}, storage));
    }
    int mode = 0;  // key_padding_mask's form, from its rank (the capability check made sure it is known)
    if (info.node.inputs.size() > 4 && !info.node.inputs[4].empty()) {
      const ir::ValueInfo* declared = info.inputInfo.size() > 4 ? info.inputInfo[4] : nullptr;
      const Tensor* constant = info.constantInputs.size() > 4 ? info.constantInputs[4] : nullptr;
      const size_t rank = declared && declared->shape ? declared->shape->size() : (constant ? constant->rank() : 0);
      mode = static_cast<int>(std::min<size_t>(rank, 3));
    }
    ShaderVariant attend{"multi_head_attention", {}, 8, kLocal};
    attend.define("GATHER", 0).define("MASK", mode).define("MAX_HEAD", kMaxHead).define("KV_FLOAT", half_ ? 1 : 0);
    attendShader_ = useShader(storedAs(attend, storage));
    maskMode_ = mode;
  }

  Status record(RecordContext& ctx) override {
    KILN_ASSIGN_OR_RETURN(const VkTensor* q, ctx.deviceInput(0));
    KILN_ASSIGN_OR_RETURN(const VkTensor* k, ctx.deviceInput(1));
    KILN_ASSIGN_OR_RETURN(const VkTensor* v, ctx.deviceInput(2));
    if (q->shape.size() != 3) return fail("query must be [batch, seq, hidden], got " + shapeToString(q->shape));
    if (heads_ <= 0 || q->shape[2] % heads_ != 0) return fail("query's hidden size is not a multiple of num_heads");
    const int64_t batch = q->shape[0], seq = q->shape[1], head = q->shape[2] / heads_;
    if (head > kMaxHead) return fail("head size " + std::to_string(head) + " is over " + std::to_string(kMaxHead));
    const bool bnsh = k->shape.size() == 4;
    int64_t kvSeq = 0, vHead = 0;
    if (!bnsh && k->shape.size() == 3 && v->shape.size() == 3) {
      kvSeq = k->shape[1];
      if (k->shape != Shape{batch, kvSeq, heads_ * head} || v->shape[0] != batch || v->shape[1] != kvSeq ||
          v->shape[2] % heads_ != 0) {
        return fail("key " + shapeToString(k->shape) + " and value " + shapeToString(v->shape) +
                    " must be [batch, kv_seq, heads * head]");
      }
      vHead = v->shape[2] / heads_;
    } else if (bnsh && v->shape.size() == 4) {
      kvSeq = k->shape[2];
      vHead = v->shape[3];
      if (k->shape != Shape{batch, heads_, kvSeq, head} || v->shape != Shape{batch, heads_, kvSeq, vHead}) {
        return fail("4-D key " + shapeToString(k->shape) + " and value " + shapeToString(v->shape) +
                    " must be [batch, heads, kv_seq, head]");
      }
    } else {
      return fail("key " + shapeToString(k->shape) + " and value " + shapeToString(v->shape) + " do not match");
    }
    const VkTensor* bias = ctx.input(3) ? nullptr : q;
    if (ctx.input(3)) {
      KILN_ASSIGN_OR_RETURN(bias, ctx.deviceInput(3));
      if (bias->shape != Shape{heads_ * (2 * head + vHead)}) {
        return fail("bias must be [" + std::to_string(heads_ * (2 * head + vHead)) + "]");
      }
    }
    const VkTensor* pastK = nullptr;
    const VkTensor* pastV = nullptr;
    int64_t pastLen = 0;
    if (ctx.input(6) || ctx.input(7)) {
      if (!ctx.input(6) || !ctx.input(7)) return fail("past_key and past_value come together");
      KILN_ASSIGN_OR_RETURN(pastK, ctx.deviceInput(6));
      KILN_ASSIGN_OR_RETURN(pastV, ctx.deviceInput(7));
      pastLen = pastK->shape.size() == 4 ? pastK->shape[2] : -1;
      if (pastK->shape != Shape{batch, heads_, pastLen, head} || pastV->shape != Shape{batch, heads_, pastLen, vHead}) {
        return fail("past_key and past_value must be [batch, heads, past, head]");
      }
    }
    if (bnsh && (ctx.input(3) || pastK)) return fail("a 4-D key/value takes no bias and no past");
    const int64_t total = pastLen + kvSeq;
    const VkTensor* mask = q;
    if (ctx.input(4)) {
      KILN_ASSIGN_OR_RETURN(mask, ctx.deviceInput(4));
      const bool fits = mask->dtype == DataType::INT32 && maskModeOf(mask->shape) == maskMode_ &&
                        (mask->shape == Shape{batch} || mask->shape == Shape{batch, total} ||
                         mask->shape == Shape{batch, seq, total});
      if (!fits) return fail("key_padding_mask must be int32 [batch], [batch, total] or [batch, seq, total]");
    }
    const VkTensor* attnBias = q;
    std::vector<uint32_t> biasStrides(4, 0);
    if (ctx.input(5)) {
      KILN_ASSIGN_OR_RETURN(attnBias, ctx.deviceInput(5));
      const Shape& s = attnBias->shape;
      if (s.size() != 4 || (s[0] != 1 && s[0] != batch) || (s[1] != 1 && s[1] != heads_) || s[2] != seq || s[3] != total) {
        return fail("attention_bias must be [batch or 1, heads or 1, seq, total], got " + shapeToString(s));
      }
      biasStrides = broadcastStrides(s, {batch, heads_, seq, total});
    }

    KILN_ASSIGN_OR_RETURN(const VkTensor* y, ctx.allocateOutput(0, q->dtype, {batch, seq, heads_ * vHead}));
    const VkTensor* kvBias = ctx.input(3) ? bias : nullptr;
    KILN_ASSIGN_OR_RETURN(BufferRange keys, block(ctx, 1, bnsh, *k, pastK, kvBias, total, pastLen, kvSeq, head,
                                                  heads_ * head, q->dtype, batch));
    KILN_ASSIGN_OR_RETURN(BufferRange values, block(ctx, 2, bnsh, *v, pastV, kvBias, total, pastLen, kvSeq, vHead,
                                                    2 * heads_ * head, q->dtype, batch));
    const int64_t rows = batch * heads_ * seq;
    if (rows == 0) return Status::ok();
    KILN_ASSIGN_OR_RETURN(BufferRange scores, ctx.scratch(static_cast<uint64_t>(rows * std::max<int64_t>(total, 1)) * 4));
    const uint32_t groupStride = static_cast<uint32_t>(std::min<int64_t>(rows, kMaxGroupsX));
    const std::array<uint32_t, 3> groups{groupStride, static_cast<uint32_t>((rows + groupStride - 1) / groupStride), 1};
    const float scale = scale_ > 0.0f ? scale_ : static_cast<float>(1.0 / std::sqrt(static_cast<double>(head)));
    PushConstants push;
    push.u32(rows).u32(groupStride).u32(seq).u32(heads_).u32(total).u32(pastLen).u32(head).u32(vHead);
    push.u32(ctx.input(3) ? 1 : 0).u32(causal_ ? 1 : 0).f32(scale).f32(maskFilter_).u32(ctx.input(5) ? 1 : 0);
    push.u32Array(biasStrides, 4);
    const BufferRange buffers[] = {q->range(),    keys, values, bias->range(), mask->range(), attnBias->range(),
                                   scores,        y->range()};
    return ctx.dispatch(attendShader_, buffers, push.data(), push.size(), groups);
  }

 private:
  // The [batch, heads, total, size] block of keys (output 1) or values (output 2) the scores read. Present (when
  // requested) is a 4-D input itself or gathered from past and `now` (+ bias); the scores read present, or a
  // scratch gather, or for a half model a float32 gather (biased rows unrounded).
  Result<BufferRange> block(RecordContext& ctx, size_t output, bool bnsh, const VkTensor& now, const VkTensor* past,
                            const VkTensor* bias, int64_t total, int64_t pastLen, int64_t kvSeq, int64_t size,
                            int64_t biasOffset, DataType dtype, int64_t batch) {
    const Shape shape{batch, heads_, total, size};
    const Gather gather{&now, past, bias, total, pastLen, kvSeq, size, biasOffset, bnsh};
    BufferRange present;
    if (output < ctx.outputCount()) {
      if (bnsh) {  // the cache itself (input `output` is key for output 1, value for output 2)
        KILN_RETURN_IF_ERROR(ctx.aliasOutput(output, output, shape));
        present = now.range();
      } else {
        KILN_ASSIGN_OR_RETURN(const VkTensor* allocated, ctx.allocateOutput(output, dtype, shape));
        present = allocated->range();
        KILN_RETURN_IF_ERROR(dispatchGather(ctx, gatherShader_, gather, present));
      }
    }
    const uint64_t count = static_cast<uint64_t>(std::max<int64_t>(shapeSize(shape), 1));
    if (half_) {
      KILN_ASSIGN_OR_RETURN(BufferRange block, ctx.scratch(count * 4));
      KILN_RETURN_IF_ERROR(dispatchGather(ctx, floatGatherShader_, gather, block));
      return block;
    }
    if (present.valid()) return present;
    if (bnsh) return now.range();
    KILN_ASSIGN_OR_RETURN(BufferRange block, ctx.scratch(count * dataTypeSize(dtype)));
    KILN_RETURN_IF_ERROR(dispatchGather(ctx, gatherShader_, gather, block));
    return block;
  }

  struct Gather {
    const VkTensor* now;
    const VkTensor* past;  // null without a past
    const VkTensor* bias;  // null without a bias
    int64_t total, pastLen, kvSeq, size, biasOffset;
    bool nowBnsh;
  };

  Status dispatchGather(RecordContext& ctx, uint32_t shader, const Gather& g, const BufferRange& target) {
    const uint64_t count = static_cast<uint64_t>(shapeSize({g.now->shape[0], heads_, g.total, g.size}));
    if (count == 0) return Status::ok();
    uint32_t rowStride = 0;
    const auto groups = linearGroups(count, kLocal, &rowStride);
    PushConstants push;
    push.u32(count).u32(rowStride).u32(heads_).u32(g.total).u32(g.pastLen).u32(g.kvSeq).u32(g.size);
    push.u32(g.bias ? 1 : 0).u32(g.biasOffset).u32(g.nowBnsh ? 1 : 0);
    const BufferRange buffers[] = {g.now->range(), g.past ? g.past->range() : g.now->range(),
                                   g.bias ? g.bias->range() : g.now->range(), target};
    return ctx.dispatch(shader, buffers, push.data(), push.size(), groups);
  }

  Status fail(const std::string& message) const {
    return Status(StatusCode::INVALID_ARGUMENT, "MultiHeadAttention: " + message);
  }

  int64_t heads_;
  float scale_, maskFilter_;
  bool causal_;
  bool half_ = false;  // float16 storage: the scores read float32 gathers
  int maskMode_ = 0;
  uint32_t gatherShader_ = 0, floatGatherShader_ = 0, attendShader_ = 0;
};

NodeSupport checkMultiHeadAttention(const SupportQuery& q) {
  NodeSupport s = requireFloat(q, {0, 1, 2, 3, 5, 6, 7});
  if (!s.supported) return s;
  if (!q.hasInput(1) || !q.hasInput(2)) return unsupported("packed QKV (no key/value inputs)");
  if (q.inputRank(0) != 3 || q.inputRank(1) == 5) return unsupported("packed QKV or KV");
  if (q.hasInput(8) || q.hasInput(9)) return unsupported("past_sequence_length and cache_indirection (beam search)");
  if (requested(q.node, 3)) return unsupported("the qk output");
  if (q.hasInput(4)) {
    if (q.inputType(4) != DataType::INT32) return unsupported("key_padding_mask is not int32");
    if (q.inputRank(4) < 1) return unsupported("key_padding_mask of unknown rank");
  }
  return s;
}

}  // namespace

void registerMultiHeadAttentionKernels(std::vector<KernelEntry>& out) {
  out.push_back({"MultiHeadAttention", 1, 1 << 30, checkMultiHeadAttention,
                 [](const KernelCreateInfo& info) -> Result<std::unique_ptr<VkKernel>> {
                   return std::unique_ptr<VkKernel>(new MultiHeadAttentionKernel(info));
                 },
                 ir::kMicrosoftDomain});
}

}  // namespace kiln::vk
