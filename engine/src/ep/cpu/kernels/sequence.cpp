// Sequence ops (opset 11+): SequenceConstruct, SequenceEmpty, SequenceAt, SequenceInsert, SequenceErase,
// SequenceLength, SplitToSequence, ConcatFromSequence. Sequences are immutable kiln::Value objects: an op that
// "modifies" one builds a new tensor list sharing the element tensors. Positions may be negative (counted from the
// end); SequenceInsert accepts [-n, n] (n appends), At/Erase accept [-n, n-1]. Element types are any tensor type;
// the copies below move bytes (or strings) without looking at values.
#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "ep/cpu/kernel_registry.h"
#include "ep/cpu/kernel_utils.h"
#include "ep/cpu/kernels/data_movement.h"

namespace kiln::cpu {
namespace {

// The sequence in input i, or INVALID_ARGUMENT naming what the input holds instead.
Result<Value> sequenceInput(const KernelContext& ctx, size_t i, const std::string& label) {
  Value value = ctx.inputValue(i);
  if (!value.isSequence()) {
    return nodeError(label, "input " + std::to_string(i) + " must be a sequence, got " +
                                (value.defined() ? value.describe() : std::string("nothing")));
  }
  return value;
}

// Reads an optional scalar position input (int32/int64) and maps it into [0, count] (insert) or [0, count-1].
Result<int64_t> readPosition(const Tensor& tensor, int64_t count, bool allowEnd, const std::string& label) {
  if (tensor.numel() != 1) return nodeError(label, "position must be a scalar, got shape " + shapeToString(tensor.shape()));
  KILN_ASSIGN_OR_RETURN(auto values, readInt64Values(tensor));
  const int64_t limit = allowEnd ? count : count - 1;
  const int64_t position = values[0] < 0 ? values[0] + count : values[0];
  if (position < 0 || position > limit) {
    return nodeError(label, "position " + std::to_string(values[0]) + " is out of range for a sequence of " +
                                std::to_string(count) + " tensors");
  }
  return position;
}

class SequenceConstructKernel final : public Kernel {
 public:
  explicit SequenceConstructKernel(const KernelInfo& info) : label_(info.node.opType) {}
  Status compute(KernelContext& ctx) override {
    std::vector<Tensor> tensors;
    for (size_t i = 0; i < ctx.inputCount(); ++i) {
      if (!ctx.hasInput(i)) return nodeError(label_, "input " + std::to_string(i) + " must be a tensor");
      if (!tensors.empty() && ctx.input(i)->dtype() != tensors[0].dtype()) {
        return nodeError(label_, std::string("all inputs must have one type; input ") + std::to_string(i) + " is " +
                                     dataTypeName(ctx.input(i)->dtype()) + ", input 0 is " +
                                     dataTypeName(tensors[0].dtype()));
      }
      tensors.push_back(*ctx.input(i));
    }
    if (tensors.empty()) return nodeError(label_, "needs at least one input");
    const DataType type = tensors[0].dtype();
    return ctx.setOutputValue(0, Value::sequence(type, std::move(tensors)));
  }

 private:
  std::string label_;
};

class SequenceEmptyKernel final : public Kernel {
 public:
  explicit SequenceEmptyKernel(const KernelInfo& info)
      : type_(static_cast<DataType>(info.node.attrInt("dtype", static_cast<int64_t>(DataType::FLOAT)))) {}
  Status compute(KernelContext& ctx) override { return ctx.setOutputValue(0, Value::sequence(type_, {})); }

 private:
  DataType type_;
};

class SequenceAtKernel final : public Kernel {
 public:
  explicit SequenceAtKernel(const KernelInfo& info) : label_(info.node.opType) {}
  Status compute(KernelContext& ctx) override {
    KILN_ASSIGN_OR_RETURN(Value sequence, sequenceInput(ctx, 0, label_));
    if (!ctx.hasInput(1)) return nodeError(label_, "missing position input");
    const auto count = static_cast<int64_t>(sequence.tensors().size());
    KILN_ASSIGN_OR_RETURN(int64_t position, readPosition(*ctx.input(1), count, false, label_));
    ctx.setOutput(0, sequence.tensors()[static_cast<size_t>(position)]);
    return Status::ok();
  }

