// Shape kernels that only reinterpret or describe a tensor: Identity, Reshape, Flatten, Squeeze, Unsqueeze
// (views sharing the input's storage, no copies), Shape and Size. The copying shape kernels live in
// transpose.cpp, concat_split.cpp and expand_tile.cpp.
#include <algorithm>
#include <string>
#include <vector>

#include "ep/cpu/kernel_registry.h"
#include "ep/cpu/kernels/data_movement.h"

namespace kiln::cpu {

// The copying shape kernels, registered through registerShapeKernels.
void registerTransposeKernels(KernelRegistry& registry);    // transpose.cpp
void registerConcatSplitKernels(KernelRegistry& registry);  // concat_split.cpp
void registerExpandTileKernels(KernelRegistry& registry);   // expand_tile.cpp

namespace {

class IdentityKernel final : public Kernel {
 public:
  explicit IdentityKernel(const KernelInfo& info) : label_(info.node.opType) {}
  Status compute(KernelContext& ctx) override {
    // Sequences (opset 14+) and optionals (opset 16+) pass through like tensors.
    Value input = ctx.inputValue(0);
    if (!input.defined()) return nodeError(label_, "missing input");
    return ctx.setOutputValue(0, std::move(input));
  }

 private:
  std::string label_;
};

// Reshape: the target comes from the `shape` attribute (opset 1-4) or input 1 (opset 5+). 0 copies the input
// dimension unless allowzero (opset 14+) is set; one -1 is inferred.
class ReshapeKernel final : public Kernel {
 public:
  explicit ReshapeKernel(const KernelInfo& info)
      : label_(info.node.opType),
        useAttribute_(info.opset < 5),
        attrShape_(info.node.attrInts("shape")),
        allowZero_(info.node.attrInt("allowzero", 0) != 0) {}

  Status compute(KernelContext& ctx) override {
    const Tensor* data = ctx.input(0);
    if (!data) return nodeError(label_, "missing input 'data'");
    std::vector<int64_t> target = attrShape_;
    if (!useAttribute_) {
      if (!ctx.hasInput(1)) return nodeError(label_, "missing input 'shape'");
      KILN_ASSIGN_OR_RETURN(target, readIndexInput(label_, *ctx.input(1), "input 'shape'"));
    }
    const Shape& inShape = data->shape();
    int64_t inferred = -1;
    int64_t known = 1;
    for (size_t i = 0; i < target.size(); ++i) {
      if (target[i] == 0 && !allowZero_) {
        if (i >= inShape.size()) {
          return nodeError(label_, "shape entry " + std::to_string(i) + " is 0 but the input has rank " +
                                       std::to_string(inShape.size()));
        }
        target[i] = inShape[i];
      }
      if (target[i] == -1) {
        if (inferred >= 0) return nodeError(label_, "shape has more than one -1");
        inferred = static_cast<int64_t>(i);
      } else if (target[i] < 0) {
        return nodeError(label_, "invalid shape entry " + std::to_string(target[i]));
      } else {
        known *= target[i];
      }
    }
    if (inferred >= 0) {
      if (known == 0) {
        if (data->numel() != 0) return nodeError(label_, "cannot infer -1 with a zero-sized target");
        target[static_cast<size_t>(inferred)] = 0;
      } else {
        if (data->numel() % known != 0) {
          return nodeError(label_, "cannot reshape " + shapeToString(inShape) + " to " + shapeToString(target));
        }
        target[static_cast<size_t>(inferred)] = data->numel() / known;
      }
    }
    if (shapeSize(target) != data->numel()) {
      return nodeError(label_, "cannot reshape " + shapeToString(inShape) + " to " + shapeToString(target));
    }
    ctx.setOutput(0, data->reshaped(std::move(target)));
    return Status::ok();
  }

