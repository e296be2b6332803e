// Helpers shared by CPU kernels: type dispatch, broadcasting, axes, reading shape-like inputs.
#pragma once

#include <cstdint>
#include <string>
#include <type_traits>
#include <vector>

#include "kiln/status.h"
#include "kiln/tensor.h"
#include "ops/shape_rules.h"

namespace kiln::cpu {

// Calls `fn.template operator()<T>()` with the C++ type of `type`, for the types listed in the call.
// Example: return dispatchType<float, double, int32_t, int64_t>(x.dtype(), [&]<class T>() { ...; return Status::ok(); });
template <class... Ts, class F>
Status dispatchType(DataType type, F&& fn) {
  Status result(StatusCode::NOT_IMPLEMENTED, std::string("unsupported element type ") + dataTypeName(type));
  bool matched = false;
  ((!matched && type == DataTypeOf<Ts>::value ? (matched = true, result = fn.template operator()<Ts>(), 0) : 0), ...);
  return result;
}

// Every numeric type ONNX ops commonly define (no bool/string).
#define KILN_NUMERIC_TYPES float, double, Float16, BFloat16, int8_t, int16_t, int32_t, int64_t, uint8_t, uint16_t, uint32_t, uint64_t
#define KILN_FLOAT_TYPES float, double, Float16, BFloat16
#define KILN_INTEGER_TYPES int8_t, int16_t, int32_t, int64_t, uint8_t, uint16_t, uint32_t, uint64_t
#define KILN_ALL_TYPES KILN_NUMERIC_TYPES, bool, std::string

// Arithmetic type used to compute on T (Float16/BFloat16 compute in float).
template <class T>
using ComputeType = std::conditional_t<std::is_same_v<T, Float16> || std::is_same_v<T, BFloat16>, float, T>;

// A value of T as double (half types through float), and back (half types through float); for kernels that compute
// in double for accuracy.
template <class T>
double toDouble(T value) {
  return static_cast<double>(static_cast<ComputeType<T>>(value));
}
template <class T>
T fromDouble(double value) {
  if constexpr (std::is_same_v<T, Float16> || std::is_same_v<T, BFloat16>) {
    return T(static_cast<float>(value));
  } else {
    return static_cast<T>(value);
  }
}

inline Status invalidArgument(const std::string& message) { return {StatusCode::INVALID_ARGUMENT, message}; }
inline Status notImplemented(const std::string& message) { return {StatusCode::NOT_IMPLEMENTED, message}; }

// The ONNX shape rules both EPs share (ops/shape_rules.h).
using ops::broadcastShapes;
using ops::normalizeAxis;
// Row-major strides of `shape`, in elements.
std::vector<int64_t> stridesOf(const Shape& shape);
// Strides of `shape` broadcast to `outShape` (0 on broadcast axes); `shape` is right-aligned.
std::vector<int64_t> broadcastStrides(const Shape& shape, const Shape& outShape);
// Reads an int32/int64 tensor (shape, axes, pads, ...) into int64 values.
Result<std::vector<int64_t>> readInt64Values(const Tensor& tensor);
// Reads any float or integer tensor into doubles (scalars like Clip bounds, Pad value, ...).
Result<std::vector<double>> readDoubleValues(const Tensor& tensor);

// Calls fn(outIndex, aIndex, bIndex) for every element of the broadcast of a and b into outShape.
template <class F>
void forEachBroadcast(const Shape& outShape, const Shape& aShape, const Shape& bShape, F&& fn) {
  const int64_t total = shapeSize(outShape);
  if (aShape == outShape && bShape == outShape) {
    for (int64_t i = 0; i < total; ++i) fn(i, i, i);
    return;
  }
  const size_t rank = outShape.size();
  const std::vector<int64_t> sa = broadcastStrides(aShape, outShape), sb = broadcastStrides(bShape, outShape);
  std::vector<int64_t> index(rank, 0);
  int64_t ia = 0, ib = 0;
  for (int64_t i = 0; i < total; ++i) {
    fn(i, ia, ib);
    for (size_t d = rank; d-- > 0;) {
      ++index[d];
      ia += sa[d];
      ib += sb[d];
      if (index[d] < outShape[d]) break;
      ia -= sa[d] * outShape[d];
      ib -= sb[d] * outShape[d];
      index[d] = 0;
    }
  }
}

}  // namespace kiln::cpu