 private:
  std::string label_;
};

class SequenceInsertKernel final : public Kernel {
 public:
  explicit SequenceInsertKernel(const KernelInfo& info) : label_(info.node.opType) {}
  Status compute(KernelContext& ctx) override {
    KILN_ASSIGN_OR_RETURN(Value sequence, sequenceInput(ctx, 0, label_));
    if (!ctx.hasInput(1)) return nodeError(label_, "input 1 must be a tensor");
    const Tensor& tensor = *ctx.input(1);
    DataType type = sequence.elementType();
    if (type == DataType::UNDEFINED) type = tensor.dtype();  // an empty sequence of unknown type (test data)
    if (tensor.dtype() != type) {
      return nodeError(label_, std::string("cannot insert a ") + dataTypeName(tensor.dtype()) +
                                   " tensor into a sequence of " + dataTypeName(type));
    }
    std::vector<Tensor> tensors = sequence.tensors();
    int64_t position = static_cast<int64_t>(tensors.size());
    if (ctx.hasInput(2)) {
      KILN_ASSIGN_OR_RETURN(position, readPosition(*ctx.input(2), static_cast<int64_t>(tensors.size()), true, label_));
    }
    tensors.insert(tensors.begin() + position, tensor);
    return ctx.setOutputValue(0, Value::sequence(type, std::move(tensors)));
  }

 private:
  std::string label_;
};

class SequenceEraseKernel final : public Kernel {
 public:
  explicit SequenceEraseKernel(const KernelInfo& info) : label_(info.node.opType) {}
  Status compute(KernelContext& ctx) override {
    KILN_ASSIGN_OR_RETURN(Value sequence, sequenceInput(ctx, 0, label_));
    std::vector<Tensor> tensors = sequence.tensors();
    if (tensors.empty()) return nodeError(label_, "cannot erase from an empty sequence");
    int64_t position = static_cast<int64_t>(tensors.size()) - 1;
    if (ctx.hasInput(1)) {
      KILN_ASSIGN_OR_RETURN(position, readPosition(*ctx.input(1), static_cast<int64_t>(tensors.size()), false, label_));
    }
    tensors.erase(tensors.begin() + position);
    return ctx.setOutputValue(0, Value::sequence(sequence.elementType(), std::move(tensors)));
  }

 private:
  std::string label_;
};

class SequenceLengthKernel final : public Kernel {
 public:
  explicit SequenceLengthKernel(const KernelInfo& info) : label_(info.node.opType) {}
  Status compute(KernelContext& ctx) override {
    KILN_ASSIGN_OR_RETURN(Value sequence, sequenceInput(ctx, 0, label_));
    ctx.setOutput(0, Tensor::fromVector<int64_t>({}, {static_cast<int64_t>(sequence.tensors().size())}));
    return Status::ok();
  }

 private:
  std::string label_;
};

// SplitToSequence: without `split`, one chunk per index along axis (squeezed unless keepdims=1); a scalar split
// gives chunks of that size (the last may be shorter); a 1-D split lists the sizes, which must sum to the axis.
class SplitToSequenceKernel final : public Kernel {
 public:
  explicit SplitToSequenceKernel(const KernelInfo& info)
      : label_(info.node.opType), axis_(info.node.attrInt("axis", 0)), keepdims_(info.node.attrInt("keepdims", 1) != 0) {}
  Status compute(KernelContext& ctx) override {
    if (!ctx.hasInput(0)) return nodeError(label_, "missing input");
    const Tensor& input = *ctx.input(0);
    const auto rank = static_cast<int64_t>(input.rank());
    if (rank == 0) return nodeError(label_, "input must have rank >= 1");
    KILN_ASSIGN_OR_RETURN(const int64_t axis, normalizeAxis(axis_, rank));
    const int64_t length = input.dim(static_cast<size_t>(axis));
    std::vector<int64_t> sizes;
    bool squeeze = false;
    if (!ctx.hasInput(1)) {
      sizes.assign(static_cast<size_t>(length), 1);
      squeeze = !keepdims_;
    } else {
      const Tensor& split = *ctx.input(1);
      KILN_ASSIGN_OR_RETURN(std::vector<int64_t> values, readInt64Values(split));
      if (split.rank() == 0) {
        if (values[0] <= 0) return nodeError(label_, "split must be positive, got " + std::to_string(values[0]));
        for (int64_t start = 0; start < length; start += values[0]) sizes.push_back(std::min(values[0], length - start));
      } else if (split.rank() == 1) {
        int64_t total = 0;
        for (int64_t v : values) {
          if (v < 0) return nodeError(label_, "split sizes must be non-negative, got " + std::to_string(v));
          total += v;
        }
        if (total != length) {
          return nodeError(label_, "split sizes sum to " + std::to_string(total) + ", the axis has " +
                                       std::to_string(length));
        }
        sizes = std::move(values);
      } else {
        return nodeError(label_, "split must be a scalar or 1-D, got shape " + shapeToString(split.shape()));
      }
    }
    int64_t outer = 1, inner = 1;
    for (int64_t d = 0; d < axis; ++d) outer *= input.dim(static_cast<size_t>(d));
    for (int64_t d = axis + 1; d < rank; ++d) inner *= input.dim(static_cast<size_t>(d));
    std::vector<Tensor> tensors;
    int64_t start = 0;
    for (int64_t size : sizes) {
      Shape shape = input.shape();
      shape[static_cast<size_t>(axis)] = size;
      Tensor chunk(input.dtype(), shape);
      for (int64_t o = 0; o < outer; ++o) {
        copyElements(input, (o * length + start) * inner, chunk, o * size * inner, size * inner);
      }
      if (squeeze) shape.erase(shape.begin() + axis);
      tensors.push_back(squeeze ? chunk.reshaped(shape) : chunk);
      start += size;
    }
    return ctx.setOutputValue(0, Value::sequence(input.dtype(), std::move(tensors)));
  }

