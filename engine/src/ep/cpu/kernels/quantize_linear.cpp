// QuantizeLinear, DequantizeLinear and DynamicQuantizeLinear (linear 8-bit quantization; QLinearConv and
// QLinearMatMul live in qlinear_ops.cpp and register through registerQuantizationKernels).
//  - QuantizeLinear: y = saturate(round(x / y_scale) + y_zero_point), rounding half to even. The
//    division runs in float for float inputs (as ONNX Runtime and the numpy reference do) and in double for
//    int32 inputs.
//    The output type is y_zero_point's, uint8 when it is absent.
//  - DequantizeLinear: y = (x - x_zero_point) * x_scale; int32 inputs take no zero point (it must be 0).
//  - Opset 10 takes per-tensor parameters only; opset 13 adds per-axis ones: a 1-D scale (and zero point) of
//    x.shape[axis] values. A one-element 1-D scale counts as per-tensor at every opset.
//  - Opset 21 adds blocked ones (block_size > 0): scale has x's rank and shape except ceil(x.shape[axis] /
//    block_size) along axis; element (.., j, ..) uses the parameter at (.., j / block_size, ..). int4/uint4 x and
//    zero points arrive widened to int8/uint8 (onnx/tensor_proto.h), so they dequantize here unchanged.
//  - DynamicQuantizeLinear (uint8): the range [min(0, min(x)), max(0, max(x))] always holds 0, scale =
//    (max - min) / 255 and zero point = saturate(round(0 - min / scale)); all-zero input gives scale 1
//    (onnxruntime's choice; ONNX's formula divides by 0 there), zero point 0 and y = 0.
#include <algorithm>
#include <string>
#include <vector>

#include "ep/cpu/kernel_registry.h"
#include "ep/cpu/kernels/data_movement.h"
#include "ep/cpu/kernels/gemm_helpers.h"
#include "ep/cpu/kernels/quantization.h"

