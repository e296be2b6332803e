#include "ops/split_sizes.h"

#include <algorithm>
#include <string>

namespace kiln::ops {

Result<std::vector<int64_t>> splitSizes(std::vector<int64_t> sizes, int64_t opset, int64_t dim, int64_t count) {
  if (sizes.empty() && opset >= 18 && count > 0) {
    const int64_t chunk = (dim + count - 1) / count;
    for (int64_t i = 0, left = dim; i < count; ++i, left -= std::min(left, chunk)) sizes.push_back(std::min(left, chunk));
  }
  if (sizes.empty()) {
    if (count == 0 || dim % count != 0) {
      return Status(StatusCode::INVALID_ARGUMENT, "dimension " + std::to_string(dim) + " does not split into " +
                                                      std::to_string(count) + " equal parts");
    }
    sizes.assign(static_cast<size_t>(count), dim / count);
  }
  if (static_cast<int64_t>(sizes.size()) != count) {
    return Status(StatusCode::INVALID_ARGUMENT, "split has " + std::to_string(sizes.size()) + " entries for " +
                                                    std::to_string(count) + " outputs");
  }
  int64_t sum = 0;
  for (int64_t s : sizes) {
    if (s < 0) return Status(StatusCode::INVALID_ARGUMENT, "negative split size");
    sum += s;
  }
  if (sum != dim) {
    return Status(StatusCode::INVALID_ARGUMENT, "split sizes sum to " + std::to_string(sum) + ", not " + std::to_string(dim));
  }
  return sizes;
}

}  // namespace kiln::ops
