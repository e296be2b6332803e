#include "ep/cpu/kernel.h"

#include <cstring>

namespace kiln::cpu {

Tensor& KernelContext::allocateOutput(size_t i, DataType type, Shape shape) {
  if (!pool_) {
    outputs_[i] = Tensor(type, std::move(shape));  // zero-filled
    return outputs_[i];
  }
  Tensor& out = allocateUninitializedOutput(i, type, std::move(shape));
  if (out.rawData()) std::memset(out.rawData(), 0, out.byteSize());
  return out;
}

Tensor& KernelContext::allocateUninitializedOutput(size_t i, DataType type, Shape shape) {
  outputs_[i] = pool_ ? pool_->allocate(type, shape) : Tensor(type, std::move(shape));
  return outputs_[i];
}

}  // namespace kiln::cpu
