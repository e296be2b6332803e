// ConvTranspose as GEMM + col2im: for each group, columns = W^T x X (gemm_helpers.h), then every column entry is
// scatter-added to the output position its kernel tap lands on. Columns are built a few input lines at a
// time.
#include <algorithm>
#include <string>
#include <vector>

#include "ep/cpu/kernel_registry.h"
#include "ep/cpu/kernel_utils.h"
#include "ep/cpu/kernels/gemm_helpers.h"
#include "ops/window_geometry.h"

namespace kiln::cpu {
namespace {

// Column chunks as in Conv (conv.cpp): about half an L2 cache, but not so narrow that GEMM overhead
// dominates.
constexpr int64_t kColumnBudgetBytes = int64_t{512} << 10;
constexpr int64_t kMinChunkColumns = 128;

// Adds col [channels * K][p1 - p0], the columns of grid positions [p0, p1), into the image y
// [channels][g.in...]: grid position o, tap k lands on image position o * stride - padBegin + k * dilation
// (skipped when outside the image). With `assign` (every image position gets exactly one tap) the sum plus
// bias is stored instead, saving a pass over y.
template <class T>
void col2im(const T* col, int64_t channels, const ops::WindowGeometry& g, int64_t p0, int64_t p1, T* y,
            bool assign, const T* bias) {
  const size_t R = g.rank();
  const int64_t gridW = g.out[R - 1], imageW = g.in[R - 1], sW = g.strides[R - 1];
  const int64_t K = g.kernelSize(), imageSize = g.inSize(), cols = p1 - p0;
  const ops::SpatialIndex imageStrides = g.inStrides();
  ops::SpatialIndex o{}, k{};
  for (int64_t p = p0; p < p1;) {
    const int64_t line = p / gridW, ow0 = p % gridW, ow1 = std::min(gridW, ow0 + (p1 - p));
    for (int64_t d = static_cast<int64_t>(R) - 2, rest = line; d >= 0; --d) {
      o[d] = rest % g.out[d];
      rest /= g.out[d];
    }
    k.fill(0);
    for (int64_t kidx = 0; kidx < K; ++kidx) {
      bool inside = true;
      int64_t offset = 0;
      for (size_t d = 0; d + 1 < R && inside; ++d) {
        const int64_t i = o[d] * g.strides[d] - g.padBegin[d] + k[d] * g.dilations[d];
        inside = i >= 0 && i < g.in[d];
        offset += i * imageStrides[d];
      }
      int64_t lo = 0, hi = 0;
      const int64_t shift = k[R - 1] * g.dilations[R - 1] - g.padBegin[R - 1];
      if (inside) {
        ops::validRange(shift, sW, imageW, gridW, lo, hi);
        lo = std::clamp(lo, ow0, ow1);
        hi = std::clamp(hi, lo, ow1);
      }
      for (int64_t c = 0; c < channels && hi > lo; ++c) {
        const T* src = col + (c * K + kidx) * cols + (p - p0);  // src[ow - ow0] for ow in [ow0, ow1)
        T* dst = y + c * imageSize + offset;
        if (assign) {
          const T b = bias ? bias[c] : T(0);
          for (int64_t ow = lo; ow < hi; ++ow) dst[ow * sW + shift] = src[ow - ow0] + b;
        } else {
          for (int64_t ow = lo; ow < hi; ++ow) dst[ow * sW + shift] += src[ow - ow0];
        }
      }
      for (size_t d = R; d-- > 0;) {
        if (++k[d] < g.kernel[d]) break;
        k[d] = 0;
      }
    }
    p += ow1 - ow0;
  }
}

// Y [N, M, g.in...] = convTranspose(X [N, C, g.out...], W [C, M/group, k...]) + bias.
template <class T>
void runConvTranspose(const T* x, const T* w, const T* bias, T* y, int64_t N, int64_t C, int64_t M,
                      int64_t group, const ops::WindowGeometry& g, ThreadPool* pool) {
  const int64_t Cg = C / group, Mg = M / group, K = g.kernelSize();
  const int64_t xSize = g.outSize(), ySize = g.inSize();
  if (N == 0 || M == 0 || ySize == 0) return;
  const bool pointwise = g.isPointwise();  // GEMM straight into y, accumulating onto the bias
  // stride == kernel, no dilation, pads or output_padding: the taps tile the output exactly once.
  bool exactCover = xSize > 0 && !pointwise;
  for (size_t d = 0; d < g.rank(); ++d) {
    exactCover = exactCover && g.strides[d] == g.kernel[d] && g.dilations[d] == 1 && g.padBegin[d] == 0 &&
                 g.in[d] == g.out[d] * g.strides[d];
  }
  if (bias && !exactCover) {
    for (int64_t n = 0; n < N; ++n) {
      for (int64_t m = 0; m < M; ++m) std::fill_n(y + (n * M + m) * ySize, ySize, bias[m]);
    }
  }
  if (xSize == 0) return;
  const int64_t columnBytes = std::max<int64_t>(1, Mg * K * static_cast<int64_t>(sizeof(T)));
  const int64_t chunk = std::clamp<int64_t>(kColumnBudgetBytes / columnBytes,
                                            std::min<int64_t>(kMinChunkColumns, xSize), xSize);
  if (exactCover) {
    // Chunks of input positions write disjoint output taps: run them on the intra-op threads.
    const int64_t chunks = (xSize + chunk - 1) / chunk;
    parallelFor(pool, N * group * chunks, 1, [&](int64_t begin, int64_t end) {
      T* col = scratchBuffer<T>(static_cast<size_t>(Mg * K * chunk));
      for (int64_t task = begin; task < end; ++task) {
        const int64_t n = task / (group * chunks), grp = task / chunks % group, p0 = task % chunks * chunk;
        const int64_t cols = std::min(chunk, xSize - p0);
        const T* xg = x + (n * C + grp * Cg) * xSize;
        gemm<T>(true, false, Mg * K, cols, Cg, T(1), w + grp * Cg * Mg * K, Mg * K, xg + p0, xSize, T(0), col, cols);
        col2im<T>(col, Mg, g, p0, p0 + cols, y + (n * M + grp * Mg) * ySize, true, bias ? bias + grp * Mg : nullptr);
      }
    });
    return;
  }
  T* col = pointwise ? nullptr : scratchBuffer<T>(static_cast<size_t>(Mg * K * chunk));
  for (int64_t n = 0; n < N; ++n) {
    for (int64_t grp = 0; grp < group; ++grp) {
      const T* xg = x + (n * C + grp * Cg) * xSize;
      const T* wg = w + grp * Cg * Mg * K;
      T* yg = y + (n * M + grp * Mg) * ySize;
      if (pointwise) {
        gemm<T>(true, false, Mg, xSize, Cg, T(1), wg, Mg, xg, xSize, bias ? T(1) : T(0), yg, ySize);
        continue;
      }
      for (int64_t p0 = 0; p0 < xSize; p0 += chunk) {
        const int64_t cols = std::min(chunk, xSize - p0);
        gemm<T>(true, false, Mg * K, cols, Cg, T(1), wg, Mg * K, xg + p0, xSize, T(0), col, cols);
        col2im<T>(col, Mg, g, p0, p0 + cols, yg, exactCover, bias ? bias + grp * Mg : nullptr);
      }
    }
  }
}

class ConvTransposeKernel : public Kernel {
 public:
  explicit ConvTransposeKernel(const KernelInfo& info)
      : attrs_(ops::WindowAttributes::read(info.node)),
        group_(info.node.attrInt("group", 1)),
        outputPadding_(info.node.attrInts("output_padding")),
        outputShape_(info.node.attrInts("output_shape")),
        pool_(info.threadPool) {}

