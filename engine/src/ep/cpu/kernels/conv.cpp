// Conv and ConvInteger. Float convolutions run as GEMMs (gemm_helpers.h): pointwise (1x1) ones directly on the
// input, others on im2col columns built a few output lines at a time (the scratch stays cache-sized and is
// reused); 1-D/2-D depthwise convolutions use a direct loop, which beats a GEMM with one input channel per
// group. Under kiln.cpu.float_kernels=onednn, non-depthwise float convs with constant weights run on oneDNN instead
// (onednn_conv.h), with this path as the fallback. The int32 convolution helpers of conv_helpers.h (ConvInteger,
// QLinearConv) live here too.
#include <algorithm>
#include <memory>
#include <string>
#include <vector>

#include "ep/cpu/kernel_registry.h"
#include "ep/cpu/kernel_utils.h"
#include "ep/cpu/kernels/conv_helpers.h"
#include "ep/cpu/kernels/cpu_isa.h"
#include "ep/cpu/kernels/gemm_helpers.h"
#include "ep/cpu/kernels/onednn_conv.h"
#include "ep/cpu/kernels/onednn_int8.h"
#include "ops/window_geometry.h"

namespace kiln::cpu {

void registerConvTransposeKernels(KernelRegistry& registry);  // conv_transpose.cpp

namespace {

// Upper bound of one im2col chunk: half an L2 cache, so GEMM packing reads it back from cache (measured best
// between 128 KiB and 512 KiB on PP-OCRv4's 3x3 convs).
constexpr int64_t kColumnBudgetBytes = int64_t{256} << 10;
// Pointwise convs read X in place; their chunks keep the input columns and the output block (which the bias and
// any fused elementwise chain revisit) in L2.
constexpr int64_t kPointwiseChunkBytes = int64_t{512} << 10;
// GEMMs narrower than this lose more to call and packing overhead than they gain from cache.
constexpr int64_t kMinChunkColumns = 128;

// Gathers the windows of output positions [p0, p1) (flat over the output's spatial dims) into col, laid out
// [channels * K][p1 - p0] with K = kernel size; out-of-image taps read as zero. Works a line (all positions
// along the last spatial dim) at a time, so the innermost copy is contiguous for stride 1.
template <class T>
void im2col(const T* x, int64_t channels, const ops::WindowGeometry& g, int64_t p0, int64_t p1, T* col) {
  const size_t R = g.rank();
  const int64_t outW = g.out[R - 1], inW = g.in[R - 1], sW = g.strides[R - 1];
  const int64_t K = g.kernelSize(), inSize = g.inSize(), cols = p1 - p0;
  const ops::SpatialIndex inStrides = g.inStrides();
  ops::SpatialIndex o{}, k{};
  for (int64_t p = p0; p < p1;) {
    const int64_t line = p / outW, ow0 = p % outW, ow1 = std::min(outW, ow0 + (p1 - p));
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
        offset += i * inStrides[d];
      }
      const int64_t shift = k[R - 1] * g.dilations[R - 1] - g.padBegin[R - 1];
      int64_t lo = ow1, hi = ow1;  // positions [lo, hi) of this segment read inside the image
      if (inside) {
        ops::validRange(shift, sW, inW, outW, lo, hi);
        lo = std::clamp(lo, ow0, ow1);
        hi = std::clamp(hi, lo, ow1);
      }
      for (int64_t c = 0; c < channels; ++c) {
        T* dst = col + (c * K + kidx) * cols + (p - p0);  // dst[ow - ow0] for ow in [ow0, ow1)
        std::fill(dst, dst + (lo - ow0), T(0));
        if (hi > lo) {
          const T* src = x + c * inSize + offset;
          if (sW == 1) {
            std::copy(src + lo + shift, src + hi + shift, dst + (lo - ow0));
          } else {
            for (int64_t ow = lo; ow < hi; ++ow) dst[ow - ow0] = src[ow * sW + shift];
          }
        }
        std::fill(dst + (hi - ow0), dst + (ow1 - ow0), T(0));
      }
      for (size_t d = R; d-- > 0;) {
        if (++k[d] < g.kernel[d]) break;
        k[d] = 0;
      }
    }
    p += ow1 - ow0;
  }
}