 private:
  std::string label_;
  int64_t axis_;
  bool keepdims_;
};

// ConcatFromSequence: concatenates along `axis`, or with new_axis=1 stacks along a new axis (axis in [-r-1, r]).
class ConcatFromSequenceKernel final : public Kernel {
 public:
  explicit ConcatFromSequenceKernel(const KernelInfo& info)
      : label_(info.node.opType), axis_(info.node.attrInt("axis", 0)), newAxis_(info.node.attrInt("new_axis", 0) != 0),
        hasAxis_(info.node.hasAttribute("axis")) {}
  Status compute(KernelContext& ctx) override {
    if (!hasAxis_) return nodeError(label_, "the 'axis' attribute is required");
    KILN_ASSIGN_OR_RETURN(Value sequence, sequenceInput(ctx, 0, label_));
    const std::vector<Tensor>& tensors = sequence.tensors();
    if (tensors.empty()) return nodeError(label_, "cannot concatenate an empty sequence");
    const Tensor& first = tensors[0];
    const auto rank = static_cast<int64_t>(first.rank());
    KILN_ASSIGN_OR_RETURN(const int64_t axis, normalizeAxis(axis_, newAxis_ ? rank + 1 : rank));
    // With new_axis each tensor is viewed with a 1 inserted at `axis`; then it is a plain concatenation.
    int64_t outer = 1, inner = 1, total = 0;
    std::vector<int64_t> lengths;
    for (const Tensor& t : tensors) {
      Shape shape = t.shape();
      if (newAxis_) shape.insert(shape.begin() + axis, 1);
      Shape expected = first.shape();
      if (newAxis_) expected.insert(expected.begin() + axis, 1);
      bool matches = t.dtype() == first.dtype() && shape.size() == expected.size();
      for (size_t d = 0; matches && d < shape.size(); ++d) matches = d == static_cast<size_t>(axis) || shape[d] == expected[d];
      if (!matches) {
        return nodeError(label_, "tensors " + shapeToString(first.shape()) + " and " + shapeToString(t.shape()) +
                                     " (" + dataTypeName(t.dtype()) + ") cannot be concatenated along axis " +
                                     std::to_string(axis));
      }
      lengths.push_back(shape[static_cast<size_t>(axis)]);
      total += lengths.back();
    }
    Shape outShape = first.shape();
    if (newAxis_) outShape.insert(outShape.begin() + axis, 1);
    for (int64_t d = 0; d < axis; ++d) outer *= outShape[static_cast<size_t>(d)];
    for (size_t d = static_cast<size_t>(axis) + 1; d < outShape.size(); ++d) inner *= outShape[d];
    outShape[static_cast<size_t>(axis)] = total;
    Tensor& out = ctx.allocateOutput(0, first.dtype(), outShape);
    int64_t offset = 0;
    for (size_t t = 0; t < tensors.size(); ++t) {
      const int64_t block = lengths[t] * inner;
      for (int64_t o = 0; o < outer; ++o) copyElements(tensors[t], o * block, out, o * total * inner + offset, block);
      offset += block;
    }
    return Status::ok();
  }

 private:
  std::string label_;
  int64_t axis_;
  bool newAxis_, hasAxis_;
};

}  // namespace

void registerSequenceKernels(KernelRegistry& registry) {
  registry.add("SequenceConstruct", 11, kAnyOpset, makeFactory<SequenceConstructKernel>());
  registry.add("SequenceEmpty", 11, kAnyOpset, makeFactory<SequenceEmptyKernel>());
  registry.add("SequenceAt", 11, kAnyOpset, makeFactory<SequenceAtKernel>());
  registry.add("SequenceInsert", 11, kAnyOpset, makeFactory<SequenceInsertKernel>());
  registry.add("SequenceErase", 11, kAnyOpset, makeFactory<SequenceEraseKernel>());
  registry.add("SequenceLength", 11, kAnyOpset, makeFactory<SequenceLengthKernel>());
  registry.add("SplitToSequence", 11, kAnyOpset, makeFactory<SplitToSequenceKernel>());
  registry.add("ConcatFromSequence", 11, kAnyOpset, makeFactory<ConcatFromSequenceKernel>());
}

}  // namespace kiln::cpu
