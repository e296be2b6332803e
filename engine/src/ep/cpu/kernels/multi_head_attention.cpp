// MultiHeadAttention (com.microsoft), as onnxruntime's CPU kernel computes it (encoders, cross attention, decoders
// with a past):
//  - query [batch, seq, heads * head]; key [batch, kv_seq, heads * head] with value [batch, kv_seq, heads * v_head]
//    (projected this step), or key/value [batch, heads, kv_seq, head] (a cross-attention cache, used as is);
//  - bias [heads * (2 head + v_head)] adds to query, key and value (not to a 4-D key/value);
//  - past_key/past_value [batch, heads, past, head] go before this step's keys/values; present_key/present_value
//    (optional) are the concatenations;
//  - scores = scale (default 1/sqrt(head)) q.k + mask + attention_bias, where masked positions (key_padding_mask 0
//    in [batch, total] or [batch, seq, total] form, keys at or past the length in [batch] form, and keys after the
//    query's position with unidirectional=1) take mask_filter_value (-10000 by default, not -inf, so a fully
//    masked row stays finite, as in onnxruntime); attention_bias [batch or 1, heads or 1, seq, total] adds.
// Computes in float for halves. Packed QKV or KV (5-D) is NOT_IMPLEMENTED, as on onnxruntime's CPU.
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "ep/cpu/kernel_registry.h"
#include "ep/cpu/kernel_utils.h"
#include "ep/cpu/kernels/attention_row.h"

namespace kiln::cpu {
namespace {

struct MhaDims {
  int64_t batch = 0, seq = 0, heads = 0, head = 0, vHead = 0, kvSeq = 0, past = 0, total = 0;
  bool kvIsBnsh = false;  // key/value given as [batch, heads, kv_seq, head]
};

class MultiHeadAttentionKernel : public Kernel {
 public:
  explicit MultiHeadAttentionKernel(const KernelInfo& info)
      : node_(info.node),
        label_(info.node.label()),
        heads_(info.node.attrInt("num_heads", 0)),
        scale_(info.node.attrFloat("scale", 0.0f)),
        maskFilter_(info.node.attrFloat("mask_filter_value", -10000.0f)),
        causal_(info.node.attrInt("unidirectional", 0) != 0),
        pool_(info.threadPool) {}

  Status compute(KernelContext& ctx) override {
    if (ctx.hasInput(8) || ctx.hasInput(9)) {
      return notImplemented(label_ + ": past_sequence_length and cache_indirection (beam search) are not supported");
    }
    if (wanted(ctx, 3)) return notImplemented(label_ + ": the qk output is not supported");
    MhaDims d;
    KILN_RETURN_IF_ERROR(readDims(ctx, d));
    return dispatchType<float, Float16, BFloat16>(ctx.input(0)->dtype(), [&]<class T>() { return run<T>(ctx, d); });
  }

 private:
  Status readDims(const KernelContext& ctx, MhaDims& d) const {
    const Tensor* q = ctx.input(0);
    const Tensor* k = ctx.input(1);
    const Tensor* v = ctx.input(2);
    const Tensor* bias = ctx.input(3);
    const Tensor* pastK = ctx.input(6);
    const Tensor* pastV = ctx.input(7);
    if (!q || !k || !v) return fail("inputs query, key and value are required (packed QKV/KV is not supported)");
    if (heads_ <= 0) return fail("num_heads must be positive");
    if (q->rank() != 3) return notImplemented(label_ + ": query must be [batch, seq, hidden] (packed QKV is not supported)");
    if (k->dtype() != q->dtype() || v->dtype() != q->dtype()) return fail("key and value must have query's type");
    d.batch = q->shape()[0];
    d.seq = q->shape()[1];
    d.heads = heads_;
    if (q->shape()[2] % heads_ != 0) return fail("query's hidden size is not a multiple of num_heads");
    d.head = q->shape()[2] / heads_;
    if (k->rank() == 3 && v->rank() == 3) {
      d.kvSeq = k->shape()[1];
      if (k->shape() != Shape{d.batch, d.kvSeq, heads_ * d.head} || v->shape()[0] != d.batch ||
          v->shape()[1] != d.kvSeq || v->shape()[2] % heads_ != 0) {
        return fail("key " + shapeToString(k->shape()) + " and value " + shapeToString(v->shape()) +
                    " must be [batch, kv_seq, heads * head] for query " + shapeToString(q->shape()));
      }
      d.vHead = v->shape()[2] / heads_;
    } else if (k->rank() == 4 && v->rank() == 4) {
      d.kvIsBnsh = true;
      d.kvSeq = k->shape()[2];
      d.vHead = v->shape()[3];
      if (k->shape() != Shape{d.batch, heads_, d.kvSeq, d.head} || v->shape() != Shape{d.batch, heads_, d.kvSeq, d.vHead}) {
        return fail("4-D key " + shapeToString(k->shape()) + " and value " + shapeToString(v->shape()) +
                    " must be [batch, heads, kv_seq, head]");
      }
      if (bias || pastK) return fail("a 4-D key/value takes no bias and no past");
    } else {
      return notImplemented(label_ + ": key " + shapeToString(k->shape()) + " and value " +
                            shapeToString(v->shape()) + " (packed KV is not supported)");
    }
    if (bias && (bias->rank() != 1 || bias->shape()[0] != heads_ * (2 * d.head + d.vHead) || bias->dtype() != q->dtype())) {
      return fail("bias must be [" + std::to_string(heads_ * (2 * d.head + d.vHead)) + "] of query's type");
    }
    if ((pastK == nullptr) != (pastV == nullptr)) return fail("past_key and past_value come together");
    if (pastK) {
      d.past = pastK->rank() == 4 ? pastK->shape()[2] : -1;
      if (pastK->shape() != Shape{d.batch, heads_, d.past, d.head} ||
          pastV->shape() != Shape{d.batch, heads_, d.past, d.vHead} || pastK->dtype() != q->dtype() ||
          pastV->dtype() != q->dtype()) {
        return fail("past_key " + shapeToString(pastK->shape()) + " and past_value " +
                    shapeToString(pastV->shape()) + " must be [batch, heads, past, head] of query's type");
      }
    }
    d.total = d.past + d.kvSeq;
    return Status::ok();
  }

