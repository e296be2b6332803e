// Kernels that write a positional pattern: OneHot (on/off values by index), EyeLike (ones on a diagonal)
// and Trilu (keep the upper or lower triangle of the last two dims, zero the rest).
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "ep/cpu/kernel_registry.h"
#include "ep/cpu/kernels/data_movement.h"

namespace kiln::cpu {
namespace {

// OneHot: out has indices' shape with `depth` inserted at `axis`; out[..., j, ...] = on where the index
// (negative ones counted from depth) equals j, off elsewhere. values = [off, on] and fix the output type.
class OneHotKernel final : public Kernel {
 public:
  explicit OneHotKernel(const KernelInfo& info) : label_(info.node.opType), axis_(info.node.attrInt("axis", -1)) {}

  Status compute(KernelContext& ctx) override {
    const Tensor* indicesTensor = ctx.input(0);
    if (!indicesTensor || !ctx.hasInput(1) || !ctx.hasInput(2)) {
      return nodeError(label_, "needs inputs 'indices', 'depth' and 'values'");
    }
    const Tensor& values = *ctx.input(2);
    if (values.numel() != 2) return nodeError(label_, "values must hold [off_value, on_value]");
    Result<std::vector<double>> depthValues = readDoubleValues(*ctx.input(1));
    if (!depthValues.isOk() || depthValues->size() != 1) return nodeError(label_, "depth must be a numeric scalar");
    const int64_t depth = static_cast<int64_t>(depthValues.value()[0]);
    if (depth < 1) return nodeError(label_, "depth must be positive");
    Result<std::vector<double>> rawIndices = readDoubleValues(*indicesTensor);
    if (!rawIndices.isOk()) return nodeError(label_, "indices must be numeric");
    const int64_t rank = static_cast<int64_t>(indicesTensor->rank());
    const int64_t axis = axis_ < 0 ? axis_ + rank + 1 : axis_;
    if (axis < 0 || axis > rank) return nodeError(label_, "axis " + std::to_string(axis_) + " is out of range");
    int64_t outer = 1, inner = 1;
    Shape outShape;
    for (int64_t d = 0; d < rank; ++d) {
      if (d == axis) outShape.push_back(depth);
      outShape.push_back(indicesTensor->dim(static_cast<size_t>(d)));
      (d < axis ? outer : inner) *= indicesTensor->dim(static_cast<size_t>(d));
    }
    if (axis == rank) outShape.push_back(depth);
    Tensor& out = ctx.allocateOutput(0, values.dtype(), outShape);
    if (out.numel() == 0) return Status::ok();
    const std::vector<double>& indices = rawIndices.value();
    return dispatchStorage(values.dtype(), [&]<class S>() {
      const S* v = elementsOf<S>(values);
      S* dst = mutableElementsOf<S>(out);
      std::fill(dst, dst + out.numel(), v[0]);
      for (int64_t o = 0; o < outer; ++o) {
        for (int64_t i = 0; i < inner; ++i) {
          int64_t index = static_cast<int64_t>(std::trunc(indices[static_cast<size_t>(o * inner + i)]));
          if (index < 0) index += depth;
          if (index >= 0 && index < depth) dst[(o * depth + index) * inner + i] = v[1];
        }
      }
      return Status::ok();
    });
  }

 private:
  std::string label_;
  int64_t axis_;
};

// EyeLike: a 2-D tensor of the input's shape (type from `dtype`, else the input's) with ones where
// column - row == k.
class EyeLikeKernel final : public Kernel {
 public:
  explicit EyeLikeKernel(const KernelInfo& info)
      : label_(info.node.opType),
        dtype_(static_cast<DataType>(info.node.attrInt("dtype", 0))),
        k_(info.node.attrInt("k", 0)) {}

  Status compute(KernelContext& ctx) override {
    const Tensor* data = ctx.input(0);
    if (!data) return nodeError(label_, "missing input");
    if (data->rank() != 2) return nodeError(label_, "input must be 2-D, got " + shapeToString(data->shape()));
    const DataType type = dtype_ == DataType::UNDEFINED ? data->dtype() : dtype_;
    const int64_t rows = data->dim(0), cols = data->dim(1);
    Tensor& out = ctx.allocateOutput(0, type, data->shape());
    Status status = dispatchType<KILN_NUMERIC_TYPES, bool>(type, [&]<class T>() {
      T* y = out.data<T>();
      const T one = static_cast<T>(static_cast<ComputeType<T>>(1));
      for (int64_t r = std::max<int64_t>(0, -k_); r < rows && r + k_ < cols; ++r) y[r * cols + r + k_] = one;
      return Status::ok();
    });
    return status.isOk() ? status : nodeError(label_, status.message());
  }

 private:
  std::string label_;
  DataType dtype_;
  int64_t k_;
};

// Trilu: keeps elements with column - row >= k (upper) or <= k (lower) in each matrix of the last two dims.
class TriluKernel final : public Kernel {
 public:
  explicit TriluKernel(const KernelInfo& info)
      : label_(info.node.opType), upper_(info.node.attrInt("upper", 1) != 0) {}

  Status compute(KernelContext& ctx) override {
    const Tensor* data = ctx.input(0);
    if (!data) return nodeError(label_, "missing input");
    if (data->rank() < 2) return nodeError(label_, "input must have rank >= 2");
    int64_t k = 0;
    if (ctx.hasInput(1)) {
      KILN_ASSIGN_OR_RETURN(std::vector<int64_t> kValues, readIndexInput(label_, *ctx.input(1), "input 'k'"));
      if (kValues.size() != 1) return nodeError(label_, "input 'k' must hold one value");
      k = kValues[0];
    }
    const size_t rank = data->rank();
    const int64_t rows = data->dim(rank - 2), cols = data->dim(rank - 1);
    const int64_t matrices = rows * cols == 0 ? 0 : data->numel() / (rows * cols);
    Tensor& out = ctx.allocateOutput(0, data->dtype(), data->shape());
    if (out.numel() == 0) return Status::ok();
    return dispatchStorage(data->dtype(), [&]<class S>() {
      const S* src = elementsOf<S>(*data);
      S* dst = mutableElementsOf<S>(out);  // zero-filled (empty strings)
      for (int64_t m = 0; m < matrices; ++m) {
        for (int64_t r = 0; r < rows; ++r) {
          // Kept columns form one run: [r + k, cols) for upper, [0, r + k] for lower.
          const int64_t first = upper_ ? std::clamp<int64_t>(r + k, 0, cols) : 0;
          const int64_t last = upper_ ? cols : std::clamp<int64_t>(r + k + 1, 0, cols);
          const int64_t base = (m * rows + r) * cols;
          if (last > first) std::copy(src + base + first, src + base + last, dst + base + first);
        }
      }
      return Status::ok();
    });
  }

 private:
  std::string label_;
  bool upper_;
};

}  // namespace

void registerFillPatternKernels(KernelRegistry& registry) {
  registry.add("OneHot", 9, kAnyOpset, makeFactory<OneHotKernel>());
  registry.add("EyeLike", 9, kAnyOpset, makeFactory<EyeLikeKernel>());
  registry.add("Trilu", 14, kAnyOpset, makeFactory<TriluKernel>());
}

}  // namespace kiln::cpu
