// GroupQueryAttention (com.microsoft, onnxruntime's decoder attention with a key/value cache), as its CPU kernel
// computes it:
//  - query [batch, seq, heads * head] with key/value [batch, seq, kv_heads * head], or query packing all three
//    ([batch, seq, (heads + 2 kv_heads) * head]) and no key/value; query head h reads kv head h / (heads / kv_heads);
//  - past_key/past_value [batch, kv_heads, past_len, head] (BNSH) hold each sequence's cache, right-padded;
//    seqlens_k[b] + 1 is sequence b's total length after this step and total_sequence_length the longest; the first
//    prompt (seq == total_sequence_length) has no past, later steps append at total - seq;
//  - present_key/present_value [batch, kv_heads, max(total_sequence_length, past_len), head]: each sequence's cached
//    positions, then this step's keys/values, then zeros, so a caller feeds present back as past;
//  - do_rotary rotates the new query and key heads at their positions with cos_cache/sin_cache
//    [max_position, rotary_dim / 2] first (rotary_interleaved picks the pairing);
//  - scores = scale (default 1/sqrt(head)) q.k, softcap * tanh(scores / softcap) when softcap > 0; query position p
//    sees the local_window_size keys up to p (all of [0, p] when local_window_size < 0); softmax (smooth_softmax adds
//    an implicit zero logit) weighs the values.
// Computes in float for halves. position_ids, attention_bias, head_sink and the qk output are NOT_IMPLEMENTED;
// inconsistent shapes or lengths are INVALID_ARGUMENT.
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "ep/cpu/kernel_registry.h"
#include "ep/cpu/kernel_utils.h"
#include "ep/cpu/kernels/attention_row.h"
#include "ep/cpu/kernels/rotary.h"

namespace kiln::cpu {
namespace {

struct GqaDims {
  int64_t batch = 0, seq = 0, heads = 0, kvHeads = 0, head = 0;
  int64_t pastLen = 0;     // past buffer length (0 without past)
  int64_t presentLen = 0;  // present buffer length
  int64_t rotary = 0;      // rotated values per head (0: no rotary)
  bool packed = false;     // query packs Q, K and V
  bool firstPrompt = false;
  std::vector<int64_t> total;  // per sequence: length after this step
  std::vector<int64_t> past;   // per sequence: cached positions before this step
};

class GroupQueryAttentionKernel : public Kernel {
 public:
  explicit GroupQueryAttentionKernel(const KernelInfo& info)
      : node_(info.node),
        label_(info.node.label()),
        heads_(info.node.attrInt("num_heads", 0)),
        kvHeads_(info.node.attrInt("kv_num_heads", 0)),
        scale_(info.node.attrFloat("scale", 0.0f)),
        softcap_(info.node.attrFloat("softcap", 0.0f)),
        localWindow_(info.node.attrInt("local_window_size", -1)),
        doRotary_(info.node.attrInt("do_rotary", 0) != 0),
        interleaved_(info.node.attrInt("rotary_interleaved", 0) != 0),
        smoothSoftmax_(info.node.attrInt("smooth_softmax", 0) != 0),
        pool_(info.threadPool) {}

  Status compute(KernelContext& ctx) override {
    for (size_t i : {9u, 10u, 11u}) {
      if (ctx.hasInput(i)) {
        return notImplemented(label_ + ": input " + std::to_string(i) +
                              " (position_ids, attention_bias or head_sink) is not supported");
      }
    }
    if (ctx.outputCount() > 3 && node_.outputs.size() > 3 && !node_.outputs[3].empty()) {
      return notImplemented(label_ + ": the output_qk output is not supported");
    }
    GqaDims d;
    KILN_RETURN_IF_ERROR(readDims(ctx, d));
    const Tensor& q = *ctx.input(0);
    return dispatchType<float, Float16, BFloat16>(q.dtype(), [&]<class T>() { return run<T>(ctx, d); });
  }

