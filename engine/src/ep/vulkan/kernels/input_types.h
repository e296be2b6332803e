// Element types of a node's inputs for support checks and kernel creation. Initializers of IR >= 4 models
// carry no value_info, so the declared type falls back to the constant's own type.
#pragma once

#include "ep/vulkan/vk_kernel.h"

namespace kiln::vk {

// The declared type of input i, else the type of its constant value, else UNDEFINED.
inline DataType inputTypeOf(const std::vector<const ir::ValueInfo*>& info,
                            const std::vector<const Tensor*>& constants, size_t i) {
  if (i < info.size() && info[i] && info[i]->dtype != DataType::UNDEFINED) return info[i]->dtype;
  if (i < constants.size() && constants[i]) return constants[i]->dtype();
  return DataType::UNDEFINED;
}
inline DataType inputTypeOf(const SupportQuery& q, size_t i) {
  return inputTypeOf(q.inputInfo, q.constantInputs, i);
}
inline DataType inputTypeOf(const KernelCreateInfo& info, size_t i) {
  return inputTypeOf(info.inputInfo, info.constantInputs, i);
}

}  // namespace kiln::vk
