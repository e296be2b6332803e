// Conv and ConvInteger. Float convolutions run as GEMMs on OpenBLAS: pointwise (1x1) ones directly on the input,
// others on im2col columns built a few output lines at a time (the scratch stays cache-sized and is reused);
// 1-D/2-D depthwise convolutions use a direct loop, which beats a GEMM with one input channel per group.
#include <algorithm>
#include <string>
#include <vector>

#include "ep/cpu/kernel_registry.h"
#include "ep/cpu/kernel_utils.h"
#include "ep/cpu/kernels/gemm_helpers.h"
#include "ep/cpu/kernels/window_geometry.h"

namespace kiln::cpu {

void registerConvTransposeKernels(KernelRegistry& registry);  // conv_transpose.cpp

namespace {

// Upper bound of one im2col chunk; about an L2 cache, so GEMM packing reads it back from cache.
constexpr int64_t kColumnBudgetBytes = int64_t{1} << 20;

// Gathers the windows of output lines [line0, line1) (a line = all positions along the last spatial dim) into
// col, laid out [channels * K][(line1 - line0) * outW] with K = kernel size; out-of-image taps read as zero.
template <class T>
void im2col(const T* x, int64_t channels, const WindowGeometry& g, int64_t line0, int64_t line1, T* col) {
  const size_t R = g.rank();
  const int64_t outW = g.out[R - 1], inW = g.in[R - 1], sW = g.strides[R - 1];
  const int64_t K = g.kernelSize(), inSize = g.inSize(), cols = (line1 - line0) * outW;
  const std::vector<int64_t> inStrides = stridesOf(g.in);
  std::vector<int64_t> o(R, 0), k(R, 0);
  for (int64_t line = line0; line < line1; ++line) {
    for (int64_t d = static_cast<int64_t>(R) - 2, rest = line; d >= 0; --d) {
      o[d] = rest % g.out[d];
      rest /= g.out[d];
    }
    std::fill(k.begin(), k.end(), 0);
    T* lineDst = col + (line - line0) * outW;
    for (int64_t kidx = 0; kidx < K; ++kidx) {
      bool inside = true;
      int64_t offset = 0;
      for (size_t d = 0; d + 1 < R && inside; ++d) {
        const int64_t i = o[d] * g.strides[d] - g.padBegin[d] + k[d] * g.dilations[d];
        inside = i >= 0 && i < g.in[d];
        offset += i * inStrides[d];
      }
      const int64_t shift = k[R - 1] * g.dilations[R - 1] - g.padBegin[R - 1];
      int64_t lo = outW, hi = outW;
      if (inside) validRange(shift, sW, inW, outW, lo, hi);
      for (int64_t c = 0; c < channels; ++c) {
        T* dst = lineDst + (c * K + kidx) * cols;
        std::fill(dst, dst + lo, T(0));
        if (hi > lo) {
          const T* src = x + c * inSize + offset;
          if (sW == 1) {
            std::copy(src + lo + shift, src + hi + shift, dst + lo);
          } else {
            for (int64_t ow = lo; ow < hi; ++ow) dst[ow] = src[ow * sW + shift];
          }
        }
        std::fill(dst + hi, dst + outW, T(0));
      }
      for (size_t d = R; d-- > 0;) {
        if (++k[d] < g.kernel[d]) break;
        k[d] = 0;
      }
    }
  }
}

// One image plane of a 1-D/2-D depthwise convolution (1-D as height 1).
struct Plane2d {
  int64_t inH, inW, outH, outW, kH, kW, sH, sW, dH, dW, pH, pW;
};

Plane2d planeOf(const WindowGeometry& g) {
  if (g.rank() == 1) {
    return {1, g.in[0], 1, g.out[0], 1, g.kernel[0], 1, g.strides[0], 1, g.dilations[0], 0, g.padBegin[0]};
  }
  return {g.in[0],      g.in[1],      g.out[0],       g.out[1],       g.kernel[0],   g.kernel[1],
          g.strides[0], g.strides[1], g.dilations[0], g.dilations[1], g.padBegin[0], g.padBegin[1]};
}

// out = bias + sum over taps of kernel[tap] * in[window tap], accumulated one output row at a time so that each
// tap is a contiguous multiply-add over the row (vectorizes for stride 1).
template <class T>
inline void depthwisePlane(const T* in, const T* kernel, T bias, T* out, const Plane2d& p) {
  for (int64_t oh = 0; oh < p.outH; ++oh) {
    T* orow = out + oh * p.outW;
    std::fill(orow, orow + p.outW, bias);
    for (int64_t kh = 0; kh < p.kH; ++kh) {
      const int64_t ih = oh * p.sH - p.pH + kh * p.dH;
      if (ih < 0 || ih >= p.inH) continue;
      const T* irow = in + ih * p.inW;
      for (int64_t kw = 0; kw < p.kW; ++kw) {
        const T w = kernel[kh * p.kW + kw];
        const int64_t shift = kw * p.dW - p.pW;
        int64_t lo, hi;
        validRange(shift, p.sW, p.inW, p.outW, lo, hi);
        if (p.sW == 1) {
          for (int64_t ow = lo; ow < hi; ++ow) orow[ow] += w * irow[ow + shift];
        } else {
          for (int64_t ow = lo; ow < hi; ++ow) orow[ow] += w * irow[ow * p.sW + shift];
        }
      }
    }
  }
}

// The float instance is the hot one (PP-OCR style backbones): compile it for AVX2/FMA too, picked at load time.
__attribute__((target_clones("arch=haswell", "default"))) void depthwisePlaneF32(const float* in,
                                                                                 const float* kernel, float bias,
                                                                                 float* out, const Plane2d& p) {
  depthwisePlane<float>(in, kernel, bias, out, p);
}

// Y = conv(X, W) + bias for X [N, C, in...], W [M, C/group, k...], Y [N, M, out...].
template <class T>
void runConv(const T* x, const T* w, const T* bias, T* y, int64_t N, int64_t C, int64_t M, int64_t group,
             const WindowGeometry& g) {
  const int64_t Cg = C / group, Mg = M / group, K = g.kernelSize(), inSize = g.inSize(), outSize = g.outSize();
  if (N == 0 || M == 0 || outSize == 0) return;
  if constexpr (std::is_floating_point_v<T>) {
    if (Cg == 1 && g.rank() <= 2) {
      const Plane2d plane = planeOf(g);
      for (int64_t n = 0; n < N; ++n) {
        for (int64_t m = 0; m < M; ++m) {
          const T* in = x + (n * C + m / Mg) * inSize;
          T* out = y + (n * M + m) * outSize;
          const T b = bias ? bias[m] : T(0);
          if constexpr (std::is_same_v<T, float>) {
            depthwisePlaneF32(in, w + m * K, b, out, plane);
          } else {
            depthwisePlane<T>(in, w + m * K, b, out, plane);
          }
        }
      }
      return;
    }
  }
  if (bias) {
    for (int64_t n = 0; n < N; ++n) {
      for (int64_t m = 0; m < M; ++m) std::fill_n(y + (n * M + m) * outSize, outSize, bias[m]);
    }
  }
  const T beta = bias ? T(1) : T(0);
  const size_t R = g.rank();
  const int64_t outW = g.out[R - 1], lines = outSize / outW;
  const bool pointwise = g.isPointwise();
  const int64_t rowBytes = std::max<int64_t>(1, Cg * K * outW * static_cast<int64_t>(sizeof(T)));
  const int64_t linesPerChunk = std::clamp<int64_t>(kColumnBudgetBytes / rowBytes, 1, lines);
  T* col = pointwise ? nullptr : scratchBuffer<T>(static_cast<size_t>(Cg * K * linesPerChunk * outW));
  for (int64_t n = 0; n < N; ++n) {
    for (int64_t grp = 0; grp < group; ++grp) {
      const T* xg = x + (n * C + grp * Cg) * inSize;
      const T* wg = w + grp * Mg * Cg * K;
      T* yg = y + (n * M + grp * Mg) * outSize;
      if (pointwise) {
        gemm<T>(false, false, Mg, outSize, Cg, T(1), wg, Cg, xg, inSize, beta, yg, outSize);
        continue;
      }
      for (int64_t l0 = 0; l0 < lines; l0 += linesPerChunk) {
        const int64_t l1 = std::min(lines, l0 + linesPerChunk), cols = (l1 - l0) * outW;
        im2col<T>(xg, Cg, g, l0, l1, col);
        gemm<T>(false, false, Mg, cols, Cg * K, T(1), wg, Cg * K, col, cols, beta, yg + l0 * outW, outSize);
      }
    }
  }
}

struct ConvShapes {
  int64_t N = 0, C = 0, M = 0;
  WindowGeometry geometry;
  Shape outShape;
};

// Validates X/W/B against the attributes and resolves the output geometry.
Result<ConvShapes> resolveConvShapes(const ir::Node& node, const WindowAttributes& attrs, int64_t group,
                                     const Tensor& x, const Tensor& w, const Tensor* b) {
  const auto fail = [&](const std::string& m) { return invalidArgument(node.label() + ": " + m); };
  if (x.rank() < 3) return fail("X must be [N, C, spatial...], got " + shapeToString(x.shape()));
  if (w.rank() != x.rank()) {
    return fail("W " + shapeToString(w.shape()) + " must have the rank of X " + shapeToString(x.shape()));
  }
  if (group <= 0) return fail("group must be positive, got " + std::to_string(group));
  ConvShapes s;
  s.N = x.dim(0);
  s.C = x.dim(1);
  s.M = w.dim(0);
  if (s.C != w.dim(1) * group) {
    return fail("X has " + std::to_string(s.C) + " channels but W " + shapeToString(w.shape()) + " with group " +
                std::to_string(group) + " expects " + std::to_string(w.dim(1) * group));
  }
  if (s.M % group != 0) return fail("output channels " + std::to_string(s.M) + " not divisible by group");
  if (b && b->numel() != s.M) return fail("B must have " + std::to_string(s.M) + " elements");
  const std::vector<int64_t> kernel(w.shape().begin() + 2, w.shape().end());
  if (!attrs.kernelShape.empty() && attrs.kernelShape != kernel) {
    return fail("kernel_shape does not match W " + shapeToString(w.shape()));
  }
  const std::vector<int64_t> spatial(x.shape().begin() + 2, x.shape().end());
  KILN_ASSIGN_OR_RETURN(s.geometry, resolveForwardWindow(node, attrs, spatial, kernel));
  s.outShape = {s.N, s.M};
  s.outShape.insert(s.outShape.end(), s.geometry.out.begin(), s.geometry.out.end());
  return s;
}

class ConvKernel : public Kernel {
 public:
  explicit ConvKernel(const KernelInfo& info)
      : node_(info.node), attrs_(WindowAttributes::read(info.node)), group_(info.node.attrInt("group", 1)) {}

