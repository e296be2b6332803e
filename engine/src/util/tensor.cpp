#include "kiln/tensor.h"

#include <algorithm>
#include <bit>
#include <charconv>
#include <cstdlib>
#include <new>

#include "kiln/tensor_size.h"

namespace kiln {

size_t dataTypeSize(DataType type) {
  switch (type) {
    case DataType::FLOAT: case DataType::INT32: case DataType::UINT32: return 4;
    case DataType::UINT8: case DataType::INT8: case DataType::BOOL: return 1;
    case DataType::UINT16: case DataType::INT16: case DataType::FLOAT16: case DataType::BFLOAT16: return 2;
    case DataType::INT64: case DataType::UINT64: case DataType::DOUBLE: case DataType::COMPLEX64: return 8;
    case DataType::COMPLEX128: return 16;
    case DataType::STRING: case DataType::UNDEFINED: return 0;
  }
  return 0;
}

const char* dataTypeName(DataType type) {
  switch (type) {
    case DataType::UNDEFINED: return "undefined";
    case DataType::FLOAT: return "float32";
    case DataType::UINT8: return "uint8";
    case DataType::INT8: return "int8";
    case DataType::UINT16: return "uint16";
    case DataType::INT16: return "int16";
    case DataType::INT32: return "int32";
    case DataType::INT64: return "int64";
    case DataType::STRING: return "string";
    case DataType::BOOL: return "bool";
    case DataType::FLOAT16: return "float16";
    case DataType::DOUBLE: return "float64";
    case DataType::UINT32: return "uint32";
    case DataType::UINT64: return "uint64";
    case DataType::COMPLEX64: return "complex64";
    case DataType::COMPLEX128: return "complex128";
    case DataType::BFLOAT16: return "bfloat16";
  }
  return "unknown";
}

// IEEE half conversions with round-to-nearest-even, subnormals, inf and NaN.
Float16::Float16(float value) {
  const uint32_t f = std::bit_cast<uint32_t>(value);
  const uint32_t sign = (f >> 16) & 0x8000u;
  uint32_t abs = f & 0x7fffffffu;
  if (abs >= 0x7f800000u) {  // inf or NaN
    bits = static_cast<uint16_t>(sign | 0x7c00u | (abs > 0x7f800000u ? 0x200u | ((abs >> 13) & 0x3ffu) : 0));
    return;
  }
  if (abs >= 0x477ff000u) {  // rounds to >= 65520: overflow to inf
    bits = static_cast<uint16_t>(sign | 0x7c00u);
    return;
  }
  if (abs < 0x38800000u) {  // subnormal half (or zero)
    const float magnitude = std::bit_cast<float>(abs) + 0.5f;  // 0.5 = 2^-1: aligns the half subnormal LSB
    bits = static_cast<uint16_t>(sign | (std::bit_cast<uint32_t>(magnitude) - 0x3f000000u));
    return;
  }
  const uint32_t mantissaOdd = (abs >> 13) & 1u;
  abs += 0xc8000fffu + mantissaOdd;  // rebias exponent (-112 << 23) and round to nearest even
  bits = static_cast<uint16_t>(sign | (abs >> 13));
}

Float16::operator float() const {
  const uint32_t sign = static_cast<uint32_t>(bits & 0x8000u) << 16;
  const uint32_t exponent = (bits >> 10) & 0x1fu;
  const uint32_t mantissa = bits & 0x3ffu;
  uint32_t result;
  if (exponent == 0) {
    if (mantissa == 0) return std::bit_cast<float>(sign);
    const float value = static_cast<float>(mantissa) * 5.9604644775390625e-8f;  // 2^-24
    return sign ? -value : value;
  } else if (exponent == 31) {
    result = sign | 0x7f800000u | (mantissa << 13);
  } else {
    result = sign | ((exponent + 112) << 23) | (mantissa << 13);
  }
  return std::bit_cast<float>(result);
}

BFloat16::BFloat16(float value) {
  const uint32_t f = std::bit_cast<uint32_t>(value);
  if ((f & 0x7fffffffu) > 0x7f800000u) {
    bits = static_cast<uint16_t>((f >> 16) | 0x40u);
    return;
  }
  const uint32_t rounding = 0x7fffu + ((f >> 16) & 1u);
  bits = static_cast<uint16_t>((f + rounding) >> 16);
}

BFloat16::operator float() const { return std::bit_cast<float>(static_cast<uint32_t>(bits) << 16); }

int64_t shapeSize(const Shape& shape) {
  // A zero dimension empties the tensor whatever the others hold: huge ones before it must not overflow the product.
  if (std::find(shape.begin(), shape.end(), 0) != shape.end()) return 0;
  int64_t size = 1;
  for (int64_t d : shape) size *= d;
  return size;
}

std::string shapeToString(const Shape& shape) {
  if (shape.empty()) return "scalar";
  std::string text;
  for (size_t i = 0; i < shape.size(); ++i) {
    if (i) text += 'x';
    text += std::to_string(shape[i]);
  }
  return text;
}

namespace {
// calloc: large blocks come straight from mmap as zero pages, so big outputs skip a memset pass.
std::shared_ptr<std::byte> allocateZeroed(size_t bytes) {
  void* memory = std::calloc(std::max<size_t>(bytes, 1), 1);
  if (!memory) throw std::bad_alloc();
  return std::shared_ptr<std::byte>(static_cast<std::byte*>(memory), [](std::byte* p) { std::free(p); });
}
}  // namespace

Tensor::Tensor(DataType type, Shape shape) : type_(type), shape_(std::move(shape)) {
  if (type_ == DataType::STRING) {
    strings_ = std::make_shared<std::vector<std::string>>(static_cast<size_t>(numel()));
  } else {
    bytes_ = allocateZeroed(byteSize());
  }
}

Tensor Tensor::fromStrings(Shape shape, std::vector<std::string> values) {
  Tensor t(DataType::STRING, std::move(shape));
  values.resize(static_cast<size_t>(t.numel()));
  *t.strings_ = std::move(values);
  return t;
}

Tensor Tensor::wrap(DataType type, Shape shape, std::shared_ptr<std::byte> storage) {
  Tensor t;
  t.type_ = type;
  t.shape_ = std::move(shape);
  t.bytes_ = std::move(storage);
  return t;
}

Tensor Tensor::onDevice(DataType type, Shape shape, std::shared_ptr<const DeviceBuffer> buffer) {
  Tensor t;
  t.type_ = type;
  t.shape_ = std::move(shape);
  t.device_ = std::move(buffer);
  return t;
}

std::string Tensor::location() const { return device_ ? device_->location() : "cpu"; }

Result<Tensor> Tensor::toHost() const {
  if (!device_) return *this;
  if (device_->bytes() < byteSize()) {
    return Status(StatusCode::FAIL, "device tensor " + shapeToString(shape_) + " needs " + std::to_string(byteSize()) +
                                        " bytes, its storage on " + device_->location() + " holds " +
                                        std::to_string(device_->bytes()));
  }
  Tensor host(type_, shape_);
  KILN_RETURN_IF_ERROR(device_->read(host.rawData(), host.byteSize()));
  return host;
}

Tensor Tensor::reshaped(Shape shape) const {
  Tensor view = *this;
  view.shape_ = std::move(shape);
  return view;
}

Tensor Tensor::clone() const {
  if (device_) {
    auto host = toHost();
    return host.isOk() ? host.value() : Tensor();
  }
  Tensor copy(type_, shape_);
  if (type_ == DataType::STRING) {
    *copy.strings_ = *strings_;
  } else if (byteSize() > 0) {
    std::memcpy(copy.rawData(), rawData(), byteSize());
  }
  return copy;
}

}  // namespace kiln

