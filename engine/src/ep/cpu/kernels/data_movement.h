// Helpers shared by the kernels that move elements without computing on them (shape, indexing and reduction
// families): storage-type dispatch by element size, typed element access that covers strings, permutation.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "ep/cpu/kernel.h"
#include "ep/cpu/kernel_utils.h"

namespace kiln::cpu {

// A 16-byte element (complex128) moved as a unit.
struct Bytes16 {
  uint64_t lo = 0;
  uint64_t hi = 0;
  bool operator==(const Bytes16&) const = default;
};

// Calls fn.template operator()<S>() with a storage type of the same size as `type`'s elements (uint8_t for
// bool/int8/uint8, uint16_t for float16/bfloat16/int16, ...; std::string for STRING). Copying S values copies
// the elements bit for bit, so data-movement kernels support every element type with five instantiations.
template <class F>
Status dispatchStorage(DataType type, F&& fn) {
  if (type == DataType::STRING) return fn.template operator()<std::string>();
  switch (dataTypeSize(type)) {
    case 1: return fn.template operator()<uint8_t>();
    case 2: return fn.template operator()<uint16_t>();
    case 4: return fn.template operator()<uint32_t>();
    case 8: return fn.template operator()<uint64_t>();
    case 16: return fn.template operator()<Bytes16>();
    default: return notImplemented(std::string("unsupported element type ") + dataTypeName(type));
  }
}

// The elements of `tensor` viewed as S (strings() for std::string, raw storage otherwise).
template <class S>
const S* elementsOf(const Tensor& tensor) {
  if constexpr (std::is_same_v<S, std::string>) {
    return tensor.strings();
  } else {
    return static_cast<const S*>(tensor.rawData());
  }
}
template <class S>
S* mutableElementsOf(Tensor& tensor) {
  if constexpr (std::is_same_v<S, std::string>) {
    return tensor.strings();
  } else {
    return static_cast<S*>(tensor.rawData());
  }
}

// Writes into `out` (already allocated, numel equal to `in`'s) the elements of `in` viewed with shape
// `viewShape` and transposed by `perm`: out[i_perm[0], ..., i_perm[r-1]] = in[i_0, ..., i_{r-1}].
// Used by Transpose, DepthToSpace and SpaceToDepth.
Status permuteElements(const Tensor& in, const Shape& viewShape, const std::vector<int64_t>& perm, Tensor& out);

// Copies `count` elements of `src` from srcOffset into `dst` at dstOffset; both have one element type (strings
// included).
void copyElements(const Tensor& src, int64_t srcOffset, Tensor& dst, int64_t dstOffset, int64_t count);

// Writes into `out` (already allocated) out[i] = in[base + sum_d index_d(i) * strides[d]], walking `out`'s shape
// in row-major order. Stride 0 repeats an element (broadcast), negative strides walk backwards (Slice with a
// negative step); the innermost run is a plain copy when its stride is 1. Used by Expand and Slice.
Status copyStrided(const Tensor& in, int64_t base, const std::vector<int64_t>& strides, Tensor& out);

// Maps a possibly negative index into [0, dim); -1 when it is out of range.
inline int64_t wrapIndex(int64_t index, int64_t dim) {
  if (index < 0) index += dim;
  return index < 0 || index >= dim ? -1 : index;
}

// "OpType: message" as INVALID_ARGUMENT.
inline Status nodeError(const std::string& label, const std::string& message) {
  return invalidArgument(label + ": " + message);
}

// Reads an int32/int64 input as int64 values, with errors naming the node and the input.
inline Result<std::vector<int64_t>> readIndexInput(const std::string& label, const Tensor& tensor,
                                                   const char* what) {
  if (tensor.dtype() != DataType::INT64 && tensor.dtype() != DataType::INT32) {
    return nodeError(label, std::string(what) + " must be int32 or int64, got " + dataTypeName(tensor.dtype()));
  }
  return readInt64Values(tensor);
}

}  // namespace kiln::cpu
