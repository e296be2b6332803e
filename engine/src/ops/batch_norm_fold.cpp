#include "ops/batch_norm_fold.h"

#include <cmath>
#include <vector>

namespace kiln::ops {

std::optional<std::pair<Tensor, Tensor>> foldBatchNormParameters(const Tensor& w, const std::optional<Tensor>& bias,
                                                                 const Tensor& scale, const Tensor& shift,
                                                                 const Tensor& mean, const Tensor& var, float epsilon,
                                                                 bool transpose, int64_t group) {
  if (w.rank() < 3 || group < 1) return std::nullopt;
  // Output channels: dim 0 for Conv; group * dim 1 for ConvTranspose.
  const int64_t channels = transpose ? w.dim(1) * group : w.dim(0);
  if (channels <= 0 || scale.numel() != channels || shift.numel() != channels || mean.numel() != channels ||
      var.numel() != channels || (bias && bias->numel() != channels) || (transpose && w.dim(0) % group != 0)) {
    return std::nullopt;
  }
  std::vector<float> factor(static_cast<size_t>(channels));
  for (int64_t c = 0; c < channels; ++c) {
    factor[static_cast<size_t>(c)] = scale.data<float>()[c] / std::sqrt(var.data<float>()[c] + epsilon);
  }
  Tensor newW = w.clone();
  float* data = newW.data<float>();
  if (!transpose) {
    const int64_t per = w.numel() / channels;
    for (int64_t c = 0; c < channels; ++c) {
      for (int64_t k = 0; k < per; ++k) data[c * per + k] *= factor[static_cast<size_t>(c)];
    }
  } else {
    // Weight layout [C_in, C_out / group, k...]: output channel of (i, o) is (i / (C_in / group)) * (C_out/g) + o.
    const int64_t cin = w.dim(0), coutPerGroup = w.dim(1), kernel = w.numel() / (cin * coutPerGroup);
    const int64_t cinPerGroup = cin / group;
    for (int64_t i = 0; i < cin; ++i) {
      for (int64_t o = 0; o < coutPerGroup; ++o) {
        const int64_t c = (i / cinPerGroup) * coutPerGroup + o;
        for (int64_t k = 0; k < kernel; ++k) data[(i * coutPerGroup + o) * kernel + k] *= factor[static_cast<size_t>(c)];
      }
    }
  }
  Tensor newB(DataType::FLOAT, {channels});
  for (int64_t c = 0; c < channels; ++c) {
    const float b0 = bias ? bias->data<float>()[c] : 0.0f;
    newB.data<float>()[c] = (b0 - mean.data<float>()[c]) * factor[static_cast<size_t>(c)] + shift.data<float>()[c];
  }
  return std::make_pair(std::move(newW), std::move(newB));
}

}  // namespace kiln::ops
