#include "ep/cpu/kernel.h"

#include <cstring>

namespace kiln::cpu {

std::optional<Shape> KernelInfo::staticInputShape(size_t i) const {
  const ir::ValueInfo* info = i < inputInfos.size() ? inputInfos[i] : nullptr;
  if (!info || info->kind != ValueKind::TENSOR || !info->shape) return std::nullopt;
  Shape shape;
  for (const Dimension& d : *info->shape) {
    if (!d.isFixed()) return std::nullopt;
    shape.push_back(d.value);
  }
  return shape;
}

DataType KernelInfo::inputType(size_t i) const {
  const ir::ValueInfo* info = i < inputInfos.size() ? inputInfos[i] : nullptr;
  return info && info->kind == ValueKind::TENSOR ? info->dtype : DataType::UNDEFINED;
}

Tensor& KernelContext::allocateOutput(size_t i, DataType type, Shape shape) {
  if (!pool_) {
    outputs_[i] = Tensor(type, std::move(shape));  // zero-filled
    return outputs_[i];
  }
  Tensor& out = allocateUninitializedOutput(i, type, std::move(shape));
  if (out.rawData()) std::memset(out.rawData(), 0, out.byteSize());
  return out;
}

Tensor& KernelContext::allocateUninitializedOutput(size_t i, DataType type, Shape shape) {
  outputs_[i] = pool_ ? pool_->allocate(type, shape) : Tensor(type, std::move(shape));
  return outputs_[i];
}

Value KernelContext::inputValue(size_t i) const {
  if (i < valueInputs_.size() && valueInputs_[i]) return *valueInputs_[i];
  const Tensor* tensor = input(i);
  return tensor ? Value(*tensor) : Value();
}

Status KernelContext::setOutputValue(size_t i, Value value) {
  if (value.isTensor()) {
    setOutput(i, value.tensor());
    return Status::ok();
  }
  if (!valueOutputs_ || i >= valueOutputs_->size()) {
    return Status(StatusCode::FAIL, std::string("a ") + valueKindName(value.kind()) +
                                        " output cannot be stored here (only tensors outside a graph executor)");
  }
  (*valueOutputs_)[i] = std::move(value);
  return Status::ok();
}

}  // namespace kiln::cpu