  Status compute(KernelContext& ctx) override {
    const Tensor* x = ctx.input(0);
    const Tensor* w = ctx.input(1);
    const Tensor* b = ctx.input(2);
    if (!x || !w) return invalidArgument("inputs X and W are required");
    if (w->dtype() != x->dtype() || (b && b->dtype() != x->dtype())) {
      return invalidArgument("X, W and B must have the same element type");
    }
    if (x->rank() < 3 || x->rank() > ops::kMaxSpatialRank + 2) {
      return invalidArgument("X must be [N, C, spatial...] with 1 to " + std::to_string(ops::kMaxSpatialRank) +
                             " spatial dims, got " + shapeToString(x->shape()));
    }
    if (w->rank() != x->rank()) return invalidArgument("W must have the rank of X");
    if (group_ <= 0) return invalidArgument("group must be positive");
    const int64_t N = x->dim(0), C = x->dim(1), M = w->dim(1) * group_;
    if (w->dim(0) != C) {
      return invalidArgument("W " + shapeToString(w->shape()) + " does not match X channels");
    }
    if (C % group_ != 0) return invalidArgument("input channels not divisible by group");
    if (b && b->numel() != M) return invalidArgument("B must have " + std::to_string(M) + " elements");
    KILN_ASSIGN_OR_RETURN(ops::WindowGeometry g, resolveGeometry(*x, *w));
    Shape outShape = {N, M};
    outShape.insert(outShape.end(), g.in.begin(), g.in.end());
    Tensor& y = ctx.allocateOutput(0, x->dtype(), outShape);
    return dispatchType<float, double, Float16, BFloat16>(x->dtype(), [&]<class T>() {
      if constexpr (kIsHalf<T>) {
        const Tensor xf = toFloatTensor<T>(*x), wf = toFloatTensor<T>(*w);
        const Tensor bf = b ? toFloatTensor<T>(*b) : Tensor();
        Tensor yf(DataType::FLOAT, outShape);
        runConvTranspose<float>(xf.data<float>(), wf.data<float>(), b ? bf.data<float>() : nullptr,
                                yf.data<float>(), N, C, M, group_, g, pool_);
        fromFloatTensor<T>(yf, y);
      } else {
        runConvTranspose<T>(x->data<T>(), w->data<T>(), b ? b->data<T>() : nullptr, y.data<T>(), N, C, M,
                            group_, g, pool_);
      }
      return Status::ok();
    });
  }

 private:
  Result<ops::WindowGeometry> resolveGeometry(const Tensor& x, const Tensor& w) const {
    return ops::resolveTransposedWindow(attrs_, outputPadding_, outputShape_,
                                   std::vector<int64_t>(x.shape().begin() + 2, x.shape().end()),
                                   std::vector<int64_t>(w.shape().begin() + 2, w.shape().end()));
  }

  ops::WindowAttributes attrs_;
  int64_t group_;
  std::vector<int64_t> outputPadding_, outputShape_;
  ThreadPool* pool_;
};

}  // namespace

// Called from registerConvKernels (conv.cpp).
void registerConvTransposeKernels(KernelRegistry& registry) {
  registry.add("ConvTranspose", 1, kAnyOpset, makeFactory<ConvTransposeKernel>());
}

}  // namespace kiln::cpu
