#include "ops/shape_rules.h"

#include <algorithm>

namespace kiln::ops {

Result<int64_t> normalizeAxis(int64_t axis, int64_t rank, const std::string& what) {
  if (axis < -rank || axis >= std::max<int64_t>(rank, 1)) {
    return Status(StatusCode::INVALID_ARGUMENT, what + " " + std::to_string(axis) + " is out of range for rank " +
                                                    std::to_string(rank));
  }
  return axis < 0 ? axis + rank : axis;
}

Result<Shape> broadcastShapes(const Shape& a, const Shape& b) {
  const size_t rank = std::max(a.size(), b.size());
  Shape out(rank);
  for (size_t i = 0; i < rank; ++i) {
    const int64_t da = i < rank - a.size() ? 1 : a[i - (rank - a.size())];
    const int64_t db = i < rank - b.size() ? 1 : b[i - (rank - b.size())];
    if (da == db || db == 1) {
      out[i] = da;
    } else if (da == 1) {
      out[i] = db;
    } else {
      return Status(StatusCode::INVALID_ARGUMENT,
                    "shapes " + shapeToString(a) + " and " + shapeToString(b) + " do not broadcast");
    }
  }
  return out;
}

SliceAxis resolveSliceAxis(int64_t start, int64_t end, int64_t step, int64_t dim) {
  if (start < 0) start += dim;
  if (end < 0) end += dim;
  SliceAxis axis;
  if (dim == 0) return axis;
  if (step > 0) {
    axis.start = std::clamp<int64_t>(start, 0, dim);
    end = std::clamp<int64_t>(end, 0, dim);
    if (end > axis.start) axis.count = (end - axis.start + step - 1) / step;
  } else {
    axis.start = std::clamp<int64_t>(start, 0, dim - 1);
    end = std::clamp<int64_t>(end, -1, dim - 1);
    if (axis.start > end) axis.count = (axis.start - end + (-step) - 1) / (-step);
  }
  return axis;
}

}  // namespace kiln::ops
