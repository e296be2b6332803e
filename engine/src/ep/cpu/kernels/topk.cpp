// TopK: the k largest (or smallest) elements along an axis with their int64 indices. k is an attribute at
// opset 1 and input 1 from opset 10; largest/sorted arrive at opset 11. Ties keep the lower index first, and
// results are always sorted (allowed when sorted=0, where the order is unspecified).
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "ep/cpu/kernel_registry.h"
#include "ep/cpu/kernels/data_movement.h"

namespace kiln::cpu {
namespace {

// A strict total order on values with NaN above everything, so sorting never sees an invalid comparator.
template <class C>
bool valueLess(C a, C b) {
  if constexpr (std::is_floating_point_v<C>) {
    if (std::isnan(a)) return false;
    if (std::isnan(b)) return true;
  }
  return a < b;
}

class TopKKernel final : public Kernel {
 public:
  explicit TopKKernel(const KernelInfo& info)
      : label_(info.node.opType),
        kFromInput_(info.opset >= 10),
        attrK_(info.node.attrInt("k", -1)),
        axis_(info.node.attrInt("axis", -1)),
        largest_(info.node.attrInt("largest", 1) != 0) {}

  Status compute(KernelContext& ctx) override {
    const Tensor* data = ctx.input(0);
    if (!data) return nodeError(label_, "missing input 'X'");
    int64_t k = attrK_;
    if (kFromInput_) {
      if (!ctx.hasInput(1)) return nodeError(label_, "missing input 'K'");
      KILN_ASSIGN_OR_RETURN(std::vector<int64_t> kValues, readIndexInput(label_, *ctx.input(1), "input 'K'"));
      if (kValues.size() != 1) return nodeError(label_, "input 'K' must hold one value");
      k = kValues[0];
    }
    const int64_t rank = static_cast<int64_t>(data->rank());
    const int64_t axis = axis_ < 0 ? axis_ + rank : axis_;
    if (axis < 0 || axis >= rank) {
      return nodeError(label_, "axis " + std::to_string(axis_) + " is out of range for rank " + std::to_string(rank));
    }
    const int64_t n = data->dim(static_cast<size_t>(axis));
    if (k < 0 || k > n) {
      return nodeError(label_, "k = " + std::to_string(k) + " is outside [0, " + std::to_string(n) + "]");
    }
    int64_t outer = 1, inner = 1;
    for (int64_t d = 0; d < axis; ++d) outer *= data->dim(static_cast<size_t>(d));
    for (int64_t d = axis + 1; d < rank; ++d) inner *= data->dim(static_cast<size_t>(d));
    Shape outShape = data->shape();
    outShape[static_cast<size_t>(axis)] = k;
    Tensor& values = ctx.allocateOutput(0, data->dtype(), outShape);
    if (ctx.outputCount() < 2) return nodeError(label_, "needs outputs 'Values' and 'Indices'");
    Tensor& indices = ctx.allocateOutput(1, DataType::INT64, outShape);
    if (values.numel() == 0) return Status::ok();
    Status status = dispatchType<KILN_NUMERIC_TYPES>(data->dtype(), [&]<class T>() {
      using C = ComputeType<T>;
      const T* x = data->data<T>();
      T* yv = values.data<T>();
      int64_t* yi = indices.data<int64_t>();
      std::vector<std::pair<C, int64_t>> slice(static_cast<size_t>(n));
      auto before = [this](const std::pair<C, int64_t>& a, const std::pair<C, int64_t>& b) {
        const bool aFirst = largest_ ? valueLess(b.first, a.first) : valueLess(a.first, b.first);
        const bool bFirst = largest_ ? valueLess(a.first, b.first) : valueLess(b.first, a.first);
        return aFirst || (!bFirst && a.second < b.second);
      };
      for (int64_t o = 0; o < outer; ++o) {
        for (int64_t i = 0; i < inner; ++i) {
          const int64_t base = o * n * inner + i;
          for (int64_t j = 0; j < n; ++j) slice[static_cast<size_t>(j)] = {static_cast<C>(x[base + j * inner]), j};
          std::partial_sort(slice.begin(), slice.begin() + k, slice.end(), before);
          const int64_t outBase = o * k * inner + i;
          for (int64_t j = 0; j < k; ++j) {
            yv[outBase + j * inner] = x[base + slice[static_cast<size_t>(j)].second * inner];
            yi[outBase + j * inner] = slice[static_cast<size_t>(j)].second;
          }
        }
      }
      return Status::ok();
    });
    return status.isOk() ? status : nodeError(label_, status.message());
  }

 private:
  std::string label_;
  bool kFromInput_;
  int64_t attrK_;
  int64_t axis_;
  bool largest_;
};

}  // namespace

void registerTopKKernels(KernelRegistry& registry) { registry.add("TopK", 1, kAnyOpset, makeFactory<TopKKernel>()); }

}  // namespace kiln::cpu
