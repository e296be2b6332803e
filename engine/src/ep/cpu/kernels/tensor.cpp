// Tensor-creating kernels: Constant, ConstantOfShape, Range, Dropout (inference). Cast, Pad and Resize live in
// tensor_cast.cpp, tensor_pad.cpp and tensor_resize.cpp and register through registerTensorKernels.
#include <cmath>
#include <cstring>
#include <limits>
#include <random>

#include "ep/cpu/kernel_registry.h"
#include "ep/cpu/kernel_utils.h"

namespace kiln::cpu {

void registerCastKernels(KernelRegistry& registry);
void registerPadKernels(KernelRegistry& registry);
void registerResizeKernels(KernelRegistry& registry);

namespace {

// A factory for kernels whose constructor cannot fail but whose init(info) can (bad attributes).
template <class K>
KernelFactory checkedFactory() {
  return [](const KernelInfo& info) -> Result<std::unique_ptr<Kernel>> {
    auto kernel = std::make_unique<K>(info);
    KILN_RETURN_IF_ERROR(kernel->init(info));
    return std::unique_ptr<Kernel>(std::move(kernel));
  };
}

class ConstantKernel final : public Kernel {
 public:
  explicit ConstantKernel(const KernelInfo&) {}
  Status init(const KernelInfo& info) {
    const ir::Node& node = info.node;
    int found = 0;
    for (const auto& [name, attr] : node.attributes) {
      if (name == "sparse_value") {
        return notImplemented(node.label() + ": sparse_value constants are not supported");
      }
      if (name == "value") {
        value_ = attr.t;
      } else if (name == "value_float") {
        value_ = Tensor::fromVector<float>({}, {attr.f});
      } else if (name == "value_floats") {
        value_ = Tensor::fromVector<float>({static_cast<int64_t>(attr.floats.size())}, attr.floats);
      } else if (name == "value_int") {
        value_ = Tensor::fromVector<int64_t>({}, {attr.i});
      } else if (name == "value_ints") {
        value_ = Tensor::fromVector<int64_t>({static_cast<int64_t>(attr.ints.size())}, attr.ints);
      } else if (name == "value_string") {
        value_ = Tensor::fromStrings({}, {attr.s});
      } else if (name == "value_strings") {
        value_ = Tensor::fromStrings({static_cast<int64_t>(attr.strings.size())}, attr.strings);
      } else {
        continue;
      }
      ++found;
    }
    if (found != 1) {
      return invalidArgument(node.label() + ": exactly one value attribute is required, found " +
                             std::to_string(found));
    }
    if (!value_.defined()) return invalidArgument(node.label() + ": the value tensor is empty or undefined");
    return Status::ok();
  }
  Status compute(KernelContext& ctx) override {
    ctx.setOutput(0, value_);
    return Status::ok();
  }

 private:
  Tensor value_;
};

class ConstantOfShapeKernel final : public Kernel {
 public:
  explicit ConstantOfShapeKernel(const KernelInfo& info) : label_(info.node.label()) {}
  Status init(const KernelInfo& info) {
    const ir::Attribute* value = info.node.attribute("value");
    if (!value) {
      value_ = Tensor::fromVector<float>({1}, {0.0f});
    } else if (value->type != ir::AttributeType::TENSOR || value->t.numel() != 1) {
      return invalidArgument(label_ + ": 'value' must be a one-element tensor");
    } else if (value->t.dtype() == DataType::STRING) {
      return invalidArgument(label_ + ": 'value' cannot be a string tensor");
    } else {
      value_ = value->t;
    }
    return Status::ok();
  }
  Status compute(KernelContext& ctx) override {
    if (!ctx.hasInput(0)) return invalidArgument(label_ + ": missing shape input");
    if (ctx.input(0)->dtype() != DataType::INT64) {
      return invalidArgument(label_ + ": shape input must be int64");
    }
    KILN_ASSIGN_OR_RETURN(Shape shape, readInt64Values(*ctx.input(0)));
    for (int64_t d : shape) {
      if (d < 0) return invalidArgument(label_ + ": negative dimension in shape " + shapeToString(shape));
    }
    Tensor& out = ctx.allocateOutput(0, value_.dtype(), shape);
    // Fill by element size: every supported value type is 1, 2, 4 or 8 bytes of plain data.
    auto fill = [&]<class S>() {
      S element;
      std::memcpy(&element, value_.rawData(), sizeof(S));
      if (element != S(0)) std::fill_n(static_cast<S*>(out.rawData()), out.numel(), element);
      return Status::ok();
    };
    switch (dataTypeSize(value_.dtype())) {
      case 1: return fill.template operator()<uint8_t>();
      case 2: return fill.template operator()<uint16_t>();
      case 4: return fill.template operator()<uint32_t>();
      case 8: return fill.template operator()<uint64_t>();
      default: return notImplemented(label_ + ": unsupported value type " + dataTypeName(value_.dtype()));
    }
  }

