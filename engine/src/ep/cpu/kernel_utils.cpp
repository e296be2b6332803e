#include "ep/cpu/kernel_utils.h"

#include <algorithm>

namespace kiln::cpu {

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
      return invalidArgument("shapes " + shapeToString(a) + " and " + shapeToString(b) + " do not broadcast");
    }
  }
  return out;
}

std::vector<int64_t> stridesOf(const Shape& shape) {
  std::vector<int64_t> strides(shape.size(), 1);
  for (size_t i = shape.size(); i-- > 1;) strides[i - 1] = strides[i] * shape[i];
  return strides;
}

std::vector<int64_t> broadcastStrides(const Shape& shape, const Shape& outShape) {
  std::vector<int64_t> result(outShape.size(), 0);
  const std::vector<int64_t> own = stridesOf(shape);
  const size_t offset = outShape.size() - shape.size();
  for (size_t i = 0; i < shape.size(); ++i) result[offset + i] = shape[i] == 1 ? 0 : own[i];
  return result;
}

Result<int64_t> normalizeAxis(int64_t axis, int64_t rank) {
  const int64_t normalized = axis < 0 ? axis + rank : axis;
  if (normalized < 0 || normalized >= std::max<int64_t>(rank, 1)) {
    return invalidArgument("axis " + std::to_string(axis) + " is out of range for rank " + std::to_string(rank));
  }
  return normalized;
}

Result<std::vector<int64_t>> readInt64Values(const Tensor& tensor) {
  std::vector<int64_t> values(static_cast<size_t>(tensor.numel()));
  if (tensor.dtype() == DataType::INT64) {
    std::copy_n(tensor.data<int64_t>(), values.size(), values.begin());
  } else if (tensor.dtype() == DataType::INT32) {
    std::copy_n(tensor.data<int32_t>(), values.size(), values.begin());
  } else {
    return invalidArgument(std::string("expected an int32 or int64 tensor, got ") + dataTypeName(tensor.dtype()));
  }
  return values;
}

Result<std::vector<double>> readDoubleValues(const Tensor& tensor) {
  std::vector<double> values(static_cast<size_t>(tensor.numel()));
  Status status = dispatchType<KILN_NUMERIC_TYPES, bool>(tensor.dtype(), [&]<class T>() {
    const T* data = tensor.data<T>();
    for (size_t i = 0; i < values.size(); ++i) values[i] = static_cast<double>(static_cast<ComputeType<T>>(data[i]));
    return Status::ok();
  });
  if (!status.isOk()) return status;
  return values;
}

}  // namespace kiln::cpu
