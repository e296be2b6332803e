// ep/vulkan/spirv_validation.h over SPIRV-Tools (Debian's spirv-tools: the validator the Vulkan SDK ships, kept
// current with the specification; writing our own would check far less).
#include "ep/vulkan/spirv_validation.h"

#include <spirv-tools/libspirv.hpp>

namespace kiln::vk {

std::string spirvProblem(std::span<const uint32_t> words) {
  // One validator per thread: SpirvTools holds a context that is not shared between threads.
  thread_local spvtools::SpirvTools tools(SPV_ENV_VULKAN_1_1);
  std::string first;
  tools.SetMessageConsumer([&first](spv_message_level_t, const char*, const spv_position_t&, const char* message) {
    if (first.empty()) first = message ? message : "invalid";
  });
  if (tools.Validate(words.data(), words.size())) return "";
  return first.empty() ? std::string("the SPIR-V validator rejects it") : first;
}

}  // namespace kiln::vk
