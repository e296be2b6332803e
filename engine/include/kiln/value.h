// Value: what a graph value holds at run time — a tensor, a sequence of tensors, or an optional (empty, or holding
// a tensor or a sequence). Tensors stay the unit of data; a Value only groups them. Copies share storage.
#pragma once

#include "kiln/export.h"

#include <memory>
#include <string>
#include <vector>

#include "kiln/tensor.h"

namespace kiln {

// The kind of a value, as a model declares it (ONNX TypeProto's value case). MAP and UNKNOWN are declared kinds
// only: no runtime Value holds them.
enum class ValueKind { TENSOR, SEQUENCE, OPTIONAL, MAP, UNKNOWN };

// "tensor", "sequence", "optional", "map", "unknown".
KILN_EXPORT const char* valueKindName(ValueKind kind);

class KILN_EXPORT Value {
 public:
  // An undefined value (defined() is false): an omitted input or a value not computed yet.
  Value() = default;
  // A tensor value (undefined when `tensor` is undefined). Implicit: a Tensor is a Value wherever one is expected.
  Value(Tensor tensor);  // NOLINT(implicit)
  // A sequence of tensors of `elementType` (which may be UNDEFINED for an empty sequence of unknown type).
  static Value sequence(DataType elementType, std::vector<Tensor> tensors);
  // An empty optional (ONNX "None").
  static Value none();
  // An optional holding `element`, a tensor or a sequence value (an undefined element gives none(); an optional
  // is returned as it is, since ONNX has no optional of an optional).
  static Value optional(Value element);

  Value(const Value&) = default;
  Value& operator=(const Value&) = default;
  // A moved-from Value is undefined.
  Value(Value&& other) noexcept;
  Value& operator=(Value&& other) noexcept;

  // True unless default-constructed or built from an undefined tensor (an empty optional is defined).
  bool defined() const { return kind_ != Kind::UNDEFINED; }
  // TENSOR, SEQUENCE or OPTIONAL for a defined value (UNKNOWN when undefined).
  ValueKind kind() const;
  // True for a tensor value.
  bool isTensor() const { return kind_ == Kind::TENSOR; }
  // True for a sequence value.
  bool isSequence() const { return kind_ == Kind::SEQUENCE; }
  // True for an optional value (empty or not).
  bool isOptional() const { return kind_ == Kind::OPTIONAL; }

  // The tensor of a tensor value; an undefined tensor for any other value.
  const Tensor& tensor() const { return tensor_; }
  // The tensors of a sequence value; empty for any other value.
  const std::vector<Tensor>& tensors() const;
  // The element type of a sequence (or of the tensor, for a tensor value).
  DataType elementType() const { return isTensor() ? tensor_.dtype() : elementType_; }
  // Whether an optional holds an element (false for an empty optional and for non-optional values).
  bool hasElement() const { return element_ != nullptr; }
  // The element of a non-empty optional (a tensor or sequence value); an undefined value otherwise.
  const Value& element() const;

  // "tensor float 2x3", "sequence<float> of 4", "optional(none)", "optional(sequence<int64> of 2)".
  std::string describe() const;

 private:
  enum class Kind { UNDEFINED, TENSOR, SEQUENCE, OPTIONAL };
  Kind kind_ = Kind::UNDEFINED;
  Tensor tensor_;
  DataType elementType_ = DataType::UNDEFINED;
  std::shared_ptr<const std::vector<Tensor>> tensors_;
  std::shared_ptr<const Value> element_;
};

}  // namespace kiln