// One image plane of a 1-D/2-D depthwise convolution (1-D as height 1).
struct Plane2d {
  int64_t inH, inW, outH, outW, kH, kW, sH, sW, dH, dW, pH, pW;
};

Plane2d planeOf(const ops::WindowGeometry& g) {
  if (g.rank() == 1) {
    return {1, g.in[0], 1, g.out[0], 1, g.kernel[0], 1, g.strides[0], 1, g.dilations[0], 0, g.padBegin[0]};
  }
  return {g.in[0],      g.in[1],      g.out[0],       g.out[1],       g.kernel[0],   g.kernel[1],
          g.strides[0], g.strides[1], g.dilations[0], g.dilations[1], g.padBegin[0], g.padBegin[1]};
}

// Copies an input plane into buf [rows x cols] behind its leading pads, zero-filling around it, so that tap
// (kh, kw) of window (oh, ow) reads buf[(oh * sH + kh * dH) * cols + ow * sW + kw * dW] with no bounds
// checks.
template <class T>
KILN_ALWAYS_INLINE inline void padPlane(const T* in, const Plane2d& p, int64_t rows, int64_t cols, T* buf) {
  for (int64_t r = 0; r < rows; ++r) {
    T* dst = buf + r * cols;
    const int64_t ih = r - p.pH;
    if (ih < 0 || ih >= p.inH) {
      std::fill_n(dst, cols, T(0));
      continue;
    }
    const int64_t left = std::min(cols, p.pW), count = std::clamp<int64_t>(cols - p.pW, 0, p.inW);
    std::fill_n(dst, left, T(0));
    std::copy_n(in + ih * p.inW, count, dst + left);
    std::fill(dst + left + count, dst + cols, T(0));
  }
}

// K x K kernel, stride S, no dilation: each output is one register accumulation over all taps, and the ow
// loop vectorizes once the tap loops are unrolled.
template <class T, int K, int S>
KILN_ALWAYS_INLINE inline void depthwiseFixed(const T* buf, int64_t cols, const T* kernel, T bias, T* out,
                                              int64_t outH, int64_t outW) {
  T w[K * K];
  for (int i = 0; i < K * K; ++i) w[i] = kernel[i];
  for (int64_t oh = 0; oh < outH; ++oh) {
    const T* base = buf + oh * S * cols;
    T* orow = out + oh * outW;
    for (int64_t ow = 0; ow < outW; ++ow) {
      T acc = bias;
#pragma GCC unroll 8
      for (int kh = 0; kh < K; ++kh) {
#pragma GCC unroll 8
        for (int kw = 0; kw < K; ++kw) acc += w[kh * K + kw] * base[kh * cols + ow * S + kw];
      }
      orow[ow] = acc;
    }
  }
}

// Any kernel, stride and dilation: accumulates one output row per tap (contiguous for stride 1).
template <class T>
KILN_ALWAYS_INLINE inline void depthwiseGeneric(const T* buf, int64_t cols, const T* kernel, T bias, T* out,
                                                const Plane2d& p) {
  for (int64_t oh = 0; oh < p.outH; ++oh) {
    T* orow = out + oh * p.outW;
    std::fill_n(orow, p.outW, bias);
    for (int64_t kh = 0; kh < p.kH; ++kh) {
      const T* row = buf + (oh * p.sH + kh * p.dH) * cols;
      for (int64_t kw = 0; kw < p.kW; ++kw) {
        const T w = kernel[kh * p.kW + kw];
        const T* src = row + kw * p.dW;
        if (p.sW == 1) {
          for (int64_t ow = 0; ow < p.outW; ++ow) orow[ow] += w * src[ow];
        } else {
          for (int64_t ow = 0; ow < p.outW; ++ow) orow[ow] += w * src[ow * p.sW];
        }
      }
    }
  }
}

