// Scatter kernels: Scatter (opset 9-10, same as ScatterElements without reduction), ScatterElements and
// ScatterND, with the opset 16 reductions (add, mul) and the opset 18 ones (max, min). The output is a copy of
// data with updates written in index order, so later duplicates win (or accumulate).
#include <algorithm>
#include <string>
#include <vector>

#include "ep/cpu/kernel_registry.h"
#include "ep/cpu/kernels/data_movement.h"

namespace kiln::cpu {
namespace {

enum class Reduction { None, Add, Mul, Max, Min };

Result<Reduction> parseReduction(const std::string& label, const std::string& name) {
  if (name == "none") return Reduction::None;
  if (name == "add") return Reduction::Add;
  if (name == "mul") return Reduction::Mul;
  if (name == "max") return Reduction::Max;
  if (name == "min") return Reduction::Min;
  return nodeError(label, "unknown reduction '" + name + "'");
}

// Writes updates into `out` in order: each pair is (output offset, update offset) of a run of `runLength`
// contiguous elements, copied or combined with the reduction.
Status applyUpdates(const std::string& label, Reduction reduction, const Tensor& updates, Tensor& out,
                    const std::vector<std::pair<int64_t, int64_t>>& pairs, int64_t runLength) {
  if (reduction == Reduction::None) {
    return dispatchStorage(out.dtype(), [&]<class S>() {
      const S* src = elementsOf<S>(updates);
      S* dst = mutableElementsOf<S>(out);
      for (const auto& [to, from] : pairs) std::copy(src + from, src + from + runLength, dst + to);
      return Status::ok();
    });
  }
  Status status = dispatchType<KILN_NUMERIC_TYPES, bool>(out.dtype(), [&]<class T>() {
    using C = ComputeType<T>;
    const T* src = updates.data<T>();
    T* dst = out.data<T>();
    for (const auto& [to, from] : pairs) {
      for (int64_t j = 0; j < runLength; ++j) {
        const C a = static_cast<C>(dst[to + j]), b = static_cast<C>(src[from + j]);
        C r = a;
        switch (reduction) {
          case Reduction::Add: r = static_cast<C>(a + b); break;
          case Reduction::Mul: r = static_cast<C>(a * b); break;
          case Reduction::Max: r = b > a ? b : a; break;
          case Reduction::Min: r = b < a ? b : a; break;
          case Reduction::None: r = b; break;
        }
        dst[to + j] = static_cast<T>(r);
      }
    }
    return Status::ok();
  });
  return status.isOk() ? status : nodeError(label, status.message());
}

// Scatter / ScatterElements: out = data; out[i with i[axis] = indices[i]] (op)= updates[i].
class ScatterElementsKernel final : public Kernel {
 public:
  explicit ScatterElementsKernel(const KernelInfo& info)
      : label_(info.node.opType),
        axis_(info.node.attrInt("axis", 0)),
        reductionName_(info.node.attrString("reduction", "none")) {}

  Status compute(KernelContext& ctx) override {
    const Tensor* data = ctx.input(0);
    if (!data || !ctx.hasInput(1) || !ctx.hasInput(2)) {
      return nodeError(label_, "needs inputs 'data', 'indices' and 'updates'");
    }
    KILN_ASSIGN_OR_RETURN(Reduction reduction, parseReduction(label_, reductionName_));
    const Tensor& indicesTensor = *ctx.input(1);
    const Tensor& updates = *ctx.input(2);
    const size_t rank = data->rank();
    const int64_t axis = axis_ < 0 ? axis_ + static_cast<int64_t>(rank) : axis_;
    if (axis < 0 || axis >= static_cast<int64_t>(rank)) {
      return nodeError(label_, "axis " + std::to_string(axis_) + " is out of range for rank " + std::to_string(rank));
    }
    if (indicesTensor.shape() != updates.shape()) return nodeError(label_, "indices and updates shapes differ");
    if (updates.dtype() != data->dtype()) return nodeError(label_, "updates and data element types differ");
    if (indicesTensor.rank() != rank) return nodeError(label_, "indices and data must have the same rank");
    for (size_t d = 0; d < rank; ++d) {
      if (static_cast<int64_t>(d) != axis && indicesTensor.dim(d) > data->dim(d)) {
        return nodeError(label_, "indices shape exceeds data shape");
      }
    }
    KILN_ASSIGN_OR_RETURN(std::vector<int64_t> indices, readIndexInput(label_, indicesTensor, "input 'indices'"));
    const int64_t n = data->dim(static_cast<size_t>(axis));
    const std::vector<int64_t> strides = stridesOf(data->shape());
    const Shape& shape = indicesTensor.shape();
    std::vector<std::pair<int64_t, int64_t>> pairs(indices.size());
    std::vector<int64_t> index(rank, 0);
    int64_t base = 0;
    for (size_t i = 0; i < indices.size(); ++i) {
      const int64_t wrapped = wrapIndex(indices[i], n);
      if (wrapped < 0) return nodeError(label_, "index " + std::to_string(indices[i]) + " is out of range");
      pairs[i] = {base + wrapped * strides[static_cast<size_t>(axis)], static_cast<int64_t>(i)};
      for (size_t d = rank; d-- > 0;) {
        const int64_t step = static_cast<int64_t>(d) == axis ? 0 : strides[d];
        base += step;
        if (++index[d] < shape[d]) break;
        base -= step * shape[d];
        index[d] = 0;
      }
    }
    Tensor out = data->clone();
    KILN_RETURN_IF_ERROR(applyUpdates(label_, reduction, updates, out, pairs, 1));
    ctx.setOutput(0, std::move(out));
    return Status::ok();
  }

