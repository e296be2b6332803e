// Vulkan kernel: com.microsoft GroupQueryAttention (shaders/group_query_attention.comp), the attention of exported
// decoders, so a decoder layer stays in one Vulkan partition and its key/value cache on the device.
//  - query [batch, seq, heads * head] with key/value [batch, seq, kv_heads * head], or packed QKV in query;
//  - past_key/past_value [batch, kv_heads, past, head]; present [batch, kv_heads, max(total, past), head]: each
//    sequence's cached positions, this step's keys (rotated with do_rotary) and values, then zeros;
//  - seqlens_k (int32 [batch]) is read by the shaders on the device; total_sequence_length must be known on the
//    host at record time (it sets present's shape), as it is when computed from the attention mask's shape;
//  - scale, softcap, local_window_size, smooth_softmax as the CPU kernel (engine/src/ep/cpu/kernels/
//    group_query_attention.cpp) computes them.
// Two dispatches: the presents, then one workgroup per (batch, head, query position) over a scratch row of scores.
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

class GroupQueryAttentionKernel final : public VkKernel {
 public:
  explicit GroupQueryAttentionKernel(const KernelCreateInfo& info)
      : heads_(info.node.attrInt("num_heads", 0)),
        kvHeads_(info.node.attrInt("kv_num_heads", 0)),
        scale_(info.node.attrFloat("scale", 0.0f)),
        softcap_(info.node.attrFloat("softcap", 0.0f)),
        localWindow_(info.node.attrInt("local_window_size", -1)),
        rotary_(info.node.attrInt("do_rotary", 0) != 0),
        interleaved_(info.node.attrInt("rotary_interleaved", 0) != 0),
        smooth_(info.node.attrInt("smooth_softmax", 0) != 0) {
    const DataType storage = floatStorage(info);
    ShaderVariant present{"group_query_attention", {}, 9, kLocal};
    present.define("PRESENT").define("ROTARY", rotary_ ? 1 : 0).define("MAX_HEAD", kMaxHead);
    presentShader_ = useShader(storedAs(present, storage));
    ShaderVariant attend{"group_query_attention", {}, 8, kLocal};
    attend.define("PRESENT", 0).define("ROTARY", rotary_ ? 1 : 0).define("MAX_HEAD", kMaxHead);
    attendShader_ = useShader(storedAs(attend, storage));
  }