// Extent of the padded input that the windows of a plane read.
int64_t paddedRows(const Plane2d& p) { return (p.outH - 1) * p.sH + (p.kH - 1) * p.dH + 1; }
int64_t paddedCols(const Plane2d& p) { return (p.outW - 1) * p.sW + (p.kW - 1) * p.dW + 1; }

// out = bias + depthwise window sums of one plane; `buf` holds paddedRows(p) * paddedCols(p) elements.
template <class T>
KILN_ALWAYS_INLINE inline void depthwisePlane(const T* in, const T* kernel, T bias, T* out, const Plane2d& p,
                                              T* buf) {
  const int64_t rows = paddedRows(p), cols = paddedCols(p);
  padPlane(in, p, rows, cols, buf);
  if (p.kH == p.kW && p.sH == p.sW && p.dH == 1 && p.dW == 1) {
    const int64_t k = p.kH, s = p.sH;
    if (k == 3 && s == 1) return depthwiseFixed<T, 3, 1>(buf, cols, kernel, bias, out, p.outH, p.outW);
    if (k == 3 && s == 2) return depthwiseFixed<T, 3, 2>(buf, cols, kernel, bias, out, p.outH, p.outW);
    if (k == 5 && s == 1) return depthwiseFixed<T, 5, 1>(buf, cols, kernel, bias, out, p.outH, p.outW);
    if (k == 5 && s == 2) return depthwiseFixed<T, 5, 2>(buf, cols, kernel, bias, out, p.outH, p.outW);
    if (k == 7 && s == 1) return depthwiseFixed<T, 7, 1>(buf, cols, kernel, bias, out, p.outH, p.outW);
  }
  depthwiseGeneric(buf, cols, kernel, bias, out, p);
}

// The float instance is the hot one (PP-OCR style backbones), so it also has an AVX2/FMA twin. No AVX-512 twin:
// compiled for AVX-512, GCC contracts the tap sums into different multiply-adds than the AVX2 twin for stride 1
// (results one ulp apart; CpuAvx512Twins.DepthwiseConvsMatchBaselineBitForBit caught it).
KILN_AVX2_TARGET void depthwisePlaneAvx2(const float* in, const float* kernel, float bias, float* out,
                                         const Plane2d& p, float* buf) {
  depthwisePlane<float>(in, kernel, bias, out, p, buf);
}
void depthwisePlaneBaseline(const float* in, const float* kernel, float bias, float* out, const Plane2d& p,
                            float* buf) {
  depthwisePlane<float>(in, kernel, bias, out, p, buf);
}
void depthwisePlaneF32(const float* in, const float* kernel, float bias, float* out, const Plane2d& p,
                       float* buf) {
  (cpuHasAvx2Fma() ? depthwisePlaneAvx2 : depthwisePlaneBaseline)(in, kernel, bias, out, p, buf);
}

// row[i] += b over one output row of a GEMM conv chunk, with an AVX-512 twin (one exactly rounded add per lane).
template <class T>
KILN_ALWAYS_INLINE inline void addBias(T* row, int64_t n, T b) {
  for (int64_t i = 0; i < n; ++i) row[i] += b;
}
KILN_AVX512_TARGET void addBiasF32Avx512(float* row, int64_t n, float b) { addBias(row, n, b); }
template <class T>
void addBiasRow(T* row, int64_t n, T b) {
  if constexpr (std::is_same_v<T, float>) {
    if (cpuHasAvx512()) return addBiasF32Avx512(row, n, b);
  }
  addBias(row, n, b);
}

