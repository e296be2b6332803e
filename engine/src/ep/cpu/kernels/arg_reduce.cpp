// ArgMax and ArgMin: int64 index of the extreme along one axis (first occurrence, or last with
// select_last_index from opset 12).
#include <string>
#include <vector>

#include "ep/cpu/kernel_registry.h"
#include "ep/cpu/kernels/data_movement.h"

namespace kiln::cpu {
namespace {

template <bool IsMax>
class ArgReduceKernel final : public Kernel {
 public:
  explicit ArgReduceKernel(const KernelInfo& info)
      : label_(info.node.opType),
        axis_(info.node.attrInt("axis", 0)),
        keepDims_(info.node.attrInt("keepdims", 1) != 0),
        selectLast_(info.node.attrInt("select_last_index", 0) != 0) {}

  Status compute(KernelContext& ctx) override {
    const Tensor* data = ctx.input(0);
    if (!data) return nodeError(label_, "missing input 'data'");
    const int64_t rank = static_cast<int64_t>(data->rank());
    const int64_t axis = axis_ < 0 ? axis_ + rank : axis_;
    if (axis < 0 || axis >= std::max<int64_t>(rank, 1)) {
      return nodeError(label_, "axis " + std::to_string(axis_) + " is out of range for rank " + std::to_string(rank));
    }
    const int64_t n = rank == 0 ? 1 : data->dim(static_cast<size_t>(axis));
    int64_t outer = 1, inner = 1;
    Shape outShape;
    for (int64_t d = 0; d < rank; ++d) {
      const int64_t size = data->dim(static_cast<size_t>(d));
      if (d < axis) outer *= size;
      if (d > axis) inner *= size;
      if (d != axis) outShape.push_back(size);
      else if (keepDims_) outShape.push_back(1);
    }
    if (n == 0 && outer * inner != 0) return nodeError(label_, "cannot take the arg extreme of an empty axis");
    Tensor& out = ctx.allocateOutput(0, DataType::INT64, outShape);
    Status status = dispatchType<KILN_NUMERIC_TYPES>(data->dtype(), [&]<class T>() {
      using C = ComputeType<T>;
      const T* x = data->data<T>();
      int64_t* y = out.data<int64_t>();
      std::vector<C> best(static_cast<size_t>(inner));
      for (int64_t o = 0; o < outer; ++o) {
        const T* block = x + o * n * inner;
        int64_t* result = y + o * inner;
        for (int64_t i = 0; i < inner; ++i) {
          best[static_cast<size_t>(i)] = static_cast<C>(block[i]);
          result[i] = 0;
        }
        for (int64_t k = 1; k < n; ++k) {
          const T* row = block + k * inner;
          for (int64_t i = 0; i < inner; ++i) {
            const C v = static_cast<C>(row[i]);
            C& b = best[static_cast<size_t>(i)];
            const bool better = IsMax ? (selectLast_ ? v >= b : v > b) : (selectLast_ ? v <= b : v < b);
            if (better) {
              b = v;
              result[i] = k;
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
  int64_t axis_;
  bool keepDims_;
  bool selectLast_;
};

}  // namespace

void registerArgReduceKernels(KernelRegistry& registry) {
  registry.add("ArgMax", 1, kAnyOpset, makeFactory<ArgReduceKernel<true>>());
  registry.add("ArgMin", 1, kAnyOpset, makeFactory<ArgReduceKernel<false>>());
}

}  // namespace kiln::cpu
