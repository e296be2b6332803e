// RotaryEmbedding in its two forms: rotates the first rotary_embedding_dim values of every head of X by the angles
// whose cosines and sines the caches hold (rotary.h: interleaved pairs 2i with 2i + 1, otherwise i with
// i + rotary_dim / 2; values past the rotary dimension are copied unchanged).
//  - ai.onnx (opset 23): inputs X, cos_cache, sin_cache, position_ids. X is 4-D [batch, heads, seq, head_size] or
//    3-D [batch, seq, heads * head_size] (num_heads required then); with position_ids [batch, seq] the caches are
//    [max_position, rotary_dim / 2] and row position_ids[b, s] is used, without them they are
//    [batch, seq, rotary_dim / 2];
//  - com.microsoft (version 1, exported by onnxruntime's transformer optimizer): inputs input, position_ids,
//    cos_cache, sin_cache. input is 3-D [batch, seq, hidden] or 4-D [batch, heads, seq, head_size]; position_ids
//    is one start position (positions start + s) or [batch, seq]; the caches are [max_position, width]; the head
//    size is 2 * width unless rotary_embedding_dim is given (then hidden / num_heads).
// Computed in float for halves, as onnxruntime does; bad shapes or out-of-range positions are INVALID_ARGUMENT.
#include <string>
#include <vector>

#include "ep/cpu/kernel_registry.h"
#include "ep/cpu/kernel_utils.h"
#include "ep/cpu/kernels/rotary.h"

namespace kiln::cpu {
namespace {

struct RotaryLayout {
  int64_t batch = 0, heads = 0, seq = 0, headSize = 0, rotary = 0;
  int64_t batchStride = 0, headStride = 0, seqStride = 0;
  int64_t cacheWidth = 0;  // values per cache row (rotary / 2, or more in the com.microsoft form)
};

// The strides of 4-D [batch, heads, seq, head] or 3-D [batch, seq, heads * head] X.
void setStrides(const Shape& s, RotaryLayout& l) {
  if (s.size() == 4) {
    l.batchStride = s[1] * s[2] * s[3];
    l.headStride = s[2] * s[3];
    l.seqStride = s[3];
  } else {
    l.batchStride = s[1] * s[2];
    l.seqStride = s[2];
    l.headStride = l.headSize;
  }
}

// Rotates every (batch, seq, head) row of x into y; rows[b * seq + s] is the cache row of that position.
template <class T>
void rotateAll(const Tensor& x, const Tensor& cosCache, const Tensor& sinCache, const std::vector<int64_t>& rows,
               const RotaryLayout& l, bool interleaved, ThreadPool* pool, Tensor& y) {
  const T* in = x.data<T>();
  T* out = y.data<T>();
  const T* cosData = cosCache.data<T>();
  const T* sinData = sinCache.data<T>();
  parallelFor(pool, l.batch * l.seq * l.heads, 64, [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) {
      const int64_t b = i / (l.seq * l.heads), sIdx = (i / l.heads) % l.seq, h = i % l.heads;
      const int64_t offset = b * l.batchStride + sIdx * l.seqStride + h * l.headStride;
      const int64_t row = rows[static_cast<size_t>(b * l.seq + sIdx)] * l.cacheWidth;
      rotateHeadRow(in + offset, out + offset, cosData + row, sinData + row, l.rotary, l.headSize, interleaved);
    }
  });
}

Status rotateChecked(KernelContext& ctx, const Tensor& x, const Tensor& cosCache, const Tensor& sinCache,
                     const std::vector<int64_t>& rows, const RotaryLayout& l, bool interleaved, ThreadPool* pool) {
  Tensor& y = ctx.allocateUninitializedOutput(0, x.dtype(), x.shape());
  return dispatchType<float, double, Float16, BFloat16>(x.dtype(), [&]<class T>() {
    rotateAll<T>(x, cosCache, sinCache, rows, l, interleaved, pool, y);
    return Status::ok();
  });
}

// The attributes both forms share, and their error wording.
class RotaryKernelBase : public Kernel {
 protected:
  explicit RotaryKernelBase(const KernelInfo& info)
      : label_(info.node.label()),
        interleaved_(info.node.attrInt("interleaved", 0) != 0),
        rotaryDim_(info.node.attrInt("rotary_embedding_dim", 0)),
        numHeads_(info.node.attrInt("num_heads", 0)),
        pool_(info.threadPool) {}