// Y = conv(X, W) + bias for X [N, C, in...], W [M, C/group, k...], Y [N, M, out...]; independent pieces (planes
// of a depthwise conv, column chunks of the others) run on `pool`'s threads. A float conv with an `epilogue`
// applies it to each piece right after computing it.
template <class T>
void runConv(const T* x, const T* w, const T* bias, T* y, int64_t N, int64_t C, int64_t M, int64_t group,
             const ops::WindowGeometry& g, ThreadPool* pool, const EpilogueBinding* epilogue = nullptr) {
  auto finish = [&](T* out, int64_t offset, int64_t count, int64_t channel) {
    if constexpr (std::is_same_v<T, float>) {
      if (epilogue) epilogue->apply(out, offset, count, channel);
    }
  };
  const int64_t Cg = C / group, Mg = M / group, K = g.kernelSize(), inSize = g.inSize(),
                outSize = g.outSize();
  if (N == 0 || M == 0 || outSize == 0) return;
  if constexpr (std::is_floating_point_v<T>) {
    // Direct loops only for true depthwise convs (few outputs per input channel); a single-channel conv with many
    // filters and long kernels (Silero's STFT conv: 1 -> 258 channels, kernel 256) is one GEMM via im2col.
    if (Cg == 1 && Mg <= 4 && g.rank() <= 2) {
      const Plane2d plane = planeOf(g);
      parallelFor(pool, N * M, 1, [&](int64_t begin, int64_t end) {
        T* buf = scratchBuffer<T>(static_cast<size_t>(paddedRows(plane) * paddedCols(plane)), 1);
        for (int64_t i = begin; i < end; ++i) {
          const int64_t n = i / M, m = i % M;
          const T* in = x + (n * C + m / Mg) * inSize;
          T* out = y + (n * M + m) * outSize;
          const T b = bias ? bias[m] : T(0);
          if constexpr (std::is_same_v<T, float>) {
            depthwisePlaneF32(in, w + m * K, b, out, plane, buf);
          } else {
            depthwisePlane<T>(in, w + m * K, b, out, plane, buf);
          }
          finish(y, (n * M + m) * outSize, outSize, m);
        }
      });
      return;
    }
  }
  // Output columns are produced in chunks: im2col columns for a range of output positions (for pointwise
  // convs, that column range of X itself), one GEMM, then the bias added while the chunk is still in cache.
  // Chunks are the unit of threading, so there are at least two per thread when the columns allow it.
  const bool pointwise = g.isPointwise();
  const int64_t budget = pointwise ? kPointwiseChunkBytes : kColumnBudgetBytes;
  const int64_t columnBytes = std::max<int64_t>(1, (Cg * K + (pointwise ? Mg : 0)) * static_cast<int64_t>(sizeof(T)));
  const int64_t minColumns = std::min<int64_t>(kMinChunkColumns, outSize);
  int64_t chunk = std::clamp<int64_t>(budget / columnBytes, minColumns, outSize);
  const int64_t threads = pool ? pool->threads() : 1;
  if (threads > 1 && N * group < 2 * threads) {
    const int64_t perThread = (outSize + 2 * threads - 1) / (2 * threads);
    chunk = std::clamp<int64_t>(perThread, minColumns, chunk);
  }
  const int64_t chunks = (outSize + chunk - 1) / chunk;
  parallelFor(pool, N * group * chunks, 1, [&](int64_t begin, int64_t end) {
    T* col = pointwise ? nullptr : scratchBuffer<T>(static_cast<size_t>(Cg * K * chunk));
    for (int64_t task = begin; task < end; ++task) {
      const int64_t n = task / (group * chunks), grp = task / chunks % group, c0 = task % chunks * chunk;
      const T* xg = x + (n * C + grp * Cg) * inSize;
      const T* wg = w + grp * Mg * Cg * K;
      T* yg = y + (n * M + grp * Mg) * outSize;
      const int64_t cols = std::min(chunk, outSize - c0);
      if (pointwise) {
        gemm<T>(false, false, Mg, cols, Cg, T(1), wg, Cg, xg + c0, inSize, T(0), yg + c0, outSize);
      } else {
        im2col<T>(xg, Cg, g, c0, c0 + cols, col);
        gemm<T>(false, false, Mg, cols, Cg * K, T(1), wg, Cg * K, col, cols, T(0), yg + c0, outSize);
      }
      for (int64_t m = 0; m < Mg; ++m) {
        if (bias) {
          addBiasRow<T>(yg + m * outSize + c0, cols, bias[grp * Mg + m]);
        }
        finish(y, (n * M + grp * Mg + m) * outSize + c0, cols, grp * Mg + m);
      }
    }
  });
}

}  // namespace