  // Whether key t is masked for query s of batch b by key_padding_mask (any of its forms) or causality.
  struct MaskReader {
    const Tensor* mask = nullptr;
    bool causal = false;
    int64_t seq = 0, total = 0, past = 0;
    bool masked(int64_t b, int64_t s, int64_t t) const {
      if (causal && t > past + s) return true;
      if (!mask) return false;
      const int32_t* m = mask->data<int32_t>();
      switch (mask->rank()) {
        case 1: return t >= m[b];
        case 2: return m[b * total + t] == 0;
        default: return m[(b * seq + s) * total + t] == 0;
      }
    }
  };

  Status checkMasks(const KernelContext& ctx, const MhaDims& d) const {
    if (const Tensor* mask = ctx.input(4)) {
      const bool fits = mask->dtype() == DataType::INT32 &&
                        (mask->shape() == Shape{d.batch} || mask->shape() == Shape{d.batch, d.total} ||
                         mask->shape() == Shape{d.batch, d.seq, d.total});
      if (!fits) {
        return fail("key_padding_mask must be int32 [batch], [batch, total] or [batch, seq, total] with total " +
                    std::to_string(d.total) + ", got " + shapeToString(mask->shape()));
      }
    }
    if (const Tensor* bias = ctx.input(5)) {
      const Shape& s = bias->shape();
      const bool fits = bias->rank() == 4 && (s[0] == 1 || s[0] == d.batch) && (s[1] == 1 || s[1] == d.heads) &&
                        s[2] == d.seq && s[3] == d.total && bias->dtype() == ctx.input(0)->dtype();
      if (!fits) {
        return fail("attention_bias must be [batch or 1, heads or 1, seq, total] = [" + std::to_string(d.batch) +
                    ", " + std::to_string(d.heads) + ", " + std::to_string(d.seq) + ", " +
                    std::to_string(d.total) + "] of query's type, got " + shapeToString(s));
      }
    }
    return Status::ok();
  }