namespace kiln::cpu {

void registerQLinearKernels(KernelRegistry& registry);  // qlinear_ops.cpp

namespace {

// Where each element's scale and zero point come from: element i uses parameter (i / inner) % channels, or for
// blocked quantization ((i / (channels * inner)) * blocks + ((i / inner) % channels) / block) * inner + i % inner.
struct QuantLayout {
  int64_t outer = 1, channels = 1, inner = 1;
  int64_t block = 0, blocks = 0;  // block > 0: blocked quantization
};

// Checks the scale and zero point against x and returns the layout; per-axis needs `perAxis` (opset >= 13).
Result<QuantLayout> blockedLayout(const std::string& label, const Tensor& x, const Tensor& scale,
                                  const Tensor* zeroPoint, int64_t axisAttr, int64_t blockSize) {
  auto axis = normalizeAxis(axisAttr, static_cast<int64_t>(x.rank()));
  if (!axis.isOk()) return nodeError(label, "axis: " + axis.status().message());
  const size_t a = static_cast<size_t>(axis.value());
  Shape expected = x.shape();
  expected[a] = (x.dim(a) + blockSize - 1) / blockSize;
  if (scale.shape() != expected || (zeroPoint && zeroPoint->shape() != expected)) {
    return nodeError(label, "blocked quantization of x " + shapeToString(x.shape()) + " along axis " +
                                std::to_string(a) + " in blocks of " + std::to_string(blockSize) +
                                " needs scale (and zero point) of shape " + shapeToString(expected) + ", got " +
                                shapeToString(scale.shape()));
  }
  QuantLayout layout;
  layout.outer = shapeSize(Shape(x.shape().begin(), x.shape().begin() + axis.value()));
  layout.channels = x.dim(a);
  layout.inner = shapeSize(Shape(x.shape().begin() + axis.value() + 1, x.shape().end()));
  layout.block = blockSize;
  layout.blocks = expected[a];
  return layout;
}

Result<QuantLayout> resolveLayout(const std::string& label, const Tensor& x, const Tensor& scale,
                                  const Tensor* zeroPoint, int64_t axisAttr, bool perAxis, int64_t blockSize) {
  if (zeroPoint && zeroPoint->numel() != scale.numel()) {
    return nodeError(label, "zero point " + shapeToString(zeroPoint->shape()) + " must match scale " +
                                shapeToString(scale.shape()));
  }
  QuantLayout layout;
  layout.inner = x.numel();
  if (blockSize < 0) return nodeError(label, "block_size must not be negative");
  if (blockSize > 0) return blockedLayout(label, x, scale, zeroPoint, axisAttr, blockSize);
  if (isPerTensor(scale)) return layout;
  if (!perAxis) {
    return nodeError(label, "scale " + shapeToString(scale.shape()) +
                                " must be a scalar at opset 10 (per-axis quantization needs opset 13)");
  }
  if (scale.rank() != 1) {
    return nodeError(label, "scale must be a scalar or 1-D, got " + shapeToString(scale.shape()));
  }
  auto axis = normalizeAxis(axisAttr, static_cast<int64_t>(x.rank()));
  if (!axis.isOk()) return nodeError(label, "axis: " + axis.status().message());
  const size_t a = static_cast<size_t>(axis.value());
  if (scale.numel() != x.dim(a)) {
    return nodeError(label, "scale has " + std::to_string(scale.numel()) + " values but x " +
                                shapeToString(x.shape()) + " has " + std::to_string(x.dim(a)) +
                                " along axis " + std::to_string(a));
  }
  layout.outer = shapeSize(Shape(x.shape().begin(), x.shape().begin() + axis.value()));
  layout.channels = x.dim(a);
  layout.inner = shapeSize(Shape(x.shape().begin() + axis.value() + 1, x.shape().end()));
  return layout;
}

// Calls fn(index, parameter index) for every element in layout order.
template <class F>
void forEachElement(const QuantLayout& layout, F&& fn) {
  int64_t i = 0;
  for (int64_t o = 0; o < layout.outer; ++o) {
    for (int64_t c = 0; c < layout.channels; ++c) {
      if (layout.block > 0) {
        const int64_t row = (o * layout.blocks + c / layout.block) * layout.inner;
        for (int64_t k = 0; k < layout.inner; ++k, ++i) fn(i, row + k);
      } else {
        for (int64_t k = 0; k < layout.inner; ++k, ++i) fn(i, c);
      }
    }
  }
}

// What QuantizeLinear and DequantizeLinear read the same way: the axis/block attributes, and x, the scale and the
// zero point (checked, with one scale and zero point per channel of the layout).
struct LinearQuantizationParams {
  QuantLayout layout;
  std::vector<float> scales;
  std::vector<int32_t> zeroPoints;
};

class LinearQuantizationKernel : public Kernel {
 protected:
  explicit LinearQuantizationKernel(const KernelInfo& info)
      : label_(info.node.opType),
        axis_(info.node.attrInt("axis", 1)),
        perAxis_(info.opset >= 13),
        blockSize_(info.node.attrInt("block_size", 0)) {}

  // `scaleName`/`zeroPointName` name the inputs in messages; `zeroPointTypedLikeX` requires the zero point to have
  // x's element type (DequantizeLinear; for QuantizeLinear it sets the output type).
  Result<LinearQuantizationParams> readParams(KernelContext& ctx, const std::string& scaleName,
                                              const std::string& zeroPointName, bool zeroPointTypedLikeX) const {
    const Tensor* x = ctx.input(0);
    const Tensor* scale = ctx.input(1);
    const Tensor* zeroPoint = ctx.input(2);
    if (!x || !scale) return nodeError(label_, "inputs 'x' and '" + scaleName + "' are required");
    if (zeroPointTypedLikeX && zeroPoint && zeroPoint->dtype() != x->dtype()) {
      return nodeError(label_, zeroPointName + " must have x's element type " + dataTypeName(x->dtype()));
    }
    LinearQuantizationParams params;
    KILN_ASSIGN_OR_RETURN(params.layout, resolveLayout(label_, *x, *scale, zeroPoint, axis_, perAxis_, blockSize_));
    KILN_ASSIGN_OR_RETURN(params.scales, readScales(*scale, label_ + ": " + scaleName));
    KILN_ASSIGN_OR_RETURN(params.zeroPoints, readZeroPoints(zeroPoint, label_ + ": " + zeroPointName));
    if (params.zeroPoints.empty()) params.zeroPoints.assign(params.scales.size(), 0);
    return params;
  }