 private:
  std::string label_;
  Tensor value_;
};

class RangeKernel final : public Kernel {
 public:
  explicit RangeKernel(const KernelInfo& info) : label_(info.node.label()) {}
  Status compute(KernelContext& ctx) override {
    for (size_t i = 0; i < 3; ++i) {
      if (!ctx.hasInput(i) || ctx.input(i)->numel() != 1) {
        return invalidArgument(label_ + ": start, limit and delta must be scalars");
      }
      if (ctx.input(i)->dtype() != ctx.input(0)->dtype()) {
        return invalidArgument(label_ + ": start, limit and delta must have the same type");
      }
    }
    return dispatchType<float, double, int16_t, int32_t, int64_t>(ctx.input(0)->dtype(), [&]<class T>() {
      const T start = *ctx.input(0)->data<T>(), limit = *ctx.input(1)->data<T>(), delta = *ctx.input(2)->data<T>();
      if (delta == T(0)) return invalidArgument(label_ + ": delta must not be zero");
      int64_t count = 0;
      if constexpr (std::is_floating_point_v<T>) {
        const double n = std::ceil((static_cast<double>(limit) - static_cast<double>(start)) / delta);
        if (!std::isfinite(n)) return invalidArgument(label_ + ": start, limit and delta must be finite");
        if (n > static_cast<double>(std::numeric_limits<int32_t>::max())) {
          return invalidArgument(label_ + ": range has too many elements");
        }
        count = n > 0 ? static_cast<int64_t>(n) : 0;
      } else {
        // Integer ceil((limit - start) / delta) in unsigned arithmetic so int64 extremes cannot overflow.
        const bool up = limit > start && delta > 0, down = limit < start && delta < 0;
        if (up || down) {
          const uint64_t magnitude = up ? static_cast<uint64_t>(limit) - static_cast<uint64_t>(start)
                                        : static_cast<uint64_t>(start) - static_cast<uint64_t>(limit);
          const uint64_t stride = up ? static_cast<uint64_t>(delta) : uint64_t(0) - static_cast<uint64_t>(delta);
          const uint64_t n = magnitude / stride + (magnitude % stride != 0 ? 1 : 0);
          if (n > static_cast<uint64_t>(std::numeric_limits<int32_t>::max())) {
            return invalidArgument(label_ + ": range has too many elements");
          }
          count = static_cast<int64_t>(n);
        }
      }
      T* out = ctx.allocateOutput(0, DataTypeOf<T>::value, {count}).template data<T>();
      for (int64_t i = 0; i < count; ++i) out[i] = static_cast<T>(start + static_cast<T>(i) * delta);
      return Status::ok();
    });
  }