  template <class T>
  Status run(KernelContext& ctx, const MhaDims& d) {
    using C = ComputeType<T>;
    KILN_RETURN_IF_ERROR(checkMasks(ctx, d));
    const Tensor& q = *ctx.input(0);
    const T* bias = ctx.hasInput(3) ? ctx.input(3)->data<T>() : nullptr;
    // Keys and values of every position (past first) as [batch, heads, total, size] in the compute type: present's
    // layout. A biased half row stays unrounded for the scores, as in onnxruntime; only present is rounded to T.
    auto gather = [&](const Tensor& now, const Tensor* past, int64_t size, int64_t biasOffset) {
      std::vector<C> all(static_cast<size_t>(d.batch * d.heads * d.total * size));
      for (int64_t bh = 0; bh < d.batch * d.heads; ++bh) {
        const int64_t b = bh / d.heads, h = bh % d.heads;
        C* dst = all.data() + bh * d.total * size;
        if (past) {
          const T* from = past->data<T>() + bh * d.past * size;
          for (int64_t i = 0; i < d.past * size; ++i) dst[i] = static_cast<C>(from[i]);
        }
        for (int64_t t = 0; t < d.kvSeq; ++t) {
          const T* src = d.kvIsBnsh ? now.data<T>() + (bh * d.kvSeq + t) * size
                                    : now.data<T>() + ((b * d.kvSeq + t) * d.heads + h) * size;
          C* row = dst + (d.past + t) * size;
          for (int64_t i = 0; i < size; ++i) {
            row[i] = static_cast<C>(src[i]) + (bias ? static_cast<C>(bias[biasOffset + h * size + i]) : C(0));
          }
        }
      }
      return all;
    };
    const std::vector<C> keys = gather(*ctx.input(1), ctx.input(6), d.head, d.heads * d.head);
    const std::vector<C> values = gather(*ctx.input(2), ctx.input(7), d.vHead, 2 * d.heads * d.head);
    if (wanted(ctx, 1)) {
      Tensor& t = ctx.allocateUninitializedOutput(1, q.dtype(), {d.batch, d.heads, d.total, d.head});
      std::transform(keys.begin(), keys.end(), t.data<T>(), [](C x) { return T(x); });
    }
    if (wanted(ctx, 2)) {
      Tensor& t = ctx.allocateUninitializedOutput(2, q.dtype(), {d.batch, d.heads, d.total, d.vHead});
      std::transform(values.begin(), values.end(), t.data<T>(), [](C x) { return T(x); });
    }

    const MaskReader mask{ctx.input(4), causal_, d.seq, d.total, d.past};
    const Tensor* attnBias = ctx.input(5);
    const std::vector<int64_t> biasStrides =
        attnBias ? broadcastStrides(attnBias->shape(), {d.batch, d.heads, d.seq, d.total}) : std::vector<int64_t>{};
    const C scale = scale_ > 0.0f ? static_cast<C>(scale_) : static_cast<C>(1.0 / std::sqrt(double(d.head)));
    const C filter = static_cast<C>(maskFilter_);
    Tensor& y = ctx.allocateUninitializedOutput(0, q.dtype(), {d.batch, d.seq, d.heads * d.vHead});
    parallelFor(pool_, d.batch * d.heads, 1, [&](int64_t begin, int64_t end) {
      std::vector<C> query(static_cast<size_t>(d.head)), acc(static_cast<size_t>(d.vHead));
      std::vector<C> scores(static_cast<size_t>(d.total));
      for (int64_t bh = begin; bh < end; ++bh) {
        const int64_t b = bh / d.heads, h = bh % d.heads;
        for (int64_t s = 0; s < d.seq; ++s) {
          const T* qSrc = q.data<T>() + ((b * d.seq + s) * d.heads + h) * d.head;
          for (int64_t i = 0; i < d.head; ++i) {
            query[i] = static_cast<C>(qSrc[i]) + (bias ? static_cast<C>(bias[h * d.head + i]) : C(0));
          }
          auto adjust = [&](int64_t t, C score) {
            if (mask.masked(b, s, t)) score += filter;
            if (attnBias) {
              const int64_t at = b * biasStrides[0] + h * biasStrides[1] + s * biasStrides[2] + t * biasStrides[3];
              score += static_cast<C>(attnBias->data<T>()[at]);
            }
            return score;
          };
          attendRow(query.data(), keys.data() + bh * d.total * d.head, values.data() + bh * d.total * d.vHead,
                    d.head, d.vHead, 0, d.total - 1, scale, AttentionRowOptions{}, adjust, scores.data(), acc.data());
          T* out = y.data<T>() + ((b * d.seq + s) * d.heads + h) * d.vHead;
          for (int64_t i = 0; i < d.vHead; ++i) out[i] = T(acc[i]);
        }
      }
    });
    return Status::ok();
  }

  bool wanted(const KernelContext& ctx, size_t i) const {
    return i < ctx.outputCount() && i < node_.outputs.size() && !node_.outputs[i].empty();
  }

  Status fail(const std::string& message) const { return invalidArgument(label_ + ": " + message); }

  const ir::Node& node_;
  std::string label_;
  int64_t heads_;
  float scale_, maskFilter_;
  bool causal_;
  ThreadPool* pool_;
};

}  // namespace

void registerMultiHeadAttentionKernels(KernelRegistry& registry) {
  registry.add("MultiHeadAttention", 1, kAnyOpset, makeFactory<MultiHeadAttentionKernel>(), ir::kMicrosoftDomain);
}

}  // namespace kiln::cpu