  Status compute(KernelContext& ctx) override {
    const Tensor* x = ctx.input(0);
    const Tensor* w = ctx.input(1);
    const Tensor* b = ctx.input(2);
    if (!x || !w) return invalidArgument(node_.label() + ": inputs X and W are required");
    if (w->dtype() != x->dtype() || (b && b->dtype() != x->dtype())) {
      return invalidArgument(node_.label() + ": X, W and B must have the same element type");
    }
    KILN_ASSIGN_OR_RETURN(ConvShapes s, resolveConvShapes(node_, attrs_, group_, *x, *w, b));
    Tensor& y = ctx.allocateOutput(0, x->dtype(), s.outShape);
    return dispatchType<float, double, Float16, BFloat16>(x->dtype(), [&]<class T>() {
      if constexpr (kIsHalf<T>) {
        const Tensor xf = toFloatTensor<T>(*x), wf = toFloatTensor<T>(*w);
        const Tensor bf = b ? toFloatTensor<T>(*b) : Tensor();
        Tensor yf(DataType::FLOAT, s.outShape);
        runConv<float>(xf.data<float>(), wf.data<float>(), b ? bf.data<float>() : nullptr, yf.data<float>(), s.N,
                       s.C, s.M, group_, s.geometry);
        fromFloatTensor<T>(yf, y);
      } else {
        runConv<T>(x->data<T>(), w->data<T>(), b ? b->data<T>() : nullptr, y.data<T>(), s.N, s.C, s.M, group_,
                   s.geometry);
      }
      return Status::ok();
    });
  }

