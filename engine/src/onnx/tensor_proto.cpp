#include "onnx/tensor_proto.h"

#include <cstring>

namespace kiln::onnx_io {

DataType dataTypeFromOnnx(int32_t elemType) {
  if (elemType < 0 || elemType > 16) return DataType::UNDEFINED;
  return static_cast<DataType>(elemType);
}

namespace {

template <class Dst, class Src>
void copyTyped(const Src& field, Tensor tensor) {  // by value: shares storage
  Dst* out = tensor.data<Dst>();
  const int64_t n = std::min<int64_t>(tensor.numel(), field.size());
  for (int64_t i = 0; i < n; ++i) out[i] = static_cast<Dst>(field.Get(static_cast<int>(i)));
}

// 16-bit and 8-bit types are stored in int32_data, one value per element (bit pattern for float16/bfloat16).
template <class Dst>
void copyBits(const google::protobuf::RepeatedField<int32_t>& field, Tensor& tensor) {
  Dst* out = tensor.data<Dst>();
  const int64_t n = std::min<int64_t>(tensor.numel(), field.size());
  for (int64_t i = 0; i < n; ++i) {
    const auto bits = static_cast<uint16_t>(field.Get(static_cast<int>(i)));
    if constexpr (std::is_same_v<Dst, Float16> || std::is_same_v<Dst, BFloat16>) {
      out[i].bits = bits;
    } else {
      out[i] = static_cast<Dst>(field.Get(static_cast<int>(i)));
    }
  }
}

int64_t typedFieldSize(const onnx::TensorProto& p, DataType type) {
  switch (type) {
    case DataType::FLOAT: return p.float_data_size();
    case DataType::DOUBLE: return p.double_data_size();
    case DataType::INT64: return p.int64_data_size();
    case DataType::UINT32: case DataType::UINT64: return p.uint64_data_size();
    case DataType::STRING: return p.string_data_size();
    case DataType::COMPLEX64: return p.float_data_size() / 2;
    case DataType::COMPLEX128: return p.double_data_size() / 2;
    default: return p.int32_data_size();
  }
}

// int4/uint4 (IR 10): two values a byte, the first in the low nibble, in raw_data or one byte per int32_data entry.
// Kiln has no 4-bit element type, so the values are held widened to int8/uint8 (sign-extended for int4): every op
// that reads them (DequantizeLinear above all, the MatMulNBits-style weight format) computes the same result.
Result<Tensor> int4TensorFromProto(const onnx::TensorProto& proto, const Shape& shape, int64_t count,
                                   const std::string& label) {
  const bool isSigned = proto.data_type() == kOnnxInt4;
  const size_t bytes = static_cast<size_t>((count + 1) / 2);
  std::string packed;
  if (proto.has_raw_data()) {
    packed = proto.raw_data();
  } else {
    for (int32_t v : proto.int32_data()) packed.push_back(static_cast<char>(v & 0xFF));
  }
  if (packed.size() != bytes) {
    return Status(StatusCode::INVALID_GRAPH, label + ": " + std::to_string(packed.size()) + " bytes of " +
                                                 (isSigned ? "int4" : "uint4") + " data, shape " + shapeToString(shape) +
                                                 " needs " + std::to_string(bytes));
  }
  Tensor tensor(isSigned ? DataType::INT8 : DataType::UINT8, shape);
  auto* out = static_cast<uint8_t*>(tensor.rawData());
  for (int64_t i = 0; i < count; ++i) {
    const auto byte = static_cast<uint8_t>(packed[static_cast<size_t>(i / 2)]);
    const uint8_t nibble = i % 2 ? byte >> 4 : byte & 0x0F;
    out[i] = isSigned && nibble >= 8 ? static_cast<uint8_t>(nibble | 0xF0) : nibble;  // sign-extend int4
  }
  return tensor;
}

}  // namespace

Result<Tensor> tensorFromProto(const onnx::TensorProto& proto) {
  const bool fourBit = proto.data_type() == kOnnxInt4 || proto.data_type() == kOnnxUint4;
  const DataType type = fourBit ? DataType::INT8 : dataTypeFromOnnx(proto.data_type());
  const std::string label = "tensor '" + proto.name() + "'";
  if (type == DataType::UNDEFINED) {
    return Status(StatusCode::INVALID_GRAPH, label + " has unsupported data type " + std::to_string(proto.data_type()));
  }
  if (proto.data_location() == onnx::TensorProto::EXTERNAL) {
    return Status(StatusCode::INVALID_GRAPH, label + " still refers to external data");
  }
  Shape shape(proto.dims().begin(), proto.dims().end());
  // Validate the element count against the data actually present before allocating anything: a hostile or
  // mistyped file must not make us allocate terabytes.
  int64_t count = 1;
  for (int64_t d : shape) {
    if (d < 0) return Status(StatusCode::INVALID_GRAPH, label + " has a negative dimension");
    if (d != 0 && count > (int64_t{1} << 40) / d) {
      return Status(StatusCode::INVALID_GRAPH, label + " has an impossibly large shape " + shapeToString(shape));
    }
    count *= d;
  }
  if (fourBit) return int4TensorFromProto(proto, shape, count, label);
  if (type == DataType::STRING) {
    if (proto.string_data_size() != count) {
      return Status(StatusCode::INVALID_GRAPH, label + ": " + std::to_string(proto.string_data_size()) +
                                                   " strings for " + std::to_string(count) + " elements");
    }
    Tensor tensor(type, shape);
    for (int64_t i = 0; i < count; ++i) tensor.strings()[i] = proto.string_data(static_cast<int>(i));
    return tensor;
  }
  const size_t bytes = static_cast<size_t>(count) * dataTypeSize(type);
  if (proto.has_raw_data()) {
    if (proto.raw_data().size() != bytes) {
      return Status(StatusCode::INVALID_GRAPH, label + ": raw_data has " + std::to_string(proto.raw_data().size()) +
                                                   " bytes, shape " + shapeToString(shape) + " needs " +
                                                   std::to_string(bytes));
    }
    Tensor tensor(type, shape);
    if (bytes) std::memcpy(tensor.rawData(), proto.raw_data().data(), bytes);
    return tensor;
  }
  if (typedFieldSize(proto, type) != count) {
    return Status(StatusCode::INVALID_GRAPH, label + ": " + std::to_string(typedFieldSize(proto, type)) +
                                                 " values for " + std::to_string(count) + " elements");
  }
  Tensor tensor(type, shape);
  switch (type) {
    case DataType::FLOAT: copyTyped<float>(proto.float_data(), tensor); break;
    case DataType::DOUBLE: copyTyped<double>(proto.double_data(), tensor); break;
    case DataType::INT64: copyTyped<int64_t>(proto.int64_data(), tensor); break;
    case DataType::UINT32: copyTyped<uint32_t>(proto.uint64_data(), tensor); break;
    case DataType::UINT64: copyTyped<uint64_t>(proto.uint64_data(), tensor); break;
    case DataType::INT32: copyTyped<int32_t>(proto.int32_data(), tensor); break;
    case DataType::INT16: copyTyped<int16_t>(proto.int32_data(), tensor); break;
    case DataType::UINT16: copyTyped<uint16_t>(proto.int32_data(), tensor); break;
    case DataType::INT8: copyTyped<int8_t>(proto.int32_data(), tensor); break;
    case DataType::UINT8: copyTyped<uint8_t>(proto.int32_data(), tensor); break;
    case DataType::BOOL: copyTyped<bool>(proto.int32_data(), tensor); break;
    case DataType::FLOAT16: copyBits<Float16>(proto.int32_data(), tensor); break;
    case DataType::BFLOAT16: copyBits<BFloat16>(proto.int32_data(), tensor); break;
    case DataType::COMPLEX64: copyTyped<float>(proto.float_data(), tensor.reshaped({count * 2})); break;
    case DataType::COMPLEX128: copyTyped<double>(proto.double_data(), tensor.reshaped({count * 2})); break;
    default: break;
  }
  return tensor;
}

void tensorToProto(const Tensor& tensor, onnx::TensorProto& proto) {
  proto.clear_dims();
  for (int64_t d : tensor.shape()) proto.add_dims(d);
  proto.set_data_type(static_cast<int32_t>(tensor.dtype()));
  proto.clear_raw_data();
  proto.clear_string_data();
  if (tensor.dtype() == DataType::STRING) {
    for (int64_t i = 0; i < tensor.numel(); ++i) proto.add_string_data(tensor.strings()[i]);
  } else {
    proto.set_raw_data(tensor.rawData(), tensor.byteSize());
  }
}

}  // namespace kiln::onnx_io