  std::string label_;
  int64_t axis_;
  bool perAxis_;
  int64_t blockSize_;
};

class QuantizeLinearKernel final : public LinearQuantizationKernel {
 public:
  explicit QuantizeLinearKernel(const KernelInfo& info) : LinearQuantizationKernel(info) {}

  Status compute(KernelContext& ctx) override {
    KILN_ASSIGN_OR_RETURN(LinearQuantizationParams params, readParams(ctx, "y_scale", "y_zero_point", false));
    const Tensor* x = ctx.input(0);
    const Tensor* zeroPoint = ctx.input(2);
    const DataType outType = zeroPoint ? zeroPoint->dtype() : DataType::UINT8;
    Tensor& y = ctx.allocateOutput(0, outType, x->shape());
    Status status = dispatchType<float, Float16, BFloat16, int32_t>(x->dtype(), [&]<class X>() {
      // float inputs divide in float; int32 ones in double, so that large values keep their exact quotient.
      using F = std::conditional_t<std::is_same_v<X, int32_t>, double, float>;
      const X* xd = x->data<X>();
      return dispatchType<uint8_t, int8_t, uint16_t, int16_t>(outType, [&]<class Q>() {
        Q* yd = y.data<Q>();
        forEachElement(params.layout, [&](int64_t i, int64_t c) {
          const F scaled = static_cast<F>(static_cast<ComputeType<X>>(xd[i])) / static_cast<F>(params.scales[c]);
          yd[i] = saturateQuantize<Q>(scaled, params.zeroPoints[c]);
        });
        return Status::ok();
      });
    });
    return status.isOk() ? status : nodeError(label_, status.message());
  }
};

class DequantizeLinearKernel final : public LinearQuantizationKernel {
 public:
  explicit DequantizeLinearKernel(const KernelInfo& info) : LinearQuantizationKernel(info) {}

  Status compute(KernelContext& ctx) override {
    KILN_ASSIGN_OR_RETURN(LinearQuantizationParams params, readParams(ctx, "x_scale", "x_zero_point", true));
    const Tensor* x = ctx.input(0);
    const Tensor* scale = ctx.input(1);
    if (x->dtype() == DataType::INT32) {
      for (int32_t z : params.zeroPoints) {
        if (z != 0) return nodeError(label_, "x_zero_point must be 0 for int32 x");
      }
    }
    Tensor& y = ctx.allocateOutput(0, scale->dtype(), x->shape());
    Status status = dispatchType<uint8_t, int8_t, uint16_t, int16_t, int32_t>(x->dtype(), [&]<class X>() {
      const X* xd = x->data<X>();
      return dispatchType<float, Float16, BFloat16>(y.dtype(), [&]<class Y>() {
        Y* yd = y.data<Y>();
        forEachElement(params.layout, [&](int64_t i, int64_t c) {
          const int64_t centered = static_cast<int64_t>(xd[i]) - params.zeroPoints[c];
          yd[i] = static_cast<Y>(static_cast<float>(centered) * params.scales[c]);
        });
        return Status::ok();
      });
    });
    return status.isOk() ? status : nodeError(label_, status.message());
  }
};

// y[i] = saturateQuantize<uint8_t>(x[i] / scale, zeroPoint), spelled so that it vectorizes (the AVX2 twin rounds with
// vroundps); the same operations in the same order, so the same bytes.
KILN_ALWAYS_INLINE inline void quantizeToUint8(const float* x, uint8_t* y, int64_t n, float scale, int32_t zeroPoint) {
  const float zero = static_cast<float>(zeroPoint);
  for (int64_t i = 0; i < n; ++i) {
    const float scaled = x[i] / scale;
    float value = std::nearbyint(scaled) + zero;
    value = value < 0.0f ? 0.0f : value > 255.0f ? 255.0f : value;
    y[i] = scaled != scaled ? static_cast<uint8_t>(zeroPoint) : static_cast<uint8_t>(value);
  }
}
KILN_AVX2_TARGET void quantizeToUint8Avx2(const float* x, uint8_t* y, int64_t n, float scale, int32_t zeroPoint) {
  quantizeToUint8(x, y, n, scale, zeroPoint);
}
void quantizeToUint8Baseline(const float* x, uint8_t* y, int64_t n, float scale, int32_t zeroPoint) {
  quantizeToUint8(x, y, n, scale, zeroPoint);
}

class DynamicQuantizeLinearKernel final : public Kernel {
 public:
  explicit DynamicQuantizeLinearKernel(const KernelInfo& info) : label_(info.node.opType), pool_(info.threadPool) {}