// Validates X/W/B against the attributes and resolves the output geometry.
Result<ConvShapes> resolveConvShapes(const ops::WindowAttributes& attrs, int64_t group, const Tensor& x,
                                     const Tensor& w, const Tensor* b) {
  if (x.rank() < 3) return invalidArgument("X must be [N, C, spatial...], got " + shapeToString(x.shape()));
  if (w.rank() != x.rank()) {
    return invalidArgument("W " + shapeToString(w.shape()) + " must have the rank of X " +
                           shapeToString(x.shape()));
  }
  if (group <= 0) return invalidArgument("group must be positive, got " + std::to_string(group));
  ConvShapes s;
  s.N = x.dim(0);
  s.C = x.dim(1);
  s.M = w.dim(0);
  if (s.C != w.dim(1) * group) {
    return invalidArgument("X has " + std::to_string(s.C) + " channels but W " + shapeToString(w.shape()) +
                           " with group " + std::to_string(group) + " expects " +
                           std::to_string(w.dim(1) * group));
  }
  if (s.M % group != 0) {
    return invalidArgument("output channels " + std::to_string(s.M) + " not divisible by group");
  }
  if (b && b->numel() != s.M) return invalidArgument("B must have " + std::to_string(s.M) + " elements");
  const std::vector<int64_t> kernel(w.shape().begin() + 2, w.shape().end());
  if (!attrs.kernelShape.empty() && attrs.kernelShape != kernel) {
    return invalidArgument("kernel_shape does not match W " + shapeToString(w.shape()));
  }
  const std::vector<int64_t> spatial(x.shape().begin() + 2, x.shape().end());
  KILN_ASSIGN_OR_RETURN(s.geometry, ops::resolveForwardWindow(attrs, spatial, kernel));
  s.outShape = {s.N, s.M};
  s.outShape.insert(s.outShape.end(), s.geometry.out.begin(), s.geometry.out.end());
  return s;
}

namespace {

// True for W of a conv that runConv computes with its direct depthwise loops (as it decides there).
bool isDepthwise(const Tensor& w, int64_t group) { return w.dim(1) == 1 && w.dim(0) / group <= 4 && w.rank() <= 4; }

class ConvKernel : public Kernel {
 public:
  explicit ConvKernel(const KernelInfo& info)
      : attrs_(ops::WindowAttributes::read(info.node)), group_(info.node.attrInt("group", 1)), pool_(info.threadPool) {
    // Half-precision constant weights and bias are converted to float once, not on every run.
    for (size_t i : {size_t{1}, size_t{2}}) {
      const Tensor* t = i < info.constantInputs.size() ? info.constantInputs[i] : nullptr;
      if (t && t->dtype() == DataType::FLOAT16) floatConstants_[i - 1] = toFloatTensor<Float16>(*t);
      if (t && t->dtype() == DataType::BFLOAT16) floatConstants_[i - 1] = toFloatTensor<BFloat16>(*t);
    }
    // Constant weights of a non-depthwise float conv go to oneDNN (the CPU's own ISA); depthwise ones keep the
    // direct loops, which beat it on plain layouts.
    const Tensor* w = constantConvInput(info, 1);
    const Tensor* wf = floatConstants_[0].defined() ? &floatConstants_[0] : w;
    if (info.floatOnOneDnn && wf && wf->dtype() == DataType::FLOAT && wf->rank() >= 3 && !isDepthwise(*wf, group_)) {
      oneDnn_ = OneDnnFloatConv::create(group_, *wf);
    }
  }

