// Tensor sizes checked before anything is allocated: the limit kiln.max_tensor_bytes and overflow-checked byte counts.
#pragma once

#include "kiln/export.h"

#include <cstdint>
#include <string>

#include "kiln/config_keys.h"
#include "kiln/status.h"
#include "kiln/tensor.h"

namespace kiln {

// The session config key that bounds one tensor's bytes, and its default (2 GiB).
inline constexpr const char* kMaxTensorBytesKey = config::kMaxTensorBytes;
inline constexpr uint64_t kDefaultMaxTensorBytes = uint64_t{2} << 30;

// The bytes a tensor of `type` and `shape` takes (elements for STRING), computed with overflow checks.
// INVALID_ARGUMENT naming `what`, the shape and the limit when a dimension is negative or the size exceeds
// `limitBytes`.
KILN_EXPORT Result<uint64_t> checkedTensorBytes(DataType type, const Shape& shape, uint64_t limitBytes, const std::string& what);

// Parses a kiln.max_tensor_bytes value (a positive integer); INVALID_ARGUMENT naming the key otherwise.
KILN_EXPORT Result<uint64_t> parseMaxTensorBytes(const std::string& value);

}  // namespace kiln
