// CumSum: running sum along one axis (given as a scalar input), optionally exclusive and/or reversed.
#include <string>
#include <vector>

#include "ep/cpu/kernel_registry.h"
#include "ep/cpu/kernels/data_movement.h"

namespace kiln::cpu {
namespace {

class CumSumKernel final : public Kernel {
 public:
  explicit CumSumKernel(const KernelInfo& info)
      : label_(info.node.opType),
        exclusive_(info.node.attrInt("exclusive", 0) != 0),
        reverse_(info.node.attrInt("reverse", 0) != 0) {}

  Status compute(KernelContext& ctx) override {
    const Tensor* data = ctx.input(0);
    if (!data || !ctx.hasInput(1)) return nodeError(label_, "needs inputs 'x' and 'axis'");
    KILN_ASSIGN_OR_RETURN(std::vector<int64_t> axisValues, readIndexInput(label_, *ctx.input(1), "input 'axis'"));
    if (axisValues.size() != 1) return nodeError(label_, "input 'axis' must hold one value");
    const int64_t rank = static_cast<int64_t>(data->rank());
    const int64_t axis = axisValues[0] < 0 ? axisValues[0] + rank : axisValues[0];
    if (axis < 0 || axis >= rank) {
      return nodeError(label_, "axis " + std::to_string(axisValues[0]) + " is out of range for rank " +
                                   std::to_string(rank));
    }
    int64_t outer = 1, inner = 1;
    for (int64_t d = 0; d < axis; ++d) outer *= data->dim(static_cast<size_t>(d));
    for (int64_t d = axis + 1; d < rank; ++d) inner *= data->dim(static_cast<size_t>(d));
    const int64_t n = data->dim(static_cast<size_t>(axis));
    Tensor& out = ctx.allocateOutput(0, data->dtype(), data->shape());
    if (data->numel() == 0) return Status::ok();
    Status status = dispatchType<KILN_NUMERIC_TYPES>(data->dtype(), [&]<class T>() {
      using C = ComputeType<T>;
      const T* x = data->data<T>();
      T* y = out.data<T>();
      std::vector<C> acc(static_cast<size_t>(inner));
      for (int64_t o = 0; o < outer; ++o) {
        std::fill(acc.begin(), acc.end(), C(0));
        for (int64_t step = 0; step < n; ++step) {
          const int64_t k = reverse_ ? n - 1 - step : step;
          const int64_t base = (o * n + k) * inner;
          for (int64_t i = 0; i < inner; ++i) {
            C& a = acc[static_cast<size_t>(i)];
            const C v = static_cast<C>(x[base + i]);
            if (exclusive_) {
              y[base + i] = T(a);
              a += v;
            } else {
              a += v;
              y[base + i] = T(a);
            }
          }
        }
      }
      return Status::ok();
    });
    return status.isOk() ? status : nodeError(label_, status.message());
  }

 private:
  std::string label_;
  bool exclusive_;
  bool reverse_;
};

}  // namespace

void registerCumSumKernels(KernelRegistry& registry) {
  registry.add("CumSum", 11, kAnyOpset, makeFactory<CumSumKernel>());
}

}  // namespace kiln::cpu
