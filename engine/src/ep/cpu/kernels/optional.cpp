// Optional ops (opset 15+): Optional, OptionalHasElement, OptionalGetElement. An optional is a kiln::Value that is
// empty (ONNX None) or holds a tensor or a sequence. Opset 18 lets OptionalHasElement/OptionalGetElement take a
// plain tensor or sequence (always "present") and OptionalHasElement an omitted input (absent); Kiln accepts those
// at every opset, which also covers a Loop that carries None into its first iteration and a sequence afterwards.
#include <string>

#include "ep/cpu/kernel_registry.h"
#include "ep/cpu/kernel_utils.h"
#include "ep/cpu/kernels/data_movement.h"

namespace kiln::cpu {
namespace {

// Optional(input?): wraps the input, or is None when the input is omitted (the `type` attribute only types it).
class OptionalKernel final : public Kernel {
 public:
  explicit OptionalKernel(const KernelInfo& info) : label_(info.node.opType) {}
  Status compute(KernelContext& ctx) override {
    const Value input = ctx.inputValue(0);
    if (input.isOptional()) return nodeError(label_, "the input must be a tensor or a sequence, not an optional");
    return ctx.setOutputValue(0, input.defined() ? Value::optional(input) : Value::none());
  }

 private:
  std::string label_;
};

class OptionalHasElementKernel final : public Kernel {
 public:
  explicit OptionalHasElementKernel(const KernelInfo&) {}
  Status compute(KernelContext& ctx) override {
    const Value input = ctx.inputValue(0);
    const bool present = input.isOptional() ? input.hasElement() : input.defined();
    ctx.setOutput(0, Tensor::fromVector<bool>({}, {present}));
    return Status::ok();
  }
};

class OptionalGetElementKernel final : public Kernel {
 public:
  explicit OptionalGetElementKernel(const KernelInfo& info) : label_(info.node.opType) {}
  Status compute(KernelContext& ctx) override {
    const Value input = ctx.inputValue(0);
    if (!input.defined()) return nodeError(label_, "missing input");
    if (!input.isOptional()) return ctx.setOutputValue(0, input);
    if (!input.hasElement()) return nodeError(label_, "the optional input is empty (None)");
    return ctx.setOutputValue(0, input.element());
  }

 private:
  std::string label_;
};

}  // namespace

void registerOptionalKernels(KernelRegistry& registry) {
  registry.add("Optional", 15, kAnyOpset, makeFactory<OptionalKernel>());
  registry.add("OptionalHasElement", 15, kAnyOpset, makeFactory<OptionalHasElementKernel>());
  registry.add("OptionalGetElement", 15, kAnyOpset, makeFactory<OptionalGetElementKernel>());
}

}  // namespace kiln::cpu