  Status fail(const std::string& message) const { return invalidArgument(label_ + ": " + message); }

  std::string label_;
  bool interleaved_;
  int64_t rotaryDim_;
  int64_t numHeads_;
  ThreadPool* pool_;
};

class RotaryEmbeddingKernel : public RotaryKernelBase {
 public:
  explicit RotaryEmbeddingKernel(const KernelInfo& info) : RotaryKernelBase(info) {}

  Status compute(KernelContext& ctx) override {
    const Tensor* x = ctx.input(0);
    const Tensor* cosCache = ctx.input(1);
    const Tensor* sinCache = ctx.input(2);
    const Tensor* positions = ctx.input(3);
    if (!x || !cosCache || !sinCache) return fail("inputs X, cos_cache and sin_cache are required");
    if (x->rank() != 3 && x->rank() != 4) return fail("X must be 3-D or 4-D, got " + shapeToString(x->shape()));
    if (cosCache->dtype() != x->dtype() || sinCache->dtype() != x->dtype()) {
      return fail("cos_cache and sin_cache must have X's element type");
    }
    const Shape& s = x->shape();
    RotaryLayout l;
    l.batch = s[0];
    if (x->rank() == 4) {
      if (numHeads_ != 0 && numHeads_ != s[1]) return fail("num_heads disagrees with X's dimension 1");
      l.heads = s[1];
      l.seq = s[2];
      l.headSize = s[3];
    } else {
      const int64_t heads = numHeads_;
      if (heads <= 0) return fail("num_heads is required for a 3-D X");
      if (s[2] % heads != 0) return fail("X's hidden size " + std::to_string(s[2]) + " is not a multiple of num_heads");
      l.heads = heads;
      l.seq = s[1];
      l.headSize = s[2] / heads;
    }
    setStrides(s, l);
    l.rotary = rotaryDim_ == 0 ? l.headSize : rotaryDim_;
    if (l.rotary <= 0 || l.rotary > l.headSize || l.rotary % 2 != 0) {
      return fail("rotary_embedding_dim " + std::to_string(l.rotary) + " must be even and at most the head size " +
                  std::to_string(l.headSize));
    }
    const int64_t half = l.rotary / 2;
    l.cacheWidth = half;
    std::vector<int64_t> rows(static_cast<size_t>(l.batch * l.seq));
    if (positions) {
      if (positions->shape() != Shape{l.batch, l.seq}) {
        return fail("position_ids must be [batch, seq] = " + shapeToString(Shape{l.batch, l.seq}) + ", got " +
                    shapeToString(positions->shape()));
      }
      if (cosCache->rank() != 2 || cosCache->shape()[1] != half || sinCache->shape() != cosCache->shape()) {
        return fail("with position_ids the caches must both be [max_position, " + std::to_string(half) + "], got " +
                    shapeToString(cosCache->shape()) + " and " + shapeToString(sinCache->shape()));
      }
      KILN_ASSIGN_OR_RETURN(std::vector<int64_t> ids, readInt64Values(*positions));
      for (size_t i = 0; i < rows.size(); ++i) {
        if (ids[i] < 0 || ids[i] >= cosCache->shape()[0]) {
          return fail("position id " + std::to_string(ids[i]) + " is outside the cache's " +
                      std::to_string(cosCache->shape()[0]) + " rows");
        }
        rows[i] = ids[i];
      }
    } else {
      if (cosCache->shape() != Shape{l.batch, l.seq, half} || sinCache->shape() != cosCache->shape()) {
        return fail("without position_ids the caches must both be [batch, seq, rotary_dim / 2] = " +
                    shapeToString(Shape{l.batch, l.seq, half}));
      }
      for (size_t i = 0; i < rows.size(); ++i) rows[i] = static_cast<int64_t>(i);
    }
    return rotateChecked(ctx, *x, *cosCache, *sinCache, rows, l, interleaved_, pool_);
  }
};

class ContribRotaryEmbeddingKernel : public RotaryKernelBase {
 public:
  explicit ContribRotaryEmbeddingKernel(const KernelInfo& info)
      : RotaryKernelBase(info), packedBatching_(info.node.attrInt("is_packed_batching", 0) != 0) {}