namespace kiln {

Result<uint64_t> checkedTensorBytes(DataType type, const Shape& shape, uint64_t limitBytes, const std::string& what) {
  const uint64_t elementSize = std::max<uint64_t>(dataTypeSize(type), 1);
  const std::string limitText = " (kiln.max_tensor_bytes is " + std::to_string(limitBytes) + ")";
  uint64_t bytes = elementSize;
  bool over = false;
  for (int64_t d : shape) {
    if (d < 0) {
      return Status(StatusCode::INVALID_ARGUMENT, what + " has a negative dimension " + std::to_string(d) +
                                                      " in shape " + shapeToString(shape));
    }
    // Overflow-checked: once over the limit it stays over (unless a later dimension is 0).
    if (d == 0) return uint64_t{0};
    if (!over && bytes > limitBytes / static_cast<uint64_t>(d)) over = true;
    if (!over) bytes *= static_cast<uint64_t>(d);
  }
  if (over || bytes > limitBytes) {
    return Status(StatusCode::INVALID_ARGUMENT, what + " of shape " + shapeToString(shape) + " (" +
                                                    dataTypeName(type) + ") needs more bytes than the limit of " +
                                                    std::to_string(limitBytes) + limitText);
  }
  return bytes;
}

Result<uint64_t> parseMaxTensorBytes(const std::string& value) {
  uint64_t parsed = 0;
  const char* end = value.data() + value.size();
  const auto [ptr, ec] = std::from_chars(value.data(), end, parsed);
  if (value.empty() || ec != std::errc() || ptr != end || parsed == 0) {
    return Status(StatusCode::INVALID_ARGUMENT, std::string(kMaxTensorBytesKey) +
                                                    " must be a positive integer (bytes), got '" + value + "'");
  }
  return parsed;
}

}  // namespace kiln
