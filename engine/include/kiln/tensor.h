// Tensor: a dense n-dimensional array with shared, zero-initialized storage (copies share; clone() copies). A
// tensor's elements live in host memory, or, for a device tensor (IoBinding outputs, io_binding.h), in an
// execution provider's device memory that host code reaches only through toHost().
#pragma once

#include "kiln/export.h"

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "kiln/status.h"

namespace kiln {

// Values equal ONNX TensorProto.DataType.
enum class DataType : int32_t {
  UNDEFINED = 0,
  FLOAT = 1,
  UINT8 = 2,
  INT8 = 3,
  UINT16 = 4,
  INT16 = 5,
  INT32 = 6,
  INT64 = 7,
  STRING = 8,
  BOOL = 9,
  FLOAT16 = 10,
  DOUBLE = 11,
  UINT32 = 12,
  UINT64 = 13,
  COMPLEX64 = 14,
  COMPLEX128 = 15,
  BFLOAT16 = 16,
};

// Bytes per element (0 for STRING and UNDEFINED).
KILN_EXPORT size_t dataTypeSize(DataType type);
// Lower-case ONNX name: "float", "int64", "float16", ...
KILN_EXPORT const char* dataTypeName(DataType type);

// IEEE binary16 and bfloat16 storage types; arithmetic goes through float.
struct KILN_EXPORT Float16 {
  uint16_t bits = 0;
  Float16() = default;
  // Rounds `value` to the nearest binary16 (overflow gives infinity).
  explicit Float16(float value);
  // The exact float value.
  operator float() const;  // NOLINT(implicit)
};
struct KILN_EXPORT BFloat16 {
  uint16_t bits = 0;
  BFloat16() = default;
  // Rounds `value` to the nearest bfloat16.
  explicit BFloat16(float value);
  // The exact float value.
  operator float() const;  // NOLINT(implicit)
};

using Shape = std::vector<int64_t>;

// Number of elements of a shape (1 for a scalar).
KILN_EXPORT int64_t shapeSize(const Shape& shape);
// "1x3x640x640" ("scalar" for rank 0).
KILN_EXPORT std::string shapeToString(const Shape& shape);

// Bytes of a tensor held in an execution provider's device memory. Implemented by the EPs; the storage stays
// allocated while any Tensor refers to it (and keeps its device open).
class KILN_EXPORT DeviceBuffer {
 public:
  virtual ~DeviceBuffer() = default;
  // Where the bytes are: "VulkanExecutionProvider:0 (llvmpipe (LLVM 15.0.6, 256 bits))".
  virtual const std::string& location() const = 0;
  // The size of the storage in bytes.
  virtual uint64_t bytes() const = 0;
  // Copies the first `bytes` bytes (at most bytes()) to `destination` in host memory; waits for the device.
  virtual Status read(void* destination, uint64_t bytes) const = 0;
};

class KILN_EXPORT Tensor {
 public:
  Tensor() = default;
  // Zero-filled tensor (empty strings for STRING).
  Tensor(DataType type, Shape shape);

  // Copies min(values.size(), shapeSize(shape)) elements; the rest stay zero.
  template <class T>
  static Tensor fromVector(Shape shape, const std::vector<T>& values);
  // A STRING tensor holding `values` (as fromVector: extra values dropped, missing ones empty).
  static Tensor fromStrings(Shape shape, std::vector<std::string> values);
  // A tensor over memory someone else owns (a mapped file, a caller's buffer): `storage` must hold at least
  // byteSize() bytes, suitably aligned for `type`, and keeps that memory alive (use shared_ptr's aliasing
  // constructor to point into a larger owner). Not for STRING.
  static Tensor wrap(DataType type, Shape shape, std::shared_ptr<std::byte> storage);
  // A device tensor over `buffer` (at least byteSize() bytes): rawData() is null, toHost() copies the elements
  // out. Not for STRING.
  static Tensor onDevice(DataType type, Shape shape, std::shared_ptr<const DeviceBuffer> buffer);