 private:
  std::string label_;
};

// Dropout at inference is the identity with an all-true mask. With training_mode true (opset 12+) it drops
// elements at random with probability `ratio` and scales the rest by 1/(1-ratio).
class DropoutKernel final : public Kernel {
 public:
  explicit DropoutKernel(const KernelInfo& info)
      : label_(info.node.label()),
        opset_(info.opset),
        ratio_(info.node.attrFloat("ratio", 0.5f)),
        seed_(info.node.attrInt("seed", 0)),
        hasSeed_(info.node.hasAttribute("seed")) {}
  Status compute(KernelContext& ctx) override {
    if (!ctx.hasInput(0)) return invalidArgument(label_ + ": missing data input");
    const Tensor& x = *ctx.input(0);
    bool training = false;
    double ratio = ratio_;
    if (opset_ >= 12) {
      if (ctx.hasInput(1)) {
        KILN_ASSIGN_OR_RETURN(auto values, readDoubleValues(*ctx.input(1)));
        if (values.size() != 1) return invalidArgument(label_ + ": ratio must be a scalar");
        ratio = values[0];
      }
      if (ctx.hasInput(2)) {
        if (ctx.input(2)->dtype() != DataType::BOOL || ctx.input(2)->numel() != 1) {
          return invalidArgument(label_ + ": training_mode must be a bool scalar");
        }
        training = *ctx.input(2)->data<bool>();
      }
    }
    if (training && (ratio < 0 || ratio >= 1)) return invalidArgument(label_ + ": ratio must be in [0, 1)");
    training = training && ratio > 0;
    const bool wantMask = ctx.outputCount() > 1;
    // Before opset 10 the mask has the data's type; from 10 on it is bool.
    const DataType maskType = opset_ < 10 ? x.dtype() : DataType::BOOL;
    if (!training) {
      ctx.setOutput(0, x);
      if (wantMask) {
        Tensor& mask = ctx.allocateOutput(1, maskType, x.shape());
        if (maskType == DataType::BOOL) {
          std::fill_n(mask.data<bool>(), mask.numel(), true);
        } else {
          KILN_RETURN_IF_ERROR(dispatchType<KILN_FLOAT_TYPES>(maskType, [&]<class T>() {
            std::fill_n(mask.data<T>(), mask.numel(), T(1.0f));
            return Status::ok();
          }));
        }
      }
      return Status::ok();
    }
    return dispatchType<KILN_FLOAT_TYPES>(x.dtype(), [&]<class T>() {
      std::mt19937_64 engine(hasSeed_ ? static_cast<uint64_t>(seed_) : std::random_device{}());
      std::uniform_real_distribution<double> uniform(0.0, 1.0);
      const int64_t count = x.numel();
      const T* src = x.data<T>();
      T* dst = ctx.allocateOutput(0, x.dtype(), x.shape()).template data<T>();
      bool* mask = wantMask ? ctx.allocateOutput(1, DataType::BOOL, x.shape()).template data<bool>() : nullptr;
      const double scale = 1.0 / (1.0 - ratio);
      for (int64_t i = 0; i < count; ++i) {
        const bool keep = uniform(engine) >= ratio;
        dst[i] = keep ? T(static_cast<ComputeType<T>>(static_cast<double>(static_cast<ComputeType<T>>(src[i])) * scale))
                      : T(0.0f);
        if (mask) mask[i] = keep;
      }
      return Status::ok();
    });
  }

 private:
  std::string label_;
  int64_t opset_;
  float ratio_;
  int64_t seed_;
  bool hasSeed_;
};

}  // namespace

void registerTensorKernels(KernelRegistry& registry) {
  registerCastKernels(registry);
  registerPadKernels(registry);
  registerResizeKernels(registry);
  registry.add("Constant", 1, kAnyOpset, checkedFactory<ConstantKernel>());
  registry.add("ConstantOfShape", 9, kAnyOpset, checkedFactory<ConstantOfShapeKernel>());
  registry.add("Range", 11, kAnyOpset, makeFactory<RangeKernel>());
  registry.add("Dropout", 1, kAnyOpset, makeFactory<DropoutKernel>());
}

}  // namespace kiln::cpu
