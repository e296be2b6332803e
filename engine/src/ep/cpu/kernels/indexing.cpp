// Gather kernels: Gather, GatherElements, GatherND (batch_dims), for every element type. The other indexing
// kernels (Scatter*, Slice, Compress, NonZero, ReverseSequence, OneHot, EyeLike, Trilu, Unique) live in
// scatter.cpp, slice.cpp, selection.cpp, fill_patterns.cpp and unique.cpp and register through
// registerIndexingKernels.
#include <algorithm>
#include <string>
#include <vector>

#include "ep/cpu/kernel_registry.h"
#include "ep/cpu/kernels/data_movement.h"

namespace kiln::cpu {

void registerScatterKernels(KernelRegistry& registry);        // scatter.cpp
void registerSliceKernels(KernelRegistry& registry);          // slice.cpp
void registerSelectionKernels(KernelRegistry& registry);      // selection.cpp
void registerFillPatternKernels(KernelRegistry& registry);    // fill_patterns.cpp
void registerUniqueKernels(KernelRegistry& registry);         // unique.cpp

namespace {

// Gather: out = data[:axis] + indices.shape + data[axis+1:], copying whole inner blocks.
class GatherKernel final : public Kernel {
 public:
  explicit GatherKernel(const KernelInfo& info) : label_(info.node.opType), axis_(info.node.attrInt("axis", 0)) {}

  Status compute(KernelContext& ctx) override {
    const Tensor* data = ctx.input(0);
    if (!data || !ctx.hasInput(1)) return nodeError(label_, "needs inputs 'data' and 'indices'");
    const Tensor& indicesTensor = *ctx.input(1);
    const int64_t rank = static_cast<int64_t>(data->rank());
    const int64_t axis = axis_ < 0 ? axis_ + rank : axis_;
    if (axis < 0 || axis >= rank) {
      return nodeError(label_, "axis " + std::to_string(axis_) + " is out of range for rank " + std::to_string(rank));
    }
    KILN_ASSIGN_OR_RETURN(std::vector<int64_t> indices, readIndexInput(label_, indicesTensor, "input 'indices'"));
    const int64_t n = data->dim(static_cast<size_t>(axis));
    for (int64_t& index : indices) {
      const int64_t wrapped = wrapIndex(index, n);
      if (wrapped < 0) {
        return nodeError(label_, "index " + std::to_string(index) + " is out of range for axis size " +
                                     std::to_string(n));
      }
      index = wrapped;
    }
    int64_t outer = 1, inner = 1;
    Shape outShape;
    for (int64_t d = 0; d < rank; ++d) {
      const int64_t size = data->dim(static_cast<size_t>(d));
      if (d < axis) outer *= size;
      if (d > axis) inner *= size;
      if (d == axis) {
        outShape.insert(outShape.end(), indicesTensor.shape().begin(), indicesTensor.shape().end());
      } else {
        outShape.push_back(size);
      }
    }
    Tensor& out = ctx.allocateOutput(0, data->dtype(), outShape);
    if (out.numel() == 0) return Status::ok();
    const int64_t m = static_cast<int64_t>(indices.size());
    return dispatchStorage(data->dtype(), [&]<class S>() {
      const S* src = elementsOf<S>(*data);
      S* dst = mutableElementsOf<S>(out);
      for (int64_t o = 0; o < outer; ++o) {
        for (int64_t j = 0; j < m; ++j) {
          const S* from = src + (o * n + indices[static_cast<size_t>(j)]) * inner;
          std::copy(from, from + inner, dst + (o * m + j) * inner);
        }
      }
      return Status::ok();
    });
  }

 private:
  std::string label_;
  int64_t axis_;
};

// GatherElements: out[i] = data[i with i[axis] replaced by indices[i]]; out has the indices' shape.
class GatherElementsKernel final : public Kernel {
 public:
  explicit GatherElementsKernel(const KernelInfo& info)
      : label_(info.node.opType), axis_(info.node.attrInt("axis", 0)) {}

  Status compute(KernelContext& ctx) override {
    const Tensor* data = ctx.input(0);
    if (!data || !ctx.hasInput(1)) return nodeError(label_, "needs inputs 'data' and 'indices'");
    const Tensor& indicesTensor = *ctx.input(1);
    const size_t rank = data->rank();
    const int64_t axis = axis_ < 0 ? axis_ + static_cast<int64_t>(rank) : axis_;
    if (axis < 0 || axis >= static_cast<int64_t>(rank)) {
      return nodeError(label_, "axis " + std::to_string(axis_) + " is out of range for rank " + std::to_string(rank));
    }
    if (indicesTensor.rank() != rank) return nodeError(label_, "indices and data must have the same rank");
    for (size_t d = 0; d < rank; ++d) {
      if (static_cast<int64_t>(d) != axis && indicesTensor.dim(d) > data->dim(d)) {
        return nodeError(label_, "indices shape " + shapeToString(indicesTensor.shape()) + " exceeds data shape " +
                                     shapeToString(data->shape()));
      }
    }
    KILN_ASSIGN_OR_RETURN(std::vector<int64_t> indices, readIndexInput(label_, indicesTensor, "input 'indices'"));
    const int64_t n = data->dim(static_cast<size_t>(axis));
    for (int64_t& index : indices) {
      const int64_t wrapped = wrapIndex(index, n);
      if (wrapped < 0) return nodeError(label_, "index " + std::to_string(index) + " is out of range");
      index = wrapped;
    }
    Tensor& out = ctx.allocateOutput(0, data->dtype(), indicesTensor.shape());
    if (out.numel() == 0) return Status::ok();
    const std::vector<int64_t> strides = stridesOf(data->shape());
    const Shape& shape = indicesTensor.shape();
    return dispatchStorage(data->dtype(), [&]<class S>() {
      const S* src = elementsOf<S>(*data);
      S* dst = mutableElementsOf<S>(out);
      std::vector<int64_t> index(rank, 0);
      int64_t base = 0;  // data offset of the current position, without the axis term
      const int64_t total = out.numel();
      const int64_t axisStride = strides[static_cast<size_t>(axis)];
      for (int64_t i = 0; i < total; ++i) {
        dst[i] = src[base + indices[static_cast<size_t>(i)] * axisStride];
        for (size_t d = rank; d-- > 0;) {
          const int64_t step = static_cast<int64_t>(d) == axis ? 0 : strides[d];
          base += step;
          if (++index[d] < shape[d]) break;
          base -= step * shape[d];
          index[d] = 0;
        }
      }
      return Status::ok();
    });
  }

