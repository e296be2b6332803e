// Axis, slice and broadcasting rules of the ONNX ops, followed by both execution providers so that they agree on
// every shape.
#pragma once

#include <cstdint>
#include <string>

#include "kiln/status.h"
#include "kiln/tensor.h"

namespace kiln::ops {

// Maps a possibly negative axis into [0, rank) (rank 0 accepts 0); INVALID_ARGUMENT "<what> <axis> is out of
// range for rank <rank>" otherwise.
Result<int64_t> normalizeAxis(int64_t axis, int64_t rank, const std::string& what = "axis");

// Numpy-style multidirectional broadcast of two shapes; INVALID_ARGUMENT naming both when they do not broadcast.
Result<Shape> broadcastShapes(const Shape& a, const Shape& b);

// One Slice axis per the ONNX rules: negative start/end count from the end, then both are clamped by the step's
// sign. Returns the first index and the element count (0 when the range is empty).
struct SliceAxis {
  int64_t start = 0;
  int64_t count = 0;
};
SliceAxis resolveSliceAxis(int64_t start, int64_t end, int64_t step, int64_t dim);

}  // namespace kiln::ops
