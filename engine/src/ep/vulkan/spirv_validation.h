// SPIR-V read from disk is checked before any driver sees it: a driver handed a malformed module may crash the
// process (lavapipe did, on a resealed pipeline cache file). SPIRV-Tools' validator, for the environment the
// engine's shaders are compiled for (Vulkan 1.1, SPIR-V 1.3).
#pragma once

#include <cstdint>
#include <span>
#include <string>

namespace kiln::vk {

// "" when `words` is a valid module for the engine's target environment, else the validator's first message.
std::string spirvProblem(std::span<const uint32_t> words);

}  // namespace kiln::vk