 private:
  std::string label_;
  bool useAttribute_;
  std::vector<int64_t> attrShape_;
  bool allowZero_;
};

// Shape: the input's dimensions as int64, sliced by start/end (opset 15+; clamped like Python slices).
class ShapeKernel final : public Kernel {
 public:
  explicit ShapeKernel(const KernelInfo& info)
      : label_(info.node.opType), start_(info.node.attrInt("start", 0)),
        end_(info.node.hasAttribute("end") ? info.node.attrInt("end", 0) : INT64_MAX) {}

  Status compute(KernelContext& ctx) override {
    const Tensor* data = ctx.input(0);
    if (!data) return nodeError(label_, "missing input 'data'");
    const int64_t rank = static_cast<int64_t>(data->rank());
    auto clamp = [rank](int64_t v) { return std::clamp<int64_t>(v < 0 ? v + rank : v, 0, rank); };
    const int64_t begin = clamp(start_);
    const int64_t end = std::max(begin, clamp(end_));
    Tensor& out = ctx.allocateOutput(0, DataType::INT64, {end - begin});
    std::copy(data->shape().begin() + begin, data->shape().begin() + end, out.data<int64_t>());
    return Status::ok();
  }

 private:
  std::string label_;
  int64_t start_;
  int64_t end_;
};

class SizeKernel final : public Kernel {
 public:
  explicit SizeKernel(const KernelInfo& info) : label_(info.node.opType) {}
  Status compute(KernelContext& ctx) override {
    if (!ctx.hasInput(0)) return nodeError(label_, "missing input 'data'");
    ctx.allocateOutput(0, DataType::INT64, {}).data<int64_t>()[0] = ctx.input(0)->numel();
    return Status::ok();
  }

 private:
  std::string label_;
};

// Flatten: 2-D view [prod(d[0:axis]), prod(d[axis:])]; axis in [-r, r] (negative from opset 11).
class FlattenKernel final : public Kernel {
 public:
  explicit FlattenKernel(const KernelInfo& info) : label_(info.node.opType), axis_(info.node.attrInt("axis", 1)) {}
  Status compute(KernelContext& ctx) override {
    const Tensor* data = ctx.input(0);
    if (!data) return nodeError(label_, "missing input");
    const int64_t rank = static_cast<int64_t>(data->rank());
    const int64_t axis = axis_ < 0 ? axis_ + rank : axis_;
    if (axis < 0 || axis > rank) {
      return nodeError(label_, "axis " + std::to_string(axis_) + " is out of range for rank " + std::to_string(rank));
    }
    int64_t outer = 1;
    for (int64_t i = 0; i < axis; ++i) outer *= data->dim(static_cast<size_t>(i));
    int64_t inner = 1;
    for (int64_t i = axis; i < rank; ++i) inner *= data->dim(static_cast<size_t>(i));
    ctx.setOutput(0, data->reshaped({outer, inner}));
    return Status::ok();
  }

 private:
  std::string label_;
  int64_t axis_;
};

// Squeeze/Unsqueeze axes: the `axes` attribute before opset 13, optional input 1 from opset 13. Absent and
// empty axes are treated alike (as ONNX Runtime does): Squeeze then drops every size-1 dim.
Result<std::vector<int64_t>> readAxes(const KernelContext& ctx, bool fromInput, const std::vector<int64_t>& attr,
                                      const std::string& label) {
  if (!fromInput) return attr;
  if (!ctx.hasInput(1)) return std::vector<int64_t>{};
  return readIndexInput(label, *ctx.input(1), "input 'axes'");
}

class SqueezeKernel final : public Kernel {
 public:
  explicit SqueezeKernel(const KernelInfo& info)
      : label_(info.node.opType), axesFromInput_(info.opset >= 13), attrAxes_(info.node.attrInts("axes")) {}