 private:
  std::string label_;
  int64_t axis_;
};

// GatherND: each index tuple (last dim of indices, m entries) selects a slice data[b..., i0, ..., im-1, ...]
// within its batch (the first batch_dims dims, shared by data and indices).
class GatherNDKernel final : public Kernel {
 public:
  explicit GatherNDKernel(const KernelInfo& info)
      : label_(info.node.opType), batchDims_(info.node.attrInt("batch_dims", 0)) {}

  Status compute(KernelContext& ctx) override {
    const Tensor* data = ctx.input(0);
    if (!data || !ctx.hasInput(1)) return nodeError(label_, "needs inputs 'data' and 'indices'");
    const Tensor& indicesTensor = *ctx.input(1);
    const int64_t r = static_cast<int64_t>(data->rank()), q = static_cast<int64_t>(indicesTensor.rank());
    const int64_t b = batchDims_;
    if (q < 1 || r < 1) return nodeError(label_, "data and indices must have rank >= 1");
    if (b < 0 || b >= std::min(q, r)) return nodeError(label_, "batch_dims must be smaller than both ranks");
    const int64_t m = indicesTensor.dim(static_cast<size_t>(q - 1));
    if (m < 1 || m > r - b) return nodeError(label_, "indices' last dimension must be in [1, rank - batch_dims]");
    int64_t batches = 1;
    for (int64_t d = 0; d < b; ++d) {
      if (data->dim(static_cast<size_t>(d)) != indicesTensor.dim(static_cast<size_t>(d))) {
        return nodeError(label_, "batch dimensions of data and indices differ");
      }
      batches *= data->dim(static_cast<size_t>(d));
    }
    Shape outShape(indicesTensor.shape().begin(), indicesTensor.shape().end() - 1);
    int64_t sliceSize = 1;
    for (int64_t d = b + m; d < r; ++d) {
      outShape.push_back(data->dim(static_cast<size_t>(d)));
      sliceSize *= data->dim(static_cast<size_t>(d));
    }
    KILN_ASSIGN_OR_RETURN(std::vector<int64_t> indices, readIndexInput(label_, indicesTensor, "input 'indices'"));
    const int64_t tuples = static_cast<int64_t>(indices.size()) / m;
    const int64_t perBatch = batches == 0 ? 0 : tuples / batches;
    const std::vector<int64_t> strides = stridesOf(data->shape());
    const int64_t batchStride = b == 0 ? 0 : strides[static_cast<size_t>(b - 1)];
    std::vector<int64_t> offsets(static_cast<size_t>(tuples));
    for (int64_t t = 0; t < tuples; ++t) {
      int64_t offset = (perBatch == 0 ? 0 : t / perBatch) * batchStride;
      for (int64_t k = 0; k < m; ++k) {
        const int64_t dim = data->dim(static_cast<size_t>(b + k));
        const int64_t raw = indices[static_cast<size_t>(t * m + k)];
        const int64_t wrapped = wrapIndex(raw, dim);
        if (wrapped < 0) return nodeError(label_, "index " + std::to_string(raw) + " is out of range");
        offset += wrapped * strides[static_cast<size_t>(b + k)];
      }
      offsets[static_cast<size_t>(t)] = offset;
    }
    Tensor& out = ctx.allocateOutput(0, data->dtype(), outShape);
    if (out.numel() == 0) return Status::ok();
    return dispatchStorage(data->dtype(), [&]<class S>() {
      const S* src = elementsOf<S>(*data);
      S* dst = mutableElementsOf<S>(out);
      for (int64_t t = 0; t < tuples; ++t) {
        const S* from = src + offsets[static_cast<size_t>(t)];
        std::copy(from, from + sliceSize, dst + t * sliceSize);
      }
      return Status::ok();
    });
  }

 private:
  std::string label_;
  int64_t batchDims_;
};

}  // namespace

void registerIndexingKernels(KernelRegistry& registry) {
  registry.add("Gather", 1, kAnyOpset, makeFactory<GatherKernel>());
  registry.add("GatherElements", 11, kAnyOpset, makeFactory<GatherElementsKernel>());
  registry.add("GatherND", 11, kAnyOpset, makeFactory<GatherNDKernel>());
  registerScatterKernels(registry);
  registerSliceKernels(registry);
  registerSelectionKernels(registry);
  registerFillPatternKernels(registry);
  registerUniqueKernels(registry);
}

}  // namespace kiln::cpu
