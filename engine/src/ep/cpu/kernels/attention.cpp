// Attention (opset 23): scaled dot-product attention with grouped key/value heads and a key/value cache.
//  - Q/K/V are all 4-D ([batch, heads, seq, head_size]) or all 3-D ([batch, seq, heads * head_size], q_num_heads
//    and kv_num_heads required); q_num_heads must be a multiple of kv_num_heads (query head h reads key/value head
//    h / (q_num_heads / kv_num_heads)).
//  - past_key/past_value [batch, kv_heads, past, head_size] are prepended to K/V; present_key/present_value are the
//    concatenations (total = past + kv_seq).
//  - scores = scale * Q K^T (scale defaults to 1/sqrt(head_size)), then softcap * tanh(scores / softcap) when
//    softcap > 0, then the mask (bool: false masks; float: added; broadcast to [batch, q_heads, q_seq, total]) and
//    is_causal (query s sees keys t <= past + s) mask with the lowest finite float; a row with nothing visible
//    gets zero weights, so its output is 0 (onnxruntime 1.30's answer), not NaN.
//  - optional output 3 (qk_matmul_output_mode 0: the scaled scores; 3: the softmax) in [batch, q_heads, q_seq, total].
// Halves compute in float. Inconsistent shapes or attributes are INVALID_ARGUMENT.
#include <algorithm>
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "ep/cpu/kernel_registry.h"
#include "ep/cpu/kernel_utils.h"

namespace kiln::cpu {
namespace {

struct Dims {
  int64_t batch = 0, qHeads = 0, kvHeads = 0, qSeq = 0, kvSeq = 0, past = 0, total = 0, head = 0, vHead = 0;
  bool threeD = false;
};

class AttentionKernel : public Kernel {
 public:
  explicit AttentionKernel(const KernelInfo& info)
      : node_(info.node),
        label_(info.node.label()),
        causal_(info.node.attrInt("is_causal", 0) != 0),
        qHeadsAttr_(info.node.attrInt("q_num_heads", 0)),
        kvHeadsAttr_(info.node.attrInt("kv_num_heads", 0)),
        qkMode_(info.node.attrInt("qk_matmul_output_mode", 0)),
        hasScale_(info.node.hasAttribute("scale")),
        scale_(info.node.attrFloat("scale", 0.0f)),
        softcap_(info.node.attrFloat("softcap", 0.0f)),
        pool_(info.threadPool) {}

  Status compute(KernelContext& ctx) override {
    const Tensor* q = ctx.input(0);
    const Tensor* k = ctx.input(1);
    const Tensor* v = ctx.input(2);
    const Tensor* mask = ctx.input(3);
    const Tensor* pastK = ctx.input(4);
    const Tensor* pastV = ctx.input(5);
    if (!q || !k || !v) return fail("inputs Q, K and V are required");
    if (ctx.hasInput(6)) return notImplemented(label_ + ": nonpad_kv_seqlen (Attention-24) is not supported");
    if (hasScale_ && !(scale_ > 0.0f)) return fail("scale must be positive");
    if (softcap_ < 0.0f) return fail("softcap must not be negative");
    if (k->dtype() != q->dtype() || v->dtype() != q->dtype()) return fail("Q, K and V must share an element type");
    Dims d;
    KILN_RETURN_IF_ERROR(readDims(*q, *k, *v, pastK, pastV, d));
    const bool wantScores = requested(ctx, 3);
    if (wantScores && qkMode_ != 0 && qkMode_ != 3) {
      return notImplemented(label_ + ": qk_matmul_output_mode " + std::to_string(qkMode_) +
                            " is not supported (0 and 3 are)");
    }
    Shape maskShape;
    if (mask) {
      if (mask->dtype() != DataType::BOOL && mask->dtype() != q->dtype()) {
        return fail("attn_mask must be bool or Q's element type, got " + std::string(dataTypeName(mask->dtype())));
      }
      const Shape full{d.batch, d.qHeads, d.qSeq, d.total};
      auto b = broadcastShapes(full, mask->shape());
      if (mask->rank() < 2 || !b.isOk() || b.value() != full) {
        return fail("attn_mask " + shapeToString(mask->shape()) + " does not broadcast to [batch, q_heads, q_seq, " +
                    "total_seq] = " + shapeToString(full));
      }
      maskShape = full;
    }
    const Shape yShape = d.threeD ? Shape{d.batch, d.qSeq, d.qHeads * d.vHead} : Shape{d.batch, d.qHeads, d.qSeq, d.vHead};
    return dispatchType<float, double, Float16, BFloat16>(q->dtype(), [&]<class T>() {
      return run<T>(ctx, *q, *k, *v, mask, pastK, pastV, d, yShape, wantScores);
    });
  }