  Status compute(KernelContext& ctx) override {
    const Tensor* x = ctx.input(0);
    if (!x) return nodeError(label_, "input 'x' is required");
    if (x->dtype() != DataType::FLOAT) {
      return nodeError(label_, std::string("x must be float, got ") + dataTypeName(x->dtype()));
    }
    if (ctx.outputCount() < 3) return nodeError(label_, "needs outputs 'y', 'y_scale' and 'y_zero_point'");
    const float* xd = x->data<float>();
    const int64_t n = x->numel();
    // The range always includes 0; NaNs fail both comparisons and are skipped. Min and max are exact whatever the
    // order, so blocks of x reduce on the session's threads and their results combine.
    const int64_t blocks = (n + kReduceBlock - 1) / kReduceBlock;
    std::vector<float> blockLo(static_cast<size_t>(blocks), 0.0f), blockHi(static_cast<size_t>(blocks), 0.0f);
    parallelFor(pool_, blocks, 1, [&](int64_t begin, int64_t end) {
      for (int64_t b = begin; b < end; ++b) {
        float l = 0.0f, h = 0.0f;
        for (int64_t i = b * kReduceBlock, e = std::min(n, i + kReduceBlock); i < e; ++i) {
          l = xd[i] < l ? xd[i] : l;
          h = xd[i] > h ? xd[i] : h;
        }
        blockLo[b] = l;
        blockHi[b] = h;
      }
    });
    float lo = 0.0f, hi = 0.0f;
    for (int64_t b = 0; b < blocks; ++b) {
      lo = blockLo[b] < lo ? blockLo[b] : lo;
      hi = blockHi[b] > hi ? blockHi[b] : hi;
    }
    constexpr float kQMin = 0.0f, kQMax = 255.0f;
    // An empty range (every element 0 or NaN) takes scale 1, as onnxruntime does.
    const float scale = hi == lo ? 1.0f : (hi - lo) / (kQMax - kQMin);
    const int32_t zeroPoint = scale == 0.0f ? 0 : saturateQuantize<uint8_t>(kQMin - lo / scale, 0);
    Tensor& y = ctx.allocateOutput(0, DataType::UINT8, x->shape());
    ctx.allocateOutput(1, DataType::FLOAT, {}).data<float>()[0] = scale;
    ctx.allocateOutput(2, DataType::UINT8, {}).data<uint8_t>()[0] = static_cast<uint8_t>(zeroPoint);
    uint8_t* yd = y.data<uint8_t>();
    if (scale == 0.0f) return Status::ok();  // a range so small that its scale underflows: y stays 0
    const auto quantize = cpuHasAvx2Fma() ? quantizeToUint8Avx2 : quantizeToUint8Baseline;
    parallelFor(pool_, n, kReduceBlock, [&](int64_t begin, int64_t end) {
      quantize(xd + begin, yd + begin, end - begin, scale, zeroPoint);
    });
    return Status::ok();
  }

 private:
  // Elements per block of the range reduction, and the least a thread quantizes.
  static constexpr int64_t kReduceBlock = 16384;
  std::string label_;
  ThreadPool* pool_;
};

}  // namespace

void registerQuantizationKernels(KernelRegistry& registry) {
  registry.add("QuantizeLinear", 10, kAnyOpset, makeFactory<QuantizeLinearKernel>());
  registry.add("DequantizeLinear", 10, kAnyOpset, makeFactory<DequantizeLinearKernel>());
  registry.add("DynamicQuantizeLinear", 11, kAnyOpset, makeFactory<DynamicQuantizeLinearKernel>());
  registerQLinearKernels(registry);
}

}  // namespace kiln::cpu
