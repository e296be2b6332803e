// Split's part sizes per the ONNX rules, followed by both execution providers so that they agree on every shape.
#pragma once

#include <cstdint>
#include <vector>

#include "kiln/status.h"

namespace kiln::ops {

// The sizes of Split's `count` outputs along an axis of `dim` elements: `given` (the `split` attribute or input)
// when not empty; else, from opset 18 (num_outputs), chunks of ceil(dim / count) with a smaller last one; else equal
// parts. INVALID_ARGUMENT (a message without the op name) when the sizes are negative, do not sum to `dim`, or
// do not match `count`, or `dim` does not split into equal parts.
Result<std::vector<int64_t>> splitSizes(std::vector<int64_t> given, int64_t opset, int64_t dim, int64_t count);

}  // namespace kiln::ops