  Status compute(KernelContext& ctx) override {
    const Tensor* x = ctx.input(0);
    const Tensor* w = ctx.input(1);
    const Tensor* b = ctx.input(2);
    if (!x || !w) return invalidArgument("inputs X and W are required");
    if (w->dtype() != x->dtype() || (b && b->dtype() != x->dtype())) {
      return invalidArgument("X, W and B must have the same element type");
    }
    KILN_ASSIGN_OR_RETURN(ConvShapes s, resolveConvShapes(attrs_, group_, *x, *w, b));
    Tensor& y = ctx.allocateUninitializedOutput(0, x->dtype(), s.outShape);
    EpilogueBinding* epilogue = ctx.epilogue();
    if (epilogue && !epilogue->accepts(x->dtype(), s.outShape)) epilogue = nullptr;
    return dispatchType<float, double, Float16, BFloat16>(x->dtype(), [&]<class T>() {
      if constexpr (kIsHalf<T>) {
        const Tensor xf = toFloatTensor<T>(*x);
        const Tensor wf = floatConstants_[0].defined() ? floatConstants_[0] : toFloatTensor<T>(*w);
        const Tensor bf = !b ? Tensor() : floatConstants_[1].defined() ? floatConstants_[1] : toFloatTensor<T>(*b);
        Tensor yf(DataType::FLOAT, s.outShape);
        const float* bias = b ? bf.data<float>() : nullptr;
        if (!oneDnn_ || !oneDnn_->run(xf.data<float>(), bias, s, yf.data<float>(), pool_)) {
          runConv<float>(xf.data<float>(), wf.data<float>(), bias, yf.data<float>(), s.N, s.C, s.M, group_,
                         s.geometry, pool_);
        }
        fromFloatTensor<T>(yf, y);
      } else {
        const T* bias = b ? b->data<T>() : nullptr;
        bool done = false;
        if constexpr (std::is_same_v<T, float>) {
          done = oneDnn_ && oneDnn_->run(x->data<float>(), bias, s, y.data<float>(), pool_);
          if (done && epilogue) applyEpilogue(*epilogue, y.data<float>(), s);
        }
        if (!done) {
          runConv<T>(x->data<T>(), w->data<T>(), bias, y.data<T>(), s.N, s.C, s.M, group_, s.geometry, pool_,
                     epilogue);
        }
        if (epilogue) epilogue->markApplied();
      }
      return Status::ok();
    });
  }

 private:
  ops::WindowAttributes attrs_;
  int64_t group_;
  // The fused elementwise chain over all of y, one output plane per task.
  void applyEpilogue(const EpilogueBinding& epilogue, float* y, const ConvShapes& s) const {
    const int64_t plane = s.geometry.outSize();
    parallelFor(pool_, s.N * s.M, 1, [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) epilogue.apply(y, i * plane, plane, i % s.M);
    });
  }

  ThreadPool* pool_;
  Tensor floatConstants_[2];                // W and B as float when they are half-precision constants
  std::unique_ptr<OneDnnFloatConv> oneDnn_;  // the constant float W on oneDNN; null: the OpenBLAS path only
};

// ConvInteger: int32 convolution of (x - x_zero_point) and (w - w_zero_point); w_zero_point may be per output
// channel. Subtracting the zero point first makes padding contribute zero, as the op requires. Constant weights
// are packed for oneDNN when the kernel is created; inputs it does not take run the reference loops.
class ConvIntegerKernel : public Kernel {
 public:
  explicit ConvIntegerKernel(const KernelInfo& info)
      : attrs_(ops::WindowAttributes::read(info.node)),
        group_(info.node.attrInt("group", 1)),
        pool_(info.threadPool) {
    const Tensor* w = constantConvInput(info, 1);
    const bool hasZeroPoint = info.node.inputs.size() > 3 && !info.node.inputs[3].empty();
    const Tensor* wZero = hasZeroPoint ? constantConvInput(info, 3) : nullptr;
    if (w && (!hasZeroPoint || wZero)) packed_ = OneDnnInt8Conv::create(attrs_, group_, *w, wZero);
    // With x's shape fixed by inference, the primitive is made and the weights packed now, not at the first run.
    if (auto shape = info.staticInputShape(0); packed_ && shape) packed_->prepare(info.inputType(0), *shape, info.threadPool);
  }

