// QLinearConv and QLinearMatMul: 8-bit quantized convolution and matmul. Both subtract the zero points,
// accumulate exactly in int32 with the ConvInteger / MatMulInteger machinery (conv_helpers.h,
// matmul_helpers.h), then requantize: y = saturate(round(acc * multiplier) + y_zero_point), rounding half to
// even, with multiplier = (input scale * weight scale) / y_scale computed in float as ONNX Runtime does.
//  - QLinearConv: x_scale, x_zero_point, y_scale, y_zero_point are per tensor; w_scale and w_zero_point
//    are per tensor or per output channel; the optional int32 bias is added to the accumulator (its scale is
//    x_scale * w_scale, zero point 0).
//  - QLinearMatMul: a_scale/a_zero_point and y_scale/y_zero_point are per tensor or per row of a (M values),
//    b_scale/b_zero_point per tensor or per column of b (N values); batch dims broadcast like MatMul.
// The output type is y_zero_point's (uint8 or int8; uint8 when it is absent). Constant weights (w, or b of
// QLinearMatMul, with their zero point) are widened once, when the kernel is created, and packed for oneDNN's int8
// convolution/matmul (onednn_int8.h), which computes the same int32 accumulators; inputs it does not take (per-row
// zero points, int8 activations it has no implementation for) run the reference loops.
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "ep/cpu/kernel_registry.h"
#include "ep/cpu/kernels/conv_helpers.h"
#include "ep/cpu/kernels/data_movement.h"
#include "ep/cpu/kernels/matmul_helpers.h"
#include "ep/cpu/kernels/onednn_int8.h"
#include "ep/cpu/kernels/quantization.h"

namespace kiln::cpu {
namespace {

// A scale or zero point that is per tensor (1 value) or holds `count` values; returns the values.
Result<std::vector<float>> readScaleOf(const std::string& label, const Tensor* t, const char* name,
                                       int64_t count) {
  if (!t) return nodeError(label, std::string("input '") + name + "' is required");
  KILN_ASSIGN_OR_RETURN(std::vector<float> values, readScales(*t, label + ": " + name));
  if (!isPerTensor(*t) && (t->rank() != 1 || t->numel() != count)) {
    return nodeError(label, std::string(name) + " " + shapeToString(t->shape()) + " must hold 1 or " +
                                std::to_string(count) + " values");
  }
  return values;
}

Result<std::vector<int32_t>> readZeroPointOf(const std::string& label, const Tensor* t, const char* name,
                                             int64_t count) {
  KILN_ASSIGN_OR_RETURN(std::vector<int32_t> values, readZeroPoints(t, label + ": " + name));
  if (values.empty()) return std::vector<int32_t>{0};
  if (!isPerTensor(*t) && (t->rank() != 1 || t->numel() != count)) {
    return nodeError(label, std::string(name) + " " + shapeToString(t->shape()) + " must hold 1 or " +
                                std::to_string(count) + " values");
  }
  return values;
}

// The output element type (y_zero_point's) after checking it is 8-bit.
Result<DataType> outputType(const std::string& label, const Tensor* yZeroPoint) {
  if (!yZeroPoint) return DataType::UINT8;
  if (yZeroPoint->dtype() != DataType::UINT8 && yZeroPoint->dtype() != DataType::INT8) {
    return nodeError(
        label, std::string("y_zero_point must be uint8 or int8, got ") + dataTypeName(yZeroPoint->dtype()));
  }
  return yZeroPoint->dtype();
}

// Input i when it is a constant initializer; `present` tells whether the node has the input at all.
const Tensor* constantInput(const KernelInfo& info, size_t i, bool& present) {
  present = i < info.node.inputs.size() && !info.node.inputs[i].empty();
  return present && i < info.constantInputs.size() ? info.constantInputs[i] : nullptr;
}

// Widens a constant weight and its (absent or constant) zero point with `widen`; nullopt when either input
// varies per run or the widening fails (compute then reports the error).
template <class Widen>
std::optional<std::vector<int32_t>> widenConstant(const KernelInfo& info, size_t weight, size_t zeroPoint,
                                                  Widen&& widen) {
  bool hasWeight = false, hasZeroPoint = false;
  const Tensor* w = constantInput(info, weight, hasWeight);
  const Tensor* zp = constantInput(info, zeroPoint, hasZeroPoint);
  if (!w || (hasZeroPoint && !zp)) return std::nullopt;
  auto widened = widen(*w, zp);
  if (!widened.isOk()) return std::nullopt;
  return std::move(widened.value());
}

// Value i of a per-tensor (one value) or per-slice parameter.
template <class V>
V at(const std::vector<V>& values, int64_t i) {
  return values.size() == 1 ? values[0] : values[static_cast<size_t>(i)];
}

class QLinearConvKernel final : public Kernel {
 public:
  explicit QLinearConvKernel(const KernelInfo& info)
      : label_(info.node.opType),
        attrs_(ops::WindowAttributes::read(info.node)),
        group_(info.node.attrInt("group", 1)),
        pool_(info.threadPool),
        constantW_(
            widenConstant(info, 3, 5, [](const Tensor& w, const Tensor* zp) -> Result<std::vector<int32_t>> {
              if (w.rank() == 0) return invalidArgument("w must be [M, C/group, kernel...]");
              return widenConvOperand(w, zp, w.dim(0));
            })) {
    bool hasWeight = false, hasZeroPoint = false;
    const Tensor* w = constantInput(info, 3, hasWeight);
    const Tensor* wZero = constantInput(info, 5, hasZeroPoint);
    if (w && (!hasZeroPoint || wZero)) packed_ = OneDnnInt8Conv::create(attrs_, group_, *w, wZero);
    if (auto shape = info.staticInputShape(0); packed_ && shape) packed_->prepare(info.inputType(0), *shape, info.threadPool);
    if (packed_) constantW_.reset();  // the rare fallback widens per run rather than keeping 4x the weights
  }