 private:
  Status readDims(const Tensor& q, const Tensor& k, const Tensor& v, const Tensor* pastK, const Tensor* pastV,
                  Dims& d) const {
    if (q.rank() != k.rank() || q.rank() != v.rank() || (q.rank() != 3 && q.rank() != 4)) {
      return fail("Q, K and V must all be 3-D or all 4-D, got " + shapeToString(q.shape()) + ", " +
                  shapeToString(k.shape()) + " and " + shapeToString(v.shape()));
    }
    const Shape &qs = q.shape(), &ks = k.shape(), &vs = v.shape();
    d.batch = qs[0];
    if (ks[0] != d.batch || vs[0] != d.batch) return fail("Q, K and V disagree on the batch size");
    if (q.rank() == 4) {
      d.qHeads = qs[1];
      d.kvHeads = ks[1];
      d.qSeq = qs[2];
      d.kvSeq = ks[2];
      d.head = qs[3];
      d.vHead = vs[3];
      if ((qHeadsAttr_ && qHeadsAttr_ != d.qHeads) || (kvHeadsAttr_ && kvHeadsAttr_ != d.kvHeads)) {
        return fail("q_num_heads/kv_num_heads disagree with the heads of Q/K");
      }
      if (vs[1] != d.kvHeads || vs[2] != d.kvSeq || ks[3] != d.head) {
        return fail("K " + shapeToString(ks) + " and V " + shapeToString(vs) + " do not fit Q " + shapeToString(qs));
      }
    } else {
      d.threeD = true;
      d.qHeads = qHeadsAttr_;
      d.kvHeads = kvHeadsAttr_;
      if (d.qHeads <= 0 || d.kvHeads <= 0) return fail("3-D inputs need q_num_heads and kv_num_heads");
      if (qs[2] % d.qHeads || ks[2] % d.kvHeads || vs[2] % d.kvHeads || qs[2] / d.qHeads != ks[2] / d.kvHeads) {
        return fail("hidden sizes " + shapeToString(qs) + ", " + shapeToString(ks) + ", " + shapeToString(vs) +
                    " do not split into q_num_heads=" + std::to_string(d.qHeads) + " and kv_num_heads=" +
                    std::to_string(d.kvHeads) + " heads of one head size");
      }
      d.qSeq = qs[1];
      d.kvSeq = ks[1];
      if (vs[1] != d.kvSeq) return fail("K and V disagree on the sequence length");
      d.head = qs[2] / d.qHeads;
      d.vHead = vs[2] / d.kvHeads;
    }
    if (d.kvHeads <= 0 || d.qHeads % d.kvHeads != 0) {
      return fail("q_num_heads " + std::to_string(d.qHeads) + " is not a multiple of kv_num_heads " +
                  std::to_string(d.kvHeads));
    }
    if ((pastK == nullptr) != (pastV == nullptr)) return fail("past_key and past_value come together");
    if (pastK) {
      d.past = pastK->rank() == 4 ? pastK->shape()[2] : -1;
      if (pastK->shape() != Shape{d.batch, d.kvHeads, d.past, d.head} ||
          pastV->shape() != Shape{d.batch, d.kvHeads, d.past, d.vHead} || pastK->dtype() != q.dtype() ||
          pastV->dtype() != q.dtype()) {
        return fail("past_key " + shapeToString(pastK->shape()) + " and past_value " + shapeToString(pastV->shape()) +
                    " must be [batch, kv_heads, past, head_size] of Q's element type");
      }
    }
    d.total = d.past + d.kvSeq;
    return Status::ok();
  }

