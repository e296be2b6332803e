// RotaryEmbedding (opset 23): rotates the first rotary_embedding_dim values of every head of X by the angles whose
// cosines and sines the caches hold.
//  - X is 4-D [batch, heads, seq, head_size] or 3-D [batch, seq, heads * head_size] (num_heads required then);
//  - with position_ids [batch, seq] the caches are [max_position, rotary_dim / 2] and row position_ids[b, s] is used;
//    without them the caches are [batch, seq, rotary_dim / 2];
//  - interleaved=0 pairs element i with i + rotary_dim / 2, interleaved=1 pairs 2i with 2i + 1;
//  - elements past rotary_embedding_dim (0 = the whole head) are copied unchanged.
// Computed in float for halves, as onnxruntime does; bad shapes or out-of-range positions are INVALID_ARGUMENT.
#include <string>
#include <vector>

#include "ep/cpu/kernel_registry.h"
#include "ep/cpu/kernel_utils.h"

namespace kiln::cpu {
namespace {

class RotaryEmbeddingKernel : public Kernel {
 public:
  explicit RotaryEmbeddingKernel(const KernelInfo& info)
      : label_(info.node.label()),
        interleaved_(info.node.attrInt("interleaved", 0) != 0),
        rotaryDim_(info.node.attrInt("rotary_embedding_dim", 0)),
        numHeads_(info.node.attrInt("num_heads", 0)),
        pool_(info.threadPool) {}

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
    Layout l;
    l.batch = s[0];
    if (x->rank() == 4) {
      if (numHeads_ != 0 && numHeads_ != s[1]) return fail("num_heads disagrees with X's dimension 1");
      l.heads = s[1];
      l.seq = s[2];
      l.headSize = s[3];
      l.batchStride = s[1] * s[2] * s[3];
      l.headStride = s[2] * s[3];
      l.seqStride = s[3];
    } else {
      const int64_t heads = numHeads_;
      if (heads <= 0) return fail("num_heads is required for a 3-D X");
      if (s[2] % heads != 0) return fail("X's hidden size " + std::to_string(s[2]) + " is not a multiple of num_heads");
      l.heads = heads;
      l.seq = s[1];
      l.headSize = s[2] / heads;
      l.batchStride = s[1] * s[2];
      l.seqStride = s[2];
      l.headStride = l.headSize;
    }
    l.rotary = rotaryDim_ == 0 ? l.headSize : rotaryDim_;
    if (l.rotary <= 0 || l.rotary > l.headSize || l.rotary % 2 != 0) {
      return fail("rotary_embedding_dim " + std::to_string(l.rotary) + " must be even and at most the head size " +
                  std::to_string(l.headSize));
    }
    const int64_t half = l.rotary / 2;
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
    Tensor& y = ctx.allocateUninitializedOutput(0, x->dtype(), s);
    return dispatchType<float, double, Float16, BFloat16>(x->dtype(), [&]<class T>() {
      rotate<T>(*x, *cosCache, *sinCache, rows, l, y);
      return Status::ok();
    });
  }

 private:
  struct Layout {
    int64_t batch = 0, heads = 0, seq = 0, headSize = 0, rotary = 0;
    int64_t batchStride = 0, headStride = 0, seqStride = 0;
  };

  template <class T>
  void rotate(const Tensor& x, const Tensor& cosCache, const Tensor& sinCache, const std::vector<int64_t>& rows,
              const Layout& l, Tensor& y) const {
    using C = ComputeType<T>;
    const int64_t half = l.rotary / 2;
    const T* in = x.data<T>();
    T* out = y.data<T>();
    const T* cosData = cosCache.data<T>();
    const T* sinData = sinCache.data<T>();
    const int64_t count = l.batch * l.seq * l.heads;
    parallelFor(pool_, count, 64, [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) {
        const int64_t b = i / (l.seq * l.heads), sIdx = (i / l.heads) % l.seq, h = i % l.heads;
        const int64_t offset = b * l.batchStride + sIdx * l.seqStride + h * l.headStride;
        const T* src = in + offset;
        T* dst = out + offset;
        const int64_t row = rows[static_cast<size_t>(b * l.seq + sIdx)] * half;
        for (int64_t k = 0; k < half; ++k) {
          const int64_t i1 = interleaved_ ? 2 * k : k, i2 = interleaved_ ? 2 * k + 1 : k + half;
          const C c = static_cast<C>(cosData[row + k]), sn = static_cast<C>(sinData[row + k]);
          const C x1 = static_cast<C>(src[i1]), x2 = static_cast<C>(src[i2]);
          dst[i1] = T(x1 * c - x2 * sn);
          dst[i2] = T(x1 * sn + x2 * c);
        }
        for (int64_t k = l.rotary; k < l.headSize; ++k) dst[k] = src[k];
      }
    });
  }

  Status fail(const std::string& message) const { return invalidArgument(label_ + ": " + message); }

  std::string label_;
  bool interleaved_;
  int64_t rotaryDim_;
  int64_t numHeads_;
  ThreadPool* pool_;
};

}  // namespace

void registerRotaryEmbeddingKernels(KernelRegistry& registry) {
  registry.add("RotaryEmbedding", 23, kAnyOpset, makeFactory<RotaryEmbeddingKernel>());
}

}  // namespace kiln::cpu