  Status compute(KernelContext& ctx) override {
    const Tensor* x = ctx.input(0);
    const Tensor* w = ctx.input(3);
    const Tensor* bias = ctx.input(8);
    if (!x || !w) return nodeError(label_, "inputs 'x' and 'w' are required");
    if (bias && bias->dtype() != DataType::INT32) {
      return nodeError(label_, std::string("B must be int32, got ") + dataTypeName(bias->dtype()));
    }
    auto shapes = resolveConvShapes(attrs_, group_, *x, *w, bias);
    if (!shapes.isOk()) return nodeError(label_, shapes.status().message());
    const ConvShapes& s = shapes.value();
    KILN_ASSIGN_OR_RETURN(std::vector<float> xScale, readScaleOf(label_, ctx.input(1), "x_scale", 1));
    KILN_ASSIGN_OR_RETURN(std::vector<float> wScale, readScaleOf(label_, ctx.input(4), "w_scale", s.M));
    KILN_ASSIGN_OR_RETURN(std::vector<float> yScale, readScaleOf(label_, ctx.input(6), "y_scale", 1));
    KILN_ASSIGN_OR_RETURN(std::vector<int32_t> yZero,
                          readZeroPointOf(label_, ctx.input(7), "y_zero_point", 1));
    KILN_ASSIGN_OR_RETURN(DataType outType, outputType(label_, ctx.input(7)));
    std::vector<int32_t> acc(static_cast<size_t>(shapeSize(s.outShape)));
    const int32_t* biasData = bias ? bias->data<int32_t>() : nullptr;
    if (!packed_ || !packed_->run(*x, ctx.input(2), biasData, s, acc.data(), pool_)) {
      auto xi = widenConvOperand(*x, ctx.input(2), 1);
      if (!xi.isOk()) return nodeError(label_, "x: " + xi.status().message());
      Result<std::vector<int32_t>> wi = std::vector<int32_t>();
      if (!constantW_) wi = widenConvOperand(*w, ctx.input(5), s.M);
      if (!wi.isOk()) return nodeError(label_, "w: " + wi.status().message());
      const int32_t* wd = constantW_ ? constantW_->data() : wi.value().data();
      convolveInt32(xi.value().data(), wd, biasData, acc.data(), s, group_, pool_);
    }
    std::vector<float> multiplier(static_cast<size_t>(s.M));
    for (int64_t m = 0; m < s.M; ++m) multiplier[m] = xScale[0] * at(wScale, m) / yScale[0];
    Tensor& y = ctx.allocateOutput(0, outType, s.outShape);
    const int64_t spatial = s.geometry.outSize();
    return dispatchType<uint8_t, int8_t>(outType, [&]<class Q>() {
      Q* yd = y.data<Q>();
      parallelFor(pool_, s.N * s.M, 1, [&](int64_t begin, int64_t end) {  // one output plane per task
        for (int64_t plane = begin; plane < end; ++plane) {
          requantize(acc.data() + plane * spatial, spatial, multiplier[plane % s.M], yZero[0],
                     yd + plane * spatial);
        }
      });
      return Status::ok();
    });
  }