  Status compute(KernelContext& ctx) override {
    const Tensor* x = ctx.input(0);
    const Tensor* w = ctx.input(1);
    if (!x || !w) return invalidArgument("inputs x and w are required");
    KILN_ASSIGN_OR_RETURN(ConvShapes s, resolveConvShapes(attrs_, group_, *x, *w, nullptr));
    if (packed_) {
      Tensor& y = ctx.allocateUninitializedOutput(0, DataType::INT32, s.outShape);
      if (packed_->run(*x, ctx.input(2), nullptr, s, y.data<int32_t>(), pool_)) return Status::ok();
    }
    KILN_ASSIGN_OR_RETURN(std::vector<int32_t> xi, widenConvOperand(*x, ctx.input(2), 1));
    KILN_ASSIGN_OR_RETURN(std::vector<int32_t> wi, widenConvOperand(*w, ctx.input(3), s.M));
    Tensor& y = ctx.allocateOutput(0, DataType::INT32, s.outShape);
    convolveInt32(xi.data(), wi.data(), nullptr, y.data<int32_t>(), s, group_, pool_);
    return Status::ok();
  }

 private:
  ops::WindowAttributes attrs_;
  int64_t group_;
  ThreadPool* pool_;
  std::unique_ptr<OneDnnInt8Conv> packed_;  // the constant weights on oneDNN; null: reference loops only
};

}  // namespace

const Tensor* constantConvInput(const KernelInfo& info, size_t i) {
  return i < info.constantInputs.size() ? info.constantInputs[i] : nullptr;
}

Result<std::vector<int32_t>> widenConvOperand(const Tensor& t, const Tensor* zeroPoint, int64_t slices) {
  std::vector<int32_t> out;
  Status status = dispatchType<uint8_t, int8_t>(t.dtype(), [&]<class T>() {
    if (zeroPoint && zeroPoint->dtype() != t.dtype()) {
      return invalidArgument("a zero point must have its operand's element type");
    }
    const int64_t zpCount = zeroPoint ? zeroPoint->numel() : 0;
    if (zpCount > 1 && zpCount != slices) {
      return invalidArgument("zero point has " + std::to_string(zpCount) + " values, expected 1 or " +
                             std::to_string(slices));
    }
    const T* src = t.data<T>();
    const T* z = zeroPoint ? zeroPoint->data<T>() : nullptr;
    const int64_t n = t.numel(), per = slices > 0 && n > 0 ? n / t.dim(0) : 1;
    out.resize(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) {
      const int32_t zv = zpCount == 0 ? 0 : zpCount == 1 ? z[0] : z[i / per];
      out[i] = int32_t(src[i]) - zv;
    }
    return Status::ok();
  });
  if (!status.isOk()) return status;
  return out;
}

void convolveInt32(const int32_t* x, const int32_t* w, const int32_t* bias, int32_t* y, const ConvShapes& s,
                   int64_t group, ThreadPool* pool) {
  runConv<int32_t>(x, w, bias, y, s.N, s.C, s.M, group, s.geometry, pool);
}

void registerConvKernels(KernelRegistry& registry) {
  registry.add("Conv", 1, kAnyOpset, makeFactory<ConvKernel>());
  registry.add("ConvInteger", 10, kAnyOpset, makeFactory<ConvIntegerKernel>());
  registerConvTransposeKernels(registry);
}

}  // namespace kiln::cpu