 private:
  const ir::Node& node_;
  WindowAttributes attrs_;
  int64_t group_;
};

// ConvInteger: int32 convolution of (x - x_zero_point) and (w - w_zero_point); w_zero_point may be per output
// channel. Subtracting the zero point first makes padding contribute zero, as the op requires.
class ConvIntegerKernel : public Kernel {
 public:
  explicit ConvIntegerKernel(const KernelInfo& info)
      : node_(info.node), attrs_(WindowAttributes::read(info.node)), group_(info.node.attrInt("group", 1)) {}

  Status compute(KernelContext& ctx) override {
    const Tensor* x = ctx.input(0);
    const Tensor* w = ctx.input(1);
    if (!x || !w) return invalidArgument(node_.label() + ": inputs x and w are required");
    KILN_ASSIGN_OR_RETURN(ConvShapes s, resolveConvShapes(node_, attrs_, group_, *x, *w, nullptr));
    std::vector<int32_t> xi, wi;
    KILN_RETURN_IF_ERROR(widen(*x, ctx.input(2), 1, xi));
    KILN_RETURN_IF_ERROR(widen(*w, ctx.input(3), s.M, wi));
    Tensor& y = ctx.allocateOutput(0, DataType::INT32, s.outShape);
    runConv<int32_t>(xi.data(), wi.data(), nullptr, y.data<int32_t>(), s.N, s.C, s.M, group_, s.geometry);
    return Status::ok();
  }

