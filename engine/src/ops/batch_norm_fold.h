// Conv + BatchNormalization folding as arithmetic: one definition for the Vulkan EP's fusion (which stores the folded
// parameters) and for a weightless binary's load (which derives them again from the source model's weights).
#pragma once

#include <cstdint>
#include <optional>
#include <utility>

#include "kiln/tensor.h"

namespace kiln::ops {

// The float32 weights and bias of a Conv (`transpose`: ConvTranspose) with BatchNormalization folded in: what the
// fusion stores (converted back to float16 when the weights were), and what a weightless binary's load derives
// again. nullopt when the shapes do not fit (the fusion then leaves the pair alone).
std::optional<std::pair<Tensor, Tensor>> foldBatchNormParameters(const Tensor& w, const std::optional<Tensor>& bias,
                                                                 const Tensor& scale, const Tensor& shift,
                                                                 const Tensor& mean, const Tensor& var, float epsilon,
                                                                 bool transpose, int64_t group);

}  // namespace kiln::ops