 private:
  std::string label_;
  int64_t axis_;
  std::string reductionName_;
};

// ScatterND: out = data; out[indices[t]] (op)= updates[t] for each index tuple t (a slice when the tuple is
// shorter than data's rank).
class ScatterNDKernel final : public Kernel {
 public:
  explicit ScatterNDKernel(const KernelInfo& info)
      : label_(info.node.opType), reductionName_(info.node.attrString("reduction", "none")) {}

  Status compute(KernelContext& ctx) override {
    const Tensor* data = ctx.input(0);
    if (!data || !ctx.hasInput(1) || !ctx.hasInput(2)) {
      return nodeError(label_, "needs inputs 'data', 'indices' and 'updates'");
    }
    KILN_ASSIGN_OR_RETURN(Reduction reduction, parseReduction(label_, reductionName_));
    const Tensor& indicesTensor = *ctx.input(1);
    const Tensor& updates = *ctx.input(2);
    const int64_t r = static_cast<int64_t>(data->rank()), q = static_cast<int64_t>(indicesTensor.rank());
    if (q < 1) return nodeError(label_, "indices must have rank >= 1");
    if (updates.dtype() != data->dtype()) return nodeError(label_, "updates and data element types differ");
    const int64_t k = indicesTensor.dim(static_cast<size_t>(q - 1));
    if (k > r) return nodeError(label_, "index tuples are longer than data's rank");
    Shape expected(indicesTensor.shape().begin(), indicesTensor.shape().end() - 1);
    expected.insert(expected.end(), data->shape().begin() + k, data->shape().end());
    if (updates.shape() != expected) {
      return nodeError(label_, "updates shape " + shapeToString(updates.shape()) + " should be " +
                                   shapeToString(expected));
    }
    KILN_ASSIGN_OR_RETURN(std::vector<int64_t> indices, readIndexInput(label_, indicesTensor, "input 'indices'"));
    const std::vector<int64_t> strides = stridesOf(data->shape());
    int64_t sliceSize = 1;
    for (int64_t d = k; d < r; ++d) sliceSize *= data->dim(static_cast<size_t>(d));
    const int64_t tuples = k == 0 ? shapeSize(Shape(indicesTensor.shape().begin(), indicesTensor.shape().end() - 1))
                                  : static_cast<int64_t>(indices.size()) / k;
    std::vector<std::pair<int64_t, int64_t>> pairs(static_cast<size_t>(tuples));
    for (int64_t t = 0; t < tuples; ++t) {
      int64_t offset = 0;
      for (int64_t j = 0; j < k; ++j) {
        const int64_t raw = indices[static_cast<size_t>(t * k + j)];
        const int64_t wrapped = wrapIndex(raw, data->dim(static_cast<size_t>(j)));
        if (wrapped < 0) return nodeError(label_, "index " + std::to_string(raw) + " is out of range");
        offset += wrapped * strides[static_cast<size_t>(j)];
      }
      pairs[static_cast<size_t>(t)] = {offset, t * sliceSize};
    }
    Tensor out = data->clone();
    if (sliceSize > 0) KILN_RETURN_IF_ERROR(applyUpdates(label_, reduction, updates, out, pairs, sliceSize));
    ctx.setOutput(0, std::move(out));
    return Status::ok();
  }

 private:
  std::string label_;
  std::string reductionName_;
};

}  // namespace

void registerScatterKernels(KernelRegistry& registry) {
  registry.add("Scatter", 9, kAnyOpset, makeFactory<ScatterElementsKernel>());
  registry.add("ScatterElements", 11, kAnyOpset, makeFactory<ScatterElementsKernel>());
  registry.add("ScatterND", 11, kAnyOpset, makeFactory<ScatterNDKernel>());
}

}  // namespace kiln::cpu