 private:
  // t - zero point as int32; the zero point is a scalar or has one value per leading-dim slice (`slices`).
  Status widen(const Tensor& t, const Tensor* zp, int64_t slices, std::vector<int32_t>& out) const {
    return dispatchType<uint8_t, int8_t>(t.dtype(), [&]<class T>() {
      if (zp && zp->dtype() != t.dtype()) {
        return invalidArgument(node_.label() + ": a zero point must have its operand's element type");
      }
      const int64_t zpCount = zp ? zp->numel() : 0;
      if (zpCount > 1 && zpCount != slices) {
        return invalidArgument(node_.label() + ": zero point has " + std::to_string(zpCount) +
                               " values, expected 1 or " + std::to_string(slices));
      }
      const T* src = t.data<T>();
      const T* z = zp ? zp->data<T>() : nullptr;
      const int64_t n = t.numel(), per = slices > 0 && t.numel() > 0 ? n / t.dim(0) : 1;
      out.resize(static_cast<size_t>(n));
      for (int64_t i = 0; i < n; ++i) {
        const int32_t zv = zpCount == 0 ? 0 : zpCount == 1 ? z[0] : z[i / per];
        out[i] = int32_t(src[i]) - zv;
      }
      return Status::ok();
    });
  }

  const ir::Node& node_;
  WindowAttributes attrs_;
  int64_t group_;
};

}  // namespace

void registerConvKernels(KernelRegistry& registry) {
  registry.add("Conv", 1, kAnyOpset, makeFactory<ConvKernel>());
  registry.add("ConvInteger", 10, kAnyOpset, makeFactory<ConvIntegerKernel>());
  registerConvTransposeKernels(registry);
}

}  // namespace kiln::cpu