  Status record(RecordContext& ctx) override {
    KILN_ASSIGN_OR_RETURN(const VkTensor* q, ctx.deviceInput(0));
    const bool packed = ctx.input(1) == nullptr;
    if (q->shape.size() != 3) return fail("query must be [batch, seq, hidden], got " + shapeToString(q->shape));
    if (heads_ <= 0 || kvHeads_ <= 0 || heads_ % kvHeads_ != 0) return fail("num_heads must be a multiple of kv_num_heads");
    const int64_t batch = q->shape[0], seq = q->shape[1];
    const int64_t parts = packed ? heads_ + 2 * kvHeads_ : heads_;
    if (q->shape[2] % parts != 0) return fail("query's hidden size does not split into " + std::to_string(parts) + " heads");
    const int64_t head = q->shape[2] / parts;
    if (head > kMaxHead) return fail("head size " + std::to_string(head) + " is over " + std::to_string(kMaxHead));
    const VkTensor* k = q;
    const VkTensor* v = q;
    if (!packed) {
      KILN_ASSIGN_OR_RETURN(k, ctx.deviceInput(1));
      KILN_ASSIGN_OR_RETURN(v, ctx.deviceInput(2));
      const Shape kvShape{batch, seq, kvHeads_ * head};
      if (k->shape != kvShape || v->shape != kvShape) {
        return fail("key " + shapeToString(k->shape) + " and value " + shapeToString(v->shape) + " must be " +
                    shapeToString(kvShape));
      }
    }
    const VkTensor* pastK = k;
    const VkTensor* pastV = k;
    int64_t pastLen = 0;
    if (ctx.input(3) || ctx.input(4)) {
      KILN_ASSIGN_OR_RETURN(pastK, ctx.deviceInput(3));
      KILN_ASSIGN_OR_RETURN(pastV, ctx.deviceInput(4));
      pastLen = pastK->shape.size() == 4 ? pastK->shape[2] : -1;
      const Shape pastShape{batch, kvHeads_, pastLen, head};
      if (pastK->shape != pastShape || pastV->shape != pastShape) {
        return fail("past_key and past_value must be " + shapeToString(pastShape));
      }
    }
    KILN_ASSIGN_OR_RETURN(const VkTensor* seqlens, ctx.deviceInput(5));
    if (seqlens->dtype != DataType::INT32 || seqlens->elementCount() != batch) return fail("seqlens_k must be int32 [batch]");
    KILN_ASSIGN_OR_RETURN(const std::vector<int64_t> totalValue, hostInts(ctx.input(6), "total_sequence_length"));
    if (totalValue.size() != 1) return fail("total_sequence_length must be one value");
    const int64_t total = totalValue[0];
    const int64_t presentLen = std::max(total, pastLen);
    const bool firstPrompt = seq == total;
    if (!firstPrompt && seq > 1 && batch != 1) return fail("a prompt after a cache (seq > 1) needs batch 1");
    if (total < 1 || (!firstPrompt && total - seq > pastLen)) {
      return fail("total_sequence_length " + std::to_string(total) + " does not fit a step of " + std::to_string(seq) +
                  " after a cache of " + std::to_string(pastLen));
    }
    const VkTensor* cosCache = q;
    const VkTensor* sinCache = q;
    int64_t rotaryDim = 0, positions = 1;
    if (rotary_) {
      KILN_ASSIGN_OR_RETURN(cosCache, ctx.deviceInput(7));
      KILN_ASSIGN_OR_RETURN(sinCache, ctx.deviceInput(8));
      if (cosCache->shape.size() != 2 || sinCache->shape != cosCache->shape || 2 * cosCache->shape[1] > head) {
        return fail("cos_cache and sin_cache must both be [max_position, at most head / 2]");
      }
      rotaryDim = 2 * cosCache->shape[1];
      positions = cosCache->shape[0];
      if (presentLen > positions) return fail("positions up to " + std::to_string(presentLen - 1) + " are outside the caches");
    }

    const Shape presentShape{batch, kvHeads_, presentLen, head};
    KILN_ASSIGN_OR_RETURN(const VkTensor* presentK, ctx.allocateOutput(1, q->dtype, presentShape));
    KILN_ASSIGN_OR_RETURN(const VkTensor* presentV, ctx.allocateOutput(2, q->dtype, presentShape));
    KILN_ASSIGN_OR_RETURN(const VkTensor* y, ctx.allocateOutput(0, q->dtype, {batch, seq, heads_ * head}));
    if (shapeSize(presentShape) == 0 || batch * seq == 0) return Status::ok();

    const int64_t rowWidth = packed ? parts * head : kvHeads_ * head;
    {
      uint32_t rowStride = 0;
      const uint64_t count = static_cast<uint64_t>(shapeSize(presentShape));
      const auto groups = linearGroups(count, kLocal, &rowStride);
      PushConstants push;
      push.u32(count).u32(rowStride).u32(seq).u32(kvHeads_).u32(presentLen).u32(pastLen).u32(head).u32(rotaryDim);
      push.u32(firstPrompt ? 1 : 0).u32(rowWidth).u32(packed ? heads_ * head : 0);
      push.u32(packed ? (heads_ + kvHeads_) * head : 0).u32(interleaved_ ? 1 : 0).u32(positions);
      const BufferRange buffers[] = {k->range(),       v->range(),        pastK->range(),    pastV->range(),
                                     seqlens->range(), cosCache->range(), sinCache->range(), presentK->range(),
                                     presentV->range()};
      KILN_RETURN_IF_ERROR(ctx.dispatch(presentShader_, buffers, push.data(), push.size(), groups));
    }
    const int64_t rows = batch * heads_ * seq;
    KILN_ASSIGN_OR_RETURN(BufferRange scores, ctx.scratch(static_cast<uint64_t>(rows * presentLen) * 4));
    const uint32_t groupStride = static_cast<uint32_t>(std::min<int64_t>(rows, kMaxGroupsX));
    const std::array<uint32_t, 3> groups{groupStride, static_cast<uint32_t>((rows + groupStride - 1) / groupStride), 1};
    const float scale = scale_ > 0.0f ? scale_ : static_cast<float>(1.0 / std::sqrt(static_cast<double>(head)));
    PushConstants push;
    push.u32(rows).u32(groupStride).u32(seq).u32(heads_).u32(kvHeads_).u32(presentLen).u32(head).u32(rotaryDim);
    push.u32(firstPrompt ? 1 : 0).u32(packed ? parts * head : heads_ * head).u32(interleaved_ ? 1 : 0);
    push.f32(scale).f32(softcap_).i32(static_cast<int32_t>(localWindow_)).u32(smooth_ ? 1 : 0).u32(positions);
    const BufferRange buffers[] = {q->range(),        presentK->range(), presentV->range(), seqlens->range(),
                                   cosCache->range(), sinCache->range(), scores,            y->range()};
    return ctx.dispatch(attendShader_, buffers, push.data(), push.size(), groups);
  }

 private:
  Status fail(const std::string& message) const {
    return Status(StatusCode::INVALID_ARGUMENT, "GroupQueryAttention: " + message);
  }

  int64_t heads_, kvHeads_;
  float scale_, softcap_;
  int64_t localWindow_;
  bool rotary_, interleaved_, smooth_;
  uint32_t presentShader_ = 0, attendShader_ = 0;
};

NodeSupport checkGroupQueryAttention(const SupportQuery& q) {
  NodeSupport s = requireFloat(q, {0});
  if (!s.supported) return s;
  for (size_t i : {9u, 10u, 11u}) {
    if (q.hasInput(i)) return unsupported("position_ids, attention_bias and head_sink are not supported");
  }
  if (requested(q.node, 3)) return unsupported("the output_qk output");
  if (q.inputType(5) != DataType::INT32) return unsupported("seqlens_k is not int32");
  return requireHostInput(q, 6, "total_sequence_length");
}

}  // namespace

void registerAttentionKernels(std::vector<KernelEntry>& out) {
  out.push_back({"GroupQueryAttention", 1, 1 << 30, checkGroupQueryAttention,
                 [](const KernelCreateInfo& info) -> Result<std::unique_ptr<VkKernel>> {
                   return std::unique_ptr<VkKernel>(new GroupQueryAttentionKernel(info));
                 },
                 ir::kMicrosoftDomain});
}

}  // namespace kiln::vk
