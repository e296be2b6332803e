// Element movement shared by the shape and indexing kernels (data_movement.h).
#include "ep/cpu/kernels/data_movement.h"

#include <algorithm>
#include <cstring>

namespace kiln::cpu {

void copyElements(const Tensor& src, int64_t srcOffset, Tensor& dst, int64_t dstOffset, int64_t count) {
  if (count <= 0) return;
  if (src.dtype() == DataType::STRING) {
    std::copy_n(src.strings() + srcOffset, count, dst.strings() + dstOffset);
  } else {
    const size_t size = dataTypeSize(src.dtype());
    std::memcpy(static_cast<char*>(dst.rawData()) + dstOffset * size,
                static_cast<const char*>(src.rawData()) + srcOffset * size, static_cast<size_t>(count) * size);
  }
}

Status copyStrided(const Tensor& in, int64_t base, const std::vector<int64_t>& strides, Tensor& out) {
  const Shape& outShape = out.shape();
  const int64_t total = out.numel();
  if (total == 0) return Status::ok();
  const size_t rank = outShape.size();
  return dispatchStorage(in.dtype(), [&]<class S>() {
    const S* src = elementsOf<S>(in);
    S* dst = mutableElementsOf<S>(out);
    if (rank == 0) {
      dst[0] = src[base];
      return Status::ok();
    }
    const int64_t inner = outShape[rank - 1];
    const int64_t innerStride = strides[rank - 1];
    std::vector<int64_t> index(rank - 1, 0);
    int64_t offset = base;
    for (int64_t written = 0; written < total; written += inner) {
      if (innerStride == 1) {
        std::copy(src + offset, src + offset + inner, dst + written);
      } else if (innerStride == 0) {
        std::fill(dst + written, dst + written + inner, src[offset]);
      } else {
        for (int64_t j = 0; j < inner; ++j) dst[written + j] = src[offset + j * innerStride];
      }
      for (size_t d = rank - 1; d-- > 0;) {
        offset += strides[d];
        if (++index[d] < outShape[d]) break;
        offset -= strides[d] * outShape[d];
        index[d] = 0;
      }
    }
    return Status::ok();
  });
}

}  // namespace kiln::cpu
