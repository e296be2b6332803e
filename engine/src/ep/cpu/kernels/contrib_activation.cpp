// The Gelu family of onnxruntime's contrib operators (com.microsoft), each an activation of x, or of x + bias where
// a bias [hidden] (x's last dimension) is given:
//  - FastGelu (optional bias): the tanh approximation 0.5 v (1 + tanh(sqrt(2/pi) (v + 0.044715 v^3)));
//  - BiasGelu (bias required) and Gelu (no bias): the exact form v Phi(v) = 0.5 v (1 + erf(v / sqrt 2));
//  - QuickGelu: v sigmoid(alpha v), alpha 1.702 unless given.
// Halves compute in float. An exporter fuses Add + Gelu into these, so the bias add happens here, in one pass.
#include <algorithm>
#include <string>

#include "ep/cpu/kernel_registry.h"
#include "ep/cpu/kernel_utils.h"
#include "ep/cpu/kernels/elementwise_common.h"

namespace kiln::cpu {
namespace {

using elementwise::erfOf;
using elementwise::expOf;
using elementwise::tanhOf;

struct TanhGelu {
  explicit TanhGelu(const ir::Node&) {}
  template <class C>
  C operator()(C v) const {
    const C inner = static_cast<C>(0.7978845608028654) * (v + static_cast<C>(0.044715) * v * v * v);
    return C(0.5) * v * (C(1) + tanhOf(inner));
  }
};

struct ErfGelu {
  explicit ErfGelu(const ir::Node&) {}
  template <class C>
  C operator()(C v) const { return C(0.5) * v * (C(1) + erfOf(v * static_cast<C>(0.7071067811865476))); }
};

struct QuickGelu {
  float alpha;
  explicit QuickGelu(const ir::Node& node) : alpha(node.attrFloat("alpha", 1.702f)) {}
  template <class C>
  C operator()(C v) const { return v / (C(1) + expOf(-static_cast<C>(alpha) * v)); }
};

enum class BiasInput { kNone, kOptional, kRequired };

template <class Op, BiasInput kBias>
class BiasActivationKernel : public Kernel {
 public:
  explicit BiasActivationKernel(const KernelInfo& info)
      : label_(info.node.label()), op_(info.node), pool_(info.threadPool) {}

  Status compute(KernelContext& ctx) override {
    const Tensor* x = ctx.input(0);
    const Tensor* bias = kBias == BiasInput::kNone ? nullptr : ctx.input(1);
    if (!x) return fail("input X is required");
    if (kBias == BiasInput::kRequired && !bias) return fail("input bias is required");
    const int64_t hidden = x->rank() == 0 ? 1 : x->shape().back();
    if (bias) {
      if (bias->dtype() != x->dtype()) return fail("bias must have X's element type");
      if (x->rank() == 0 || bias->rank() != 1 || bias->shape()[0] != hidden) {
        return fail("bias " + shapeToString(bias->shape()) + " must be [" + std::to_string(hidden) +
                    "], X's last dimension");
      }
    }
    Tensor& y = ctx.allocateUninitializedOutput(0, x->dtype(), x->shape());
    return dispatchType<float, Float16, BFloat16, double>(x->dtype(), [&]<class T>() {
      using C = ComputeType<T>;
      const T* in = x->data<T>();
      const T* b = bias ? bias->data<T>() : nullptr;
      T* out = y.data<T>();
      parallelFor(pool_, x->numel(), 16384, [&](int64_t begin, int64_t end) {
        for (int64_t i = begin; i < end; ++i) {
          C v = static_cast<C>(in[i]);
          if (b) v += static_cast<C>(b[i % hidden]);
          out[i] = T(op_(v));
        }
      });
      return Status::ok();
    });
  }

 private:
  Status fail(const std::string& message) const { return invalidArgument(label_ + ": " + message); }

  std::string label_;
  Op op_;
  ThreadPool* pool_;
};

}  // namespace

void registerContribActivationKernels(KernelRegistry& registry) {
  registry.add("FastGelu", 1, kAnyOpset, makeFactory<BiasActivationKernel<TanhGelu, BiasInput::kOptional>>(),
               ir::kMicrosoftDomain);
  registry.add("BiasGelu", 1, kAnyOpset, makeFactory<BiasActivationKernel<ErfGelu, BiasInput::kRequired>>(),
               ir::kMicrosoftDomain);
  registry.add("Gelu", 1, kAnyOpset, makeFactory<BiasActivationKernel<ErfGelu, BiasInput::kNone>>(),
               ir::kMicrosoftDomain);
  registry.add("QuickGelu", 1, kAnyOpset, makeFactory<BiasActivationKernel<QuickGelu, BiasInput::kNone>>(),
               ir::kMicrosoftDomain);
}

}  // namespace kiln::cpu