  Status compute(KernelContext& ctx) override {
    const Tensor* x = ctx.input(0);
    const Tensor* positions = ctx.input(1);
    const Tensor* cosCache = ctx.input(2);
    const Tensor* sinCache = ctx.input(3);
    if (!x || !positions || !cosCache || !sinCache) {
      return fail("inputs input, position_ids, cos_cache and sin_cache are required");
    }
    if (packedBatching_) return notImplemented(label_ + ": is_packed_batching=1 is not supported");
    if (x->rank() != 3 && x->rank() != 4) return fail("input must be 3-D or 4-D, got " + shapeToString(x->shape()));
    if (cosCache->dtype() != x->dtype() || sinCache->dtype() != x->dtype()) {
      return fail("cos_cache and sin_cache must have input's element type");
    }
    if (cosCache->rank() != 2 || sinCache->shape() != cosCache->shape()) {
      return fail("cos_cache and sin_cache must both be [max_position, rotary_dim / 2], got " +
                  shapeToString(cosCache->shape()) + " and " + shapeToString(sinCache->shape()));
    }
    if (rotaryDim_ > 0 && numHeads_ <= 0) return fail("num_heads is required with rotary_embedding_dim");
    const Shape& s = x->shape();
    const bool transposed = x->rank() == 4;  // [batch, heads, seq, head_size]
    const int64_t hidden = transposed ? s[1] * s[3] : s[2];
    RotaryLayout l;
    l.batch = s[0];
    l.seq = transposed ? s[2] : s[1];
    l.cacheWidth = cosCache->shape()[1];
    l.headSize = rotaryDim_ == 0 ? 2 * l.cacheWidth : hidden / numHeads_;
    if (l.headSize <= 0 || hidden % l.headSize != 0) {
      return fail("hidden size " + std::to_string(hidden) + " does not split into heads of " +
                  std::to_string(l.headSize) + " (twice the caches' width)");
    }
    l.heads = numHeads_ > 0 ? numHeads_ : hidden / l.headSize;
    if (transposed && l.heads != s[1]) return fail("num_heads disagrees with input's dimension 1");
    l.rotary = rotaryDim_ > 0 ? rotaryDim_ : l.headSize;
    if (l.rotary > l.headSize || l.rotary % 2 != 0 || l.rotary / 2 > l.cacheWidth) {
      return fail("rotary_embedding_dim " + std::to_string(l.rotary) + " must be even, at most the head size " +
                  std::to_string(l.headSize) + " and twice at most the caches' width");
    }
    setStrides(s, l);
    std::vector<int64_t> rows(static_cast<size_t>(l.batch * l.seq));
    KILN_ASSIGN_OR_RETURN(std::vector<int64_t> ids, readInt64Values(*positions));
    if (positions->numel() == 1) {
      for (size_t i = 0; i < rows.size(); ++i) rows[i] = ids[0] + static_cast<int64_t>(i) % l.seq;
    } else if (positions->shape() == Shape{l.batch, l.seq}) {
      rows.assign(ids.begin(), ids.end());
    } else {
      return fail("position_ids must be one start position or [batch, seq] = " + shapeToString(Shape{l.batch, l.seq}) +
                  ", got " + shapeToString(positions->shape()));
    }
    for (int64_t row : rows) {
      if (row < 0 || row >= cosCache->shape()[0]) {
        return fail("position " + std::to_string(row) + " is outside the cache's " +
                    std::to_string(cosCache->shape()[0]) + " rows");
      }
    }
    return rotateChecked(ctx, *x, *cosCache, *sinCache, rows, l, interleaved_, pool_);
  }

 private:
  bool packedBatching_;
};

}  // namespace

void registerRotaryEmbeddingKernels(KernelRegistry& registry) {
  registry.add("RotaryEmbedding", 23, kAnyOpset, makeFactory<RotaryEmbeddingKernel>());
  registry.add("RotaryEmbedding", 1, kAnyOpset, makeFactory<ContribRotaryEmbeddingKernel>(), ir::kMicrosoftDomain);
}

}  // namespace kiln::cpu
