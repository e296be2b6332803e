#include "ep/cpu/kernel_utils.h"

#include <algorithm>

namespace kiln::cpu {

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
