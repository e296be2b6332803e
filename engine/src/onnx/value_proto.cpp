// kiln/tensor_io.h: sequence and optional values from onnx.SequenceProto / onnx.OptionalProto files (the ONNX
// test data of sequence and optional cases). Only tensor elements are supported: Kiln values hold no maps, sparse
// tensors or nested sequences.
#include <onnx/onnx-data_pb.h>

#include "kiln/tensor_io.h"
#include "onnx/tensor_proto.h"
#include "util/file_io.h"

namespace kiln {
namespace {

Result<Value> sequenceFromProto(const onnx::SequenceProto& proto) {
  if (proto.sparse_tensor_values_size() || proto.sequence_values_size() || proto.map_values_size() ||
      proto.optional_values_size()) {
    return Status(StatusCode::NOT_IMPLEMENTED, "sequence '" + proto.name() + "' holds non-tensor elements");
  }
  std::vector<Tensor> tensors;
  for (const auto& element : proto.tensor_values()) {
    KILN_ASSIGN_OR_RETURN(Tensor tensor, onnx_io::tensorFromProto(element));
    tensors.push_back(std::move(tensor));
  }
  // An empty sequence does not record its element type.
  const DataType type = tensors.empty() ? DataType::UNDEFINED : tensors[0].dtype();
  return Value::sequence(type, std::move(tensors));
}

Result<Value> optionalFromProto(const onnx::OptionalProto& proto) {
  if (proto.has_tensor_value()) {
    KILN_ASSIGN_OR_RETURN(Tensor tensor, onnx_io::tensorFromProto(proto.tensor_value()));
    return Value::optional(std::move(tensor));
  }
  if (proto.has_sequence_value()) {
    KILN_ASSIGN_OR_RETURN(Value sequence, sequenceFromProto(proto.sequence_value()));
    return Value::optional(std::move(sequence));
  }
  if (proto.has_sparse_tensor_value() || proto.has_map_value() || proto.has_optional_value()) {
    return Status(StatusCode::NOT_IMPLEMENTED, "optional '" + proto.name() + "' holds a non-tensor, non-sequence value");
  }
  return Value::none();
}

template <class Proto>
Result<Proto> parseFile(const std::string& path, const char* what) {
  KILN_ASSIGN_OR_RETURN(const std::vector<std::byte> bytes, readFileBytes(path));
  Proto proto;
  if (!proto.ParseFromArray(bytes.data(), static_cast<int>(bytes.size()))) {
    return Status(StatusCode::INVALID_PROTOBUF, "'" + path + "' is not a serialized " + what);
  }
  return proto;
}

}  // namespace

Result<Value> readValueProtoFile(const std::string& path, ValueKind kind, std::string* name) {
  Result<Value> value = Status(StatusCode::INVALID_ARGUMENT, std::string("cannot read a ") + valueKindName(kind) +
                                                                 " value from '" + path + "'");
  if (kind == ValueKind::TENSOR) {
    KILN_ASSIGN_OR_RETURN(Tensor tensor, readTensorProtoFile(path, name));
    return Value(std::move(tensor));
  }
  if (kind == ValueKind::SEQUENCE) {
    KILN_ASSIGN_OR_RETURN(auto proto, parseFile<onnx::SequenceProto>(path, "SequenceProto"));
    if (name) *name = proto.name();
    value = sequenceFromProto(proto);
  } else if (kind == ValueKind::OPTIONAL) {
    KILN_ASSIGN_OR_RETURN(auto proto, parseFile<onnx::OptionalProto>(path, "OptionalProto"));
    if (name) *name = proto.name();
    value = optionalFromProto(proto);
  }
  if (!value.isOk()) return value.status().withContext("reading '" + path + "'");
  return value;
}

}  // namespace kiln
