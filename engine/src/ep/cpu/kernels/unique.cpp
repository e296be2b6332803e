// Unique: distinct elements (or distinct slices along `axis`) with first-occurrence indices, inverse indices
// and counts. sorted=1 orders them ascending (slices lexicographically); sorted=0 keeps first-occurrence order.
#include <algorithm>
#include <cmath>
#include <numeric>
#include <string>
#include <vector>

#include "ep/cpu/kernel_registry.h"
#include "ep/cpu/kernels/data_movement.h"

namespace kiln::cpu {
namespace {

// A strict weak order with NaN above every number (and all NaNs equal), so sorting is always well defined.
template <class C>
bool lessThan(const C& a, const C& b) {
  if constexpr (std::is_floating_point_v<C>) {
    if (std::isnan(a)) return false;
    if (std::isnan(b)) return true;
  }
  return a < b;
}

class UniqueKernel final : public Kernel {
 public:
  explicit UniqueKernel(const KernelInfo& info)
      : label_(info.node.opType),
        sorted_(info.node.attrInt("sorted", 1) != 0),
        hasAxis_(info.node.hasAttribute("axis")),
        axis_(info.node.attrInt("axis", 0)) {}

  Status compute(KernelContext& ctx) override {
    const Tensor* data = ctx.input(0);
    if (!data) return nodeError(label_, "missing input 'X'");
    // View X as [outer, n, inner]: the n candidates are slices of outer * inner elements.
    int64_t outer = 1, n = data->numel(), inner = 1, axis = 0;
    if (hasAxis_) {
      const int64_t rank = static_cast<int64_t>(data->rank());
      axis = axis_ < 0 ? axis_ + rank : axis_;
      if (axis < 0 || axis >= rank) return nodeError(label_, "axis " + std::to_string(axis_) + " is out of range");
      n = data->dim(static_cast<size_t>(axis));
      for (int64_t d = 0; d < axis; ++d) outer *= data->dim(static_cast<size_t>(d));
      for (int64_t d = axis + 1; d < rank; ++d) inner *= data->dim(static_cast<size_t>(d));
    }
    Status status = dispatchType<KILN_NUMERIC_TYPES, bool, std::string>(data->dtype(), [&]<class T>() {
      using C = std::conditional_t<std::is_same_v<T, std::string>, std::string, ComputeType<T>>;
      const T* x = elementsOf<T>(*data);
      // Candidate slice c, element e (in outer-major, inner-minor order).
      using Ref = std::conditional_t<std::is_same_v<T, std::string>, const std::string&, C>;  // no string copies
      auto element = [&](int64_t c, int64_t e) -> Ref {
        const int64_t o = e / inner, i = e % inner;
        return static_cast<Ref>(x[(o * n + c) * inner + i]);
      };
      const int64_t sliceSize = outer * inner;
      auto sliceLess = [&](int64_t a, int64_t b) {
        for (int64_t e = 0; e < sliceSize; ++e) {
          const Ref va = element(a, e), vb = element(b, e);
          if (lessThan(va, vb)) return true;
          if (lessThan(vb, va)) return false;
        }
        return false;
      };
      std::vector<int64_t> order(static_cast<size_t>(n));
      std::iota(order.begin(), order.end(), 0);
      std::stable_sort(order.begin(), order.end(), sliceLess);
      // Groups of equal slices in sorted order; stable sorting puts each group's first occurrence first.
      std::vector<int64_t> groupFirst, groupCount, groupOf(static_cast<size_t>(n));
      for (size_t i = 0; i < order.size(); ++i) {
        if (i == 0 || sliceLess(order[i - 1], order[i])) {
          groupFirst.push_back(order[i]);
          groupCount.push_back(0);
        }
        groupOf[static_cast<size_t>(order[i])] = static_cast<int64_t>(groupFirst.size() - 1);
        ++groupCount.back();
      }
      const size_t groups = groupFirst.size();
      std::vector<size_t> position(groups);  // output position of each group
      std::iota(position.begin(), position.end(), 0);
      if (!sorted_) {
        std::vector<size_t> byFirst(groups);
        std::iota(byFirst.begin(), byFirst.end(), 0);
        std::sort(byFirst.begin(), byFirst.end(), [&](size_t a, size_t b) { return groupFirst[a] < groupFirst[b]; });
        for (size_t p = 0; p < groups; ++p) position[byFirst[p]] = p;
      }
      const int64_t u = static_cast<int64_t>(groups);
      Shape yShape{u};
      if (hasAxis_) {
        yShape = data->shape();
        yShape[static_cast<size_t>(axis)] = u;
      }
      Tensor& y = ctx.allocateOutput(0, data->dtype(), yShape);
      T* yData = mutableElementsOf<T>(y);
      std::vector<int64_t> firstIndex(groups), counts(groups);
      for (size_t g = 0; g < groups; ++g) {
        const int64_t p = static_cast<int64_t>(position[g]);
        firstIndex[position[g]] = groupFirst[g];
        counts[position[g]] = groupCount[g];
        for (int64_t o = 0; o < outer; ++o) {
          const T* from = x + (o * n + groupFirst[g]) * inner;
          std::copy(from, from + inner, yData + (o * u + p) * inner);
        }
      }
      if (ctx.outputCount() > 1) {
        std::copy(firstIndex.begin(), firstIndex.end(), ctx.allocateOutput(1, DataType::INT64, {u}).data<int64_t>());
      }
      if (ctx.outputCount() > 2) {
        int64_t* inverse = ctx.allocateOutput(2, DataType::INT64, {n}).data<int64_t>();
        for (int64_t c = 0; c < n; ++c) {
          inverse[c] = static_cast<int64_t>(position[static_cast<size_t>(groupOf[static_cast<size_t>(c)])]);
        }
      }
      if (ctx.outputCount() > 3) {
        std::copy(counts.begin(), counts.end(), ctx.allocateOutput(3, DataType::INT64, {u}).data<int64_t>());
      }
      return Status::ok();
    });
    return status.isOk() ? status : nodeError(label_, status.message());
  }

 private:
  std::string label_;
  bool sorted_;
  bool hasAxis_;
  int64_t axis_;
};

}  // namespace

void registerUniqueKernels(KernelRegistry& registry) {
  registry.add("Unique", 11, kAnyOpset, makeFactory<UniqueKernel>());
}

}  // namespace kiln::cpu
