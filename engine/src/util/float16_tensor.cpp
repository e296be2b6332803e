#include "util/float16_tensor.h"

#include "kiln/tensor.h"

namespace kiln {

Tensor toFloat16(const Tensor& t) {
  Tensor out(DataType::FLOAT16, t.shape());
  const float* in = t.data<float>();
  Float16* half = out.data<Float16>();
  for (int64_t i = 0; i < t.numel(); ++i) half[i] = Float16(in[i]);
  return out;
}

Tensor toFloat32(const Tensor& t) {
  Tensor out(DataType::FLOAT, t.shape());
  const Float16* in = t.data<Float16>();
  float* single = out.data<float>();
  for (int64_t i = 0; i < t.numel(); ++i) single[i] = in[i];
  return out;
}

}  // namespace kiln