 private:
  Status readDims(const KernelContext& ctx, GqaDims& d) const {
    const Tensor* q = ctx.input(0);
    const Tensor* k = ctx.input(1);
    const Tensor* v = ctx.input(2);
    const Tensor* pastK = ctx.input(3);
    const Tensor* pastV = ctx.input(4);
    const Tensor* seqlens = ctx.input(5);
    const Tensor* totalLength = ctx.input(6);
    if (!q || !seqlens || !totalLength) return fail("inputs query, seqlens_k and total_sequence_length are required");
    if (heads_ <= 0 || kvHeads_ <= 0 || heads_ % kvHeads_ != 0) {
      return fail("num_heads " + std::to_string(heads_) + " must be a positive multiple of kv_num_heads " +
                  std::to_string(kvHeads_));
    }
    if (q->rank() != 3) return fail("query must be [batch, seq, hidden], got " + shapeToString(q->shape()));
    d.batch = q->shape()[0];
    d.seq = q->shape()[1];
    d.heads = heads_;
    d.kvHeads = kvHeads_;
    d.packed = k == nullptr;
    if (d.packed != (v == nullptr)) return fail("key and value come together (both absent for packed QKV)");
    const int64_t parts = d.packed ? heads_ + 2 * kvHeads_ : heads_;
    if (q->shape()[2] % parts != 0) {
      return fail("query's hidden size " + std::to_string(q->shape()[2]) + " does not split into " +
                  std::to_string(parts) + " heads");
    }
    d.head = q->shape()[2] / parts;
    if (!d.packed) {
      const Shape kvShape{d.batch, d.seq, kvHeads_ * d.head};
      if (k->shape() != kvShape || v->shape() != kvShape) {
        return fail("key " + shapeToString(k->shape()) + " and value " + shapeToString(v->shape()) + " must be " +
                    shapeToString(kvShape));
      }
      if (k->dtype() != q->dtype() || v->dtype() != q->dtype()) return fail("key and value must have query's type");
    }
    if ((pastK == nullptr) != (pastV == nullptr)) return fail("past_key and past_value come together");
    if (pastK) {
      if (pastK->rank() != 4) return fail("past_key must be [batch, kv_heads, past, head]");
      d.pastLen = pastK->shape()[2];
      const Shape pastShape{d.batch, kvHeads_, d.pastLen, d.head};
      if (pastK->shape() != pastShape || pastV->shape() != pastShape || pastK->dtype() != q->dtype() ||
          pastV->dtype() != q->dtype()) {
        return fail("past_key " + shapeToString(pastK->shape()) + " and past_value " +
                    shapeToString(pastV->shape()) + " must both be " + shapeToString(pastShape) + " of query's type");
      }
    }
    if (seqlens->dtype() != DataType::INT32 || seqlens->numel() != d.batch) {
      return fail("seqlens_k must be int32 [batch] = [" + std::to_string(d.batch) + "]");
    }
    if (totalLength->dtype() != DataType::INT32 || totalLength->numel() != 1) {
      return fail("total_sequence_length must be one int32");
    }
    const int64_t totalSequenceLength = totalLength->data<int32_t>()[0];
    d.presentLen = std::max(totalSequenceLength, d.pastLen);
    d.firstPrompt = d.seq == totalSequenceLength;
    if (!d.firstPrompt && d.seq > 1 && d.batch != 1) {
      return fail("a prompt after a cache (seq > 1, seq != total_sequence_length) needs batch 1");
    }
    for (int64_t b = 0; b < d.batch; ++b) {
      const int64_t total = static_cast<int64_t>(seqlens->data<int32_t>()[b]) + 1;
      const int64_t past = d.firstPrompt ? 0 : total - d.seq;
      if (total < 1 || total > d.presentLen || past < 0 || past > d.pastLen) {
        return fail("seqlens_k[" + std::to_string(b) + "] = " + std::to_string(total - 1) +
                    " does not fit a step of " + std::to_string(d.seq) + " after a cache of " +
                    std::to_string(d.pastLen) + " with total_sequence_length " + std::to_string(totalSequenceLength));
      }
      d.total.push_back(total);
      d.past.push_back(past);
    }
    if (doRotary_) {
      const Tensor* cosCache = ctx.input(7);
      const Tensor* sinCache = ctx.input(8);
      if (!cosCache || !sinCache) return fail("do_rotary needs cos_cache and sin_cache");
      if (cosCache->rank() != 2 || sinCache->shape() != cosCache->shape() || cosCache->dtype() != q->dtype() ||
          sinCache->dtype() != q->dtype()) {
        return fail("cos_cache and sin_cache must both be [max_position, rotary_dim / 2] of query's type");
      }
      d.rotary = 2 * cosCache->shape()[1];
      if (d.rotary > d.head) return fail("the caches' width is more than half the head size");
      const int64_t positions = cosCache->shape()[0];
      for (int64_t b = 0; b < d.batch; ++b) {
        if (d.past[b] + d.seq > positions) {
          return fail("positions up to " + std::to_string(d.past[b] + d.seq - 1) + " are outside the caches' " +
                      std::to_string(positions) + " rows");
        }
      }
    }
    return Status::ok();
  }

  // Row (b, s, head h of `part`) of query: part 0 = Q, 1 = K, 2 = V when packed.
  int64_t queryRowOffset(const GqaDims& d, int64_t b, int64_t s, int64_t column) const {
    const int64_t width = (d.packed ? d.heads + 2 * d.kvHeads : d.heads) * d.head;
    return (b * d.seq + s) * width + column * d.head;
  }