  // Element offsets of (batch b, head h, position s) in a 4-D [B, H, S, D] tensor or a 3-D [B, S, H * D] one.
  static int64_t rowOffset(bool threeD, int64_t b, int64_t h, int64_t s, int64_t heads, int64_t seq, int64_t size) {
    return threeD ? ((b * seq + s) * heads + h) * size : ((b * heads + h) * seq + s) * size;
  }

  template <class T>
  Status run(KernelContext& ctx, const Tensor& q, const Tensor& k, const Tensor& v, const Tensor* mask,
             const Tensor* pastK, const Tensor* pastV, const Dims& d, const Shape& yShape, bool wantScores) {
    using C = ComputeType<T>;
    // Keys and values of every position (past first), [B, kv_heads, total, size], in the compute type.
    std::vector<C> keys(static_cast<size_t>(d.batch * d.kvHeads * d.total * d.head));
    std::vector<C> values(static_cast<size_t>(d.batch * d.kvHeads * d.total * d.vHead));
    auto gather = [&](std::vector<C>& dst, const Tensor& now, const Tensor* past, int64_t size) {
      for (int64_t b = 0; b < d.batch; ++b) {
        for (int64_t h = 0; h < d.kvHeads; ++h) {
          C* out = dst.data() + (b * d.kvHeads + h) * d.total * size;
          for (int64_t t = 0; t < d.past; ++t) {
            const T* src = past->data<T>() + ((b * d.kvHeads + h) * d.past + t) * size;
            for (int64_t i = 0; i < size; ++i) out[t * size + i] = static_cast<C>(src[i]);
          }
          for (int64_t t = 0; t < d.kvSeq; ++t) {
            const T* src = now.data<T>() + rowOffset(d.threeD, b, h, t, d.kvHeads, d.kvSeq, size);
            for (int64_t i = 0; i < size; ++i) out[(d.past + t) * size + i] = static_cast<C>(src[i]);
          }
        }
      }
    };
    gather(keys, k, pastK, d.head);
    gather(values, v, pastV, d.vHead);
    if (requested(ctx, 1)) store<T>(ctx.allocateUninitializedOutput(1, q.dtype(), {d.batch, d.kvHeads, d.total, d.head}), keys);
    if (requested(ctx, 2)) {
      store<T>(ctx.allocateUninitializedOutput(2, q.dtype(), {d.batch, d.kvHeads, d.total, d.vHead}), values);
    }

    // The mask as additive values over [B, q_heads, q_seq, total] through broadcast strides.
    const Shape full{d.batch, d.qHeads, d.qSeq, d.total};
    std::vector<int64_t> maskStrides = mask ? broadcastStrides(mask->shape(), full) : std::vector<int64_t>(4, 0);
    const C lowest = std::numeric_limits<C>::lowest();
    // onnxruntime skips the causal mask for one query after a cache (every key is visible then anyway).
    const bool causal = causal_ && !(d.qSeq == 1 && d.past > 0);
    const C scale = hasScale_ ? static_cast<C>(scale_) : static_cast<C>(1.0 / std::sqrt(static_cast<double>(d.head)));

    Tensor& y = ctx.allocateUninitializedOutput(0, q.dtype(), yShape);
    Tensor* scoresOut = wantScores ? &ctx.allocateUninitializedOutput(3, q.dtype(), full) : nullptr;
    const int64_t groups = d.qHeads / d.kvHeads;
    parallelFor(pool_, d.batch * d.qHeads, 1, [&](int64_t begin, int64_t end) {
      std::vector<C> scores(static_cast<size_t>(d.total));
      std::vector<C> acc(static_cast<size_t>(d.vHead));
      for (int64_t bh = begin; bh < end; ++bh) {
        const int64_t b = bh / d.qHeads, h = bh % d.qHeads, kvh = h / groups;
        const C* kBase = keys.data() + (b * d.kvHeads + kvh) * d.total * d.head;
        const C* vBase = values.data() + (b * d.kvHeads + kvh) * d.total * d.vHead;
        for (int64_t s = 0; s < d.qSeq; ++s) {
          const T* qRow = q.data<T>() + rowOffset(d.threeD, b, h, s, d.qHeads, d.qSeq, d.head);
          for (int64_t t = 0; t < d.total; ++t) {
            C dot = 0;
            for (int64_t i = 0; i < d.head; ++i) dot += static_cast<C>(qRow[i]) * kBase[t * d.head + i];
            C score = dot * scale;
            if (softcap_ > 0.0f) score = static_cast<C>(softcap_) * std::tanh(score / static_cast<C>(softcap_));
            if (mask) {
              const int64_t m = b * maskStrides[0] + h * maskStrides[1] + s * maskStrides[2] + t * maskStrides[3];
              score += mask->dtype() == DataType::BOOL ? (mask->data<bool>()[m] ? C(0) : lowest)
                                                        : static_cast<C>(mask->data<T>()[m]);
            }
            if (causal && t > d.past + s) score += lowest;
            scores[static_cast<size_t>(t)] = std::max(score, lowest);  // lowest + lowest stays finite
            if (scoresOut && qkMode_ == 0) {
              scoresOut->data<T>()[((b * d.qHeads + h) * d.qSeq + s) * d.total + t] = T(dot * scale);
            }
          }
          softmax(scores);
          if (scoresOut && qkMode_ == 3) {
            T* row = scoresOut->data<T>() + ((b * d.qHeads + h) * d.qSeq + s) * d.total;
            for (int64_t t = 0; t < d.total; ++t) row[t] = T(scores[static_cast<size_t>(t)]);
          }
          std::fill(acc.begin(), acc.end(), C(0));
          for (int64_t t = 0; t < d.total; ++t) {
            const C p = scores[static_cast<size_t>(t)];
            for (int64_t i = 0; i < d.vHead; ++i) acc[static_cast<size_t>(i)] += p * vBase[t * d.vHead + i];
          }
          T* yRow = y.data<T>() + rowOffset(d.threeD, b, h, s, d.qHeads, d.qSeq, d.vHead);
          for (int64_t i = 0; i < d.vHead; ++i) yRow[i] = T(acc[static_cast<size_t>(i)]);
        }
      }
    });
    return Status::ok();
  }