 private:
  std::string label_;
  ops::WindowAttributes attrs_;
  int64_t group_;
  ThreadPool* pool_;
  std::optional<std::vector<int32_t>> constantW_;  // w - w_zero_point when both are constant
  std::unique_ptr<OneDnnInt8Conv> packed_;         // w and w_zero_point on oneDNN when both are constant
};

class QLinearMatMulKernel final : public Kernel {
 public:
  explicit QLinearMatMulKernel(const KernelInfo& info)
      : label_(info.node.opType),
        pool_(info.threadPool),
        constantB_(widenConstant(info, 3, 5, [](const Tensor& b, const Tensor* zp) {
          return widenMatMulOperand(b, zp, false);
        })) {
    bool hasWeight = false, hasZeroPoint = false;
    const Tensor* b = constantInput(info, 3, hasWeight);
    const Tensor* bZero = constantInput(info, 5, hasZeroPoint);
    if (b && (!hasZeroPoint || bZero)) packed_ = OneDnnInt8MatMul::create(*b, bZero);
    if (auto shape = info.staticInputShape(0); packed_ && shape) packed_->prepare(info.inputType(0), *shape, info.threadPool);
    if (packed_) constantB_.reset();  // the rare fallback widens per run rather than keeping 4x the weights
  }

  Status compute(KernelContext& ctx) override {
    const Tensor* a = ctx.input(0);
    const Tensor* b = ctx.input(3);
    if (!a || !b) return nodeError(label_, "inputs 'a' and 'b' are required");
    auto planned = planMatMul(a->shape(), b->shape());
    if (!planned.isOk()) return nodeError(label_, planned.status().message());
    const MatMulPlan& plan = planned.value();
    KILN_ASSIGN_OR_RETURN(std::vector<float> aScale, readScaleOf(label_, ctx.input(1), "a_scale", plan.M));
    KILN_ASSIGN_OR_RETURN(std::vector<float> bScale, readScaleOf(label_, ctx.input(4), "b_scale", plan.N));
    KILN_ASSIGN_OR_RETURN(std::vector<float> yScale, readScaleOf(label_, ctx.input(6), "y_scale", plan.M));
    KILN_ASSIGN_OR_RETURN(std::vector<int32_t> yZero,
                          readZeroPointOf(label_, ctx.input(7), "y_zero_point", plan.M));
    KILN_ASSIGN_OR_RETURN(DataType outType, outputType(label_, ctx.input(7)));
    Tensor& y = ctx.allocateOutput(0, outType, plan.outShape);
    const int64_t count = y.numel();
    if (count == 0) return Status::ok();
    std::vector<int32_t> acc(static_cast<size_t>(count));
    if (!packed_ || !packed_->run(*a, ctx.input(2), plan, acc.data(), pool_)) {
      auto wa = widenMatMulOperand(*a, ctx.input(2), true);
      if (!wa.isOk()) return nodeError(label_, "a: " + wa.status().message());
      Result<std::vector<int32_t>> wb = std::vector<int32_t>();
      if (!constantB_) wb = widenMatMulOperand(*b, ctx.input(5), false);
      if (!wb.isOk()) return nodeError(label_, "b: " + wb.status().message());
      const int32_t* bd = constantB_ ? constantB_->data() : wb.value().data();
      runMatMul<int32_t>(plan, wa.value().data(), bd, acc.data());
    }
    return dispatchType<uint8_t, int8_t>(outType, [&]<class Q>() {
      Q* yd = y.data<Q>();
      if (aScale.size() == 1 && bScale.size() == 1 && yScale.size() == 1 && yZero.size() == 1) {  // per tensor
        requantize(acc.data(), count, aScale[0] * bScale[0] / yScale[0], yZero[0], yd);
        return Status::ok();
      }
      for (int64_t i = 0; i < count; ++i) {
        const int64_t row = (i / plan.N) % plan.M, col = i % plan.N;
        const float multiplier = at(aScale, row) * at(bScale, col) / at(yScale, row);
        yd[i] = saturateQuantize<Q>(static_cast<float>(acc[i]) * multiplier, at(yZero, row));
      }
      return Status::ok();
    });
  }

 private:
  std::string label_;
  ThreadPool* pool_;
  std::optional<std::vector<int32_t>> constantB_;  // b - b_zero_point when both are constant
  std::unique_ptr<OneDnnInt8MatMul> packed_;       // b and b_zero_point on oneDNN when both are constant
};

}  // namespace

void registerQLinearKernels(KernelRegistry& registry) {
  registry.add("QLinearConv", 10, kAnyOpset, makeFactory<QLinearConvKernel>());
  registry.add("QLinearMatMul", 10, kAnyOpset, makeFactory<QLinearMatMulKernel>());
}

}  // namespace kiln::cpu