  template <class T>
  Status run(KernelContext& ctx, const GqaDims& d) {
    using C = ComputeType<T>;
    const Tensor& q = *ctx.input(0);
    const T* qData = q.data<T>();
    const T* kData = d.packed ? qData : ctx.input(1)->data<T>();
    const T* vData = d.packed ? qData : ctx.input(2)->data<T>();
    const T* cosData = d.rotary ? ctx.input(7)->data<T>() : nullptr;
    const T* sinData = d.rotary ? ctx.input(8)->data<T>() : nullptr;
    const int64_t half = d.rotary / 2;
    // Offsets of K/V head h at (b, s) in their own tensors or in packed query.
    auto kvOffset = [&](int64_t b, int64_t s, int64_t h, bool value) {
      if (d.packed) return queryRowOffset(d, b, s, d.heads + (value ? d.kvHeads : 0) + h);
      return ((b * d.seq + s) * d.kvHeads + h) * d.head;
    };

    // Present = the past buffer with this step's keys/values (rotated keys) written at positions past[b]...
    const Shape presentShape{d.batch, d.kvHeads, d.presentLen, d.head};
    Tensor& presentK = ctx.allocateOutput(1, q.dtype(), presentShape);
    Tensor& presentV = ctx.allocateOutput(2, q.dtype(), presentShape);
    parallelFor(pool_, d.batch * d.kvHeads, 1, [&](int64_t begin, int64_t end) {
      for (int64_t bh = begin; bh < end; ++bh) {
        const int64_t b = bh / d.kvHeads, h = bh % d.kvHeads;
        T* kDst = presentK.data<T>() + bh * d.presentLen * d.head;
        T* vDst = presentV.data<T>() + bh * d.presentLen * d.head;
        const int64_t copied = d.past[b] * d.head;  // the rest stays zero, as in onnxruntime's present
        if (copied > 0) {
          std::copy_n(ctx.input(3)->data<T>() + bh * d.pastLen * d.head, copied, kDst);
          std::copy_n(ctx.input(4)->data<T>() + bh * d.pastLen * d.head, copied, vDst);
        }
        for (int64_t s = 0; s < d.seq; ++s) {
          const int64_t pos = d.past[b] + s;
          if (pos >= d.presentLen) break;  // padding of a shorter sequence in a batched first prompt
          const T* kSrc = kData + kvOffset(b, s, h, false);
          T* kRow = kDst + pos * d.head;
          if (d.rotary) {
            rotateHeadRow(kSrc, kRow, cosData + pos * half, sinData + pos * half, d.rotary, d.head, interleaved_);
          } else {
            std::copy_n(kSrc, d.head, kRow);
          }
          std::copy_n(vData + kvOffset(b, s, h, true), d.head, vDst + pos * d.head);
        }
      }
    });

    const C scale = scale_ > 0.0f ? static_cast<C>(scale_) : static_cast<C>(1.0 / std::sqrt(double(d.head)));
    const int64_t groups = d.heads / d.kvHeads;
    const AttentionRowOptions rowOptions{softcap_, smoothSoftmax_};
    Tensor& y = ctx.allocateUninitializedOutput(0, q.dtype(), {d.batch, d.seq, d.heads * d.head});
    parallelFor(pool_, d.batch * d.heads, 1, [&](int64_t begin, int64_t end) {
      std::vector<C> query(static_cast<size_t>(d.head)), acc(static_cast<size_t>(d.head));
      std::vector<C> scores(static_cast<size_t>(d.presentLen));
      for (int64_t bh = begin; bh < end; ++bh) {
        const int64_t b = bh / d.heads, h = bh % d.heads;
        const int64_t kvIndex = b * d.kvHeads + h / groups;
        const T* keys = presentK.data<T>() + kvIndex * d.presentLen * d.head;
        const T* values = presentV.data<T>() + kvIndex * d.presentLen * d.head;
        for (int64_t s = 0; s < d.seq; ++s) {
          const int64_t pos = d.past[b] + s;
          const T* qSrc = qData + queryRowOffset(d, b, s, h);
          if (d.rotary) {
            rotateHeadRow(qSrc, query.data(), cosData + pos * half, sinData + pos * half, d.rotary, d.head,
                          interleaved_);
          } else {
            for (int64_t i = 0; i < d.head; ++i) query[i] = static_cast<C>(qSrc[i]);
          }
          const int64_t last = std::min(pos, d.total[b] - 1);
          const int64_t first = localWindow_ >= 0 ? std::max<int64_t>(0, pos - localWindow_ + 1) : 0;
          attendRow(query.data(), keys, values, d.head, d.head, first, last, scale, rowOptions,
                    [](int64_t, C score) { return score; }, scores.data(), acc.data());
          T* out = y.data<T>() + ((b * d.seq + s) * d.heads + h) * d.head;
          for (int64_t i = 0; i < d.head; ++i) out[i] = T(acc[i]);
        }
      }
    });
    return Status::ok();
  }

  Status fail(const std::string& message) const { return invalidArgument(label_ + ": " + message); }

  const ir::Node& node_;
  std::string label_;
  int64_t heads_, kvHeads_;
  float scale_, softcap_;
  int64_t localWindow_;
  bool doRotary_, interleaved_, smoothSoftmax_;
  ThreadPool* pool_;
};

}  // namespace

void registerGroupQueryAttentionKernels(KernelRegistry& registry) {
  registry.add("GroupQueryAttention", 1, kAnyOpset, makeFactory<GroupQueryAttentionKernel>(), ir::kMicrosoftDomain);
}

}  // namespace kiln::cpu