  Status compute(KernelContext& ctx) override {
    const Tensor* data = ctx.input(0);
    if (!data) return nodeError(label_, "missing input 'data'");
    KILN_ASSIGN_OR_RETURN(std::vector<int64_t> axes, readAxes(ctx, axesFromInput_, attrAxes_, label_));
    const int64_t rank = static_cast<int64_t>(data->rank());
    std::vector<bool> drop(static_cast<size_t>(rank), false);
    if (axes.empty()) {
      for (int64_t i = 0; i < rank; ++i) drop[static_cast<size_t>(i)] = data->dim(static_cast<size_t>(i)) == 1;
    }
    for (int64_t axis : axes) {
      const int64_t a = axis < 0 ? axis + rank : axis;
      if (a < 0 || a >= rank) return nodeError(label_, "axis " + std::to_string(axis) + " is out of range");
      if (data->dim(static_cast<size_t>(a)) != 1) {
        return nodeError(label_, "cannot squeeze axis " + std::to_string(axis) + " of size " +
                                     std::to_string(data->dim(static_cast<size_t>(a))));
      }
      drop[static_cast<size_t>(a)] = true;
    }
    Shape shape;
    for (int64_t i = 0; i < rank; ++i) {
      if (!drop[static_cast<size_t>(i)]) shape.push_back(data->dim(static_cast<size_t>(i)));
    }
    ctx.setOutput(0, data->reshaped(std::move(shape)));
    return Status::ok();
  }

 private:
  std::string label_;
  bool axesFromInput_;
  std::vector<int64_t> attrAxes_;
};

class UnsqueezeKernel final : public Kernel {
 public:
  explicit UnsqueezeKernel(const KernelInfo& info)
      : label_(info.node.opType), axesFromInput_(info.opset >= 13), attrAxes_(info.node.attrInts("axes")) {}

  Status compute(KernelContext& ctx) override {
    const Tensor* data = ctx.input(0);
    if (!data) return nodeError(label_, "missing input 'data'");
    KILN_ASSIGN_OR_RETURN(std::vector<int64_t> axes, readAxes(ctx, axesFromInput_, attrAxes_, label_));
    const int64_t outRank = static_cast<int64_t>(data->rank() + axes.size());
    std::vector<bool> inserted(static_cast<size_t>(outRank), false);
    for (int64_t axis : axes) {
      const int64_t a = axis < 0 ? axis + outRank : axis;
      if (a < 0 || a >= outRank) return nodeError(label_, "axis " + std::to_string(axis) + " is out of range");
      if (inserted[static_cast<size_t>(a)]) return nodeError(label_, "axis " + std::to_string(axis) + " repeats");
      inserted[static_cast<size_t>(a)] = true;
    }
    Shape shape;
    size_t next = 0;
    for (int64_t i = 0; i < outRank; ++i) shape.push_back(inserted[static_cast<size_t>(i)] ? 1 : data->dim(next++));
    ctx.setOutput(0, data->reshaped(std::move(shape)));
    return Status::ok();
  }

 private:
  std::string label_;
  bool axesFromInput_;
  std::vector<int64_t> attrAxes_;
};

}  // namespace

void registerShapeKernels(KernelRegistry& registry) {
  registry.add("Identity", 1, kAnyOpset, makeFactory<IdentityKernel>());
  registry.add("Reshape", 1, kAnyOpset, makeFactory<ReshapeKernel>());
  registry.add("Shape", 1, kAnyOpset, makeFactory<ShapeKernel>());
  registry.add("Size", 1, kAnyOpset, makeFactory<SizeKernel>());
  registry.add("Flatten", 1, kAnyOpset, makeFactory<FlattenKernel>());
  registry.add("Squeeze", 1, kAnyOpset, makeFactory<SqueezeKernel>());
  registry.add("Unsqueeze", 1, kAnyOpset, makeFactory<UnsqueezeKernel>());
  registerTransposeKernels(registry);
  registerConcatSplitKernels(registry);
  registerExpandTileKernels(registry);
}

}  // namespace kiln::cpu