  template <class C>
  static void softmax(std::vector<C>& row) {
    if (row.empty()) return;
    const C top = *std::max_element(row.begin(), row.end());
    if (top <= std::numeric_limits<C>::lowest()) {  // every key masked
      std::fill(row.begin(), row.end(), C(0));
      return;
    }
    C sum = 0;
    for (C& x : row) {
      x = std::exp(x - top);
      sum += x;
    }
    for (C& x : row) x /= sum;
  }

  template <class T, class C>
  static void store(Tensor& out, const std::vector<C>& src) {
    T* dst = out.data<T>();
    for (size_t i = 0; i < src.size(); ++i) dst[i] = T(src[i]);
  }

  bool requested(const KernelContext& ctx, size_t i) const {
    return i < ctx.outputCount() && i < node_.outputs.size() && !node_.outputs[i].empty();
  }

  Status fail(const std::string& message) const { return invalidArgument(label_ + ": " + message); }

  const ir::Node& node_;
  std::string label_;
  bool causal_;
  int64_t qHeadsAttr_, kvHeadsAttr_, qkMode_;
  bool hasScale_;
  float scale_, softcap_;
  ThreadPool* pool_;
};

}  // namespace

void registerAttentionKernels(KernelRegistry& registry) {
  registry.add("Attention", 23, kAnyOpset, makeFactory<AttentionKernel>());
}

}  // namespace kiln::cpu