  // False for a default-constructed tensor.
  bool defined() const { return type_ != DataType::UNDEFINED; }
  // The element type.
  DataType dtype() const { return type_; }
  // The dimensions.
  const Shape& shape() const { return shape_; }
  // The number of dimensions (0 for a scalar).
  size_t rank() const { return shape_.size(); }
  // Dimension `axis`. Precondition: axis < rank().
  int64_t dim(size_t axis) const { return shape_[axis]; }
  // The number of elements.
  int64_t numel() const { return shapeSize(shape_); }
  // The bytes of the element storage (0 for STRING, whose elements live in strings()).
  size_t byteSize() const { return static_cast<size_t>(numel()) * dataTypeSize(type_); }

  // True for a device tensor: its elements are not in host memory (rawData() is null).
  bool isOnDevice() const { return device_ != nullptr; }
  // The device storage of a device tensor; null for a host tensor.
  const std::shared_ptr<const DeviceBuffer>& deviceBuffer() const { return device_; }
  // "cpu" for a host tensor, DeviceBuffer::location() for a device tensor.
  std::string location() const;
  // This tensor when its elements are in host memory (no copy), else a new host tensor with the device bytes.
  Result<Tensor> toHost() const;

  // The element storage (shared with copies of this tensor); null for an undefined, STRING or device tensor.
  void* rawData() { return bytes_.get(); }
  // The element storage, read-only.
  const void* rawData() const { return bytes_.get(); }
  // The elements as T. Precondition: T matches dtype().
  template <class T>
  T* data() { return static_cast<T*>(rawData()); }
  // The elements as T, read-only. Precondition: T matches dtype().
  template <class T>
  const T* data() const { return static_cast<const T*>(rawData()); }
  // The elements of a STRING tensor; null for any other type.
  std::string* strings() { return strings_ ? strings_->data() : nullptr; }
  // The elements of a STRING tensor, read-only; null for any other type.
  const std::string* strings() const { return strings_ ? strings_->data() : nullptr; }

  // Same storage, new shape with the same element count.
  Tensor reshaped(Shape shape) const;
  // Deep copy in host memory (a device tensor's bytes are read back; undefined if that read fails).
  Tensor clone() const;
  // True when both tensors share storage.
  bool sharesStorageWith(const Tensor& other) const {
    return (bytes_ && bytes_ == other.bytes_) || (device_ && device_ == other.device_);
  }

 private:
  DataType type_ = DataType::UNDEFINED;
  Shape shape_;
  std::shared_ptr<std::byte> bytes_;
  std::shared_ptr<std::vector<std::string>> strings_;
  std::shared_ptr<const DeviceBuffer> device_;
};

template <class T>
struct DataTypeOf;
#define KILN_DATA_TYPE_OF(T, E) \
  template <>                   \
  struct DataTypeOf<T> {        \
    static constexpr DataType value = DataType::E; \
  };
KILN_DATA_TYPE_OF(float, FLOAT)
KILN_DATA_TYPE_OF(double, DOUBLE)
KILN_DATA_TYPE_OF(uint8_t, UINT8)
KILN_DATA_TYPE_OF(int8_t, INT8)
KILN_DATA_TYPE_OF(uint16_t, UINT16)
KILN_DATA_TYPE_OF(int16_t, INT16)
KILN_DATA_TYPE_OF(int32_t, INT32)
KILN_DATA_TYPE_OF(int64_t, INT64)
KILN_DATA_TYPE_OF(uint32_t, UINT32)
KILN_DATA_TYPE_OF(uint64_t, UINT64)
KILN_DATA_TYPE_OF(bool, BOOL)
KILN_DATA_TYPE_OF(Float16, FLOAT16)
KILN_DATA_TYPE_OF(BFloat16, BFLOAT16)
KILN_DATA_TYPE_OF(std::string, STRING)
#undef KILN_DATA_TYPE_OF

template <class T>
Tensor Tensor::fromVector(Shape shape, const std::vector<T>& values) {
  Tensor t(DataTypeOf<T>::value, std::move(shape));
  const size_t count = std::min(values.size(), static_cast<size_t>(t.numel()));
  if constexpr (std::is_same_v<T, bool>) {
    for (size_t i = 0; i < count; ++i) t.data<bool>()[i] = values[i];
  } else {
    std::memcpy(t.rawData(), values.data(), count * sizeof(T));
  }
  return t;
}

}  // namespace kiln
