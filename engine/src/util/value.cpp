#include "kiln/value.h"

#include <utility>

namespace kiln {

const char* valueKindName(ValueKind kind) {
  switch (kind) {
    case ValueKind::TENSOR: return "tensor";
    case ValueKind::SEQUENCE: return "sequence";
    case ValueKind::OPTIONAL: return "optional";
    case ValueKind::MAP: return "map";
    case ValueKind::UNKNOWN: break;
  }
  return "unknown";
}

Value::Value(Tensor tensor) : kind_(tensor.defined() ? Kind::TENSOR : Kind::UNDEFINED), tensor_(std::move(tensor)) {}

Value::Value(Value&& other) noexcept
    : kind_(std::exchange(other.kind_, Kind::UNDEFINED)), tensor_(std::move(other.tensor_)),
      elementType_(std::exchange(other.elementType_, DataType::UNDEFINED)), tensors_(std::move(other.tensors_)),
      element_(std::move(other.element_)) {}

Value& Value::operator=(Value&& other) noexcept {
  if (this != &other) {
    kind_ = std::exchange(other.kind_, Kind::UNDEFINED);
    tensor_ = std::move(other.tensor_);
    elementType_ = std::exchange(other.elementType_, DataType::UNDEFINED);
    tensors_ = std::move(other.tensors_);
    element_ = std::move(other.element_);
  }
  return *this;
}

Value Value::sequence(DataType elementType, std::vector<Tensor> tensors) {
  Value value;
  value.kind_ = Kind::SEQUENCE;
  value.elementType_ = elementType;
  value.tensors_ = std::make_shared<const std::vector<Tensor>>(std::move(tensors));
  return value;
}

Value Value::none() {
  Value value;
  value.kind_ = Kind::OPTIONAL;
  return value;
}

Value Value::optional(Value element) {
  Value value = none();
  if (element.isOptional()) return element;  // ONNX has no optional of optional
  if (element.defined()) {
    value.elementType_ = element.elementType();
    value.element_ = std::make_shared<const Value>(std::move(element));
  }
  return value;
}

ValueKind Value::kind() const {
  switch (kind_) {
    case Kind::TENSOR: return ValueKind::TENSOR;
    case Kind::SEQUENCE: return ValueKind::SEQUENCE;
    case Kind::OPTIONAL: return ValueKind::OPTIONAL;
    case Kind::UNDEFINED: break;
  }
  return ValueKind::UNKNOWN;
}

const std::vector<Tensor>& Value::tensors() const {
  static const std::vector<Tensor> empty;
  return tensors_ ? *tensors_ : empty;
}

const Value& Value::element() const {
  static const Value undefined;
  return element_ ? *element_ : undefined;
}

std::string Value::describe() const {
  switch (kind_) {
    case Kind::TENSOR: return std::string("tensor ") + dataTypeName(tensor_.dtype()) + " " + shapeToString(tensor_.shape());
    case Kind::SEQUENCE:
      return std::string("sequence<") + dataTypeName(elementType_) + "> of " + std::to_string(tensors().size());
    case Kind::OPTIONAL: return "optional(" + (element_ ? element_->describe() : std::string("none")) + ")";
    case Kind::UNDEFINED: break;
  }
  return "undefined";
}

}  // namespace kiln
