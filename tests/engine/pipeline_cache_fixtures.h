// Data for pipeline cache file tests that need no Vulkan device: lavapipe 22.3.6's identity
// (as measured here), a matching VkPipelineCacheHeaderVersionOne blob, and small valid SPIR-V modules.
#pragma once

#include <vulkan/vulkan.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>

#include "ep/vulkan/vulkan_device.h"

namespace kiln::testing {

inline vk::DeviceInfo lavapipeIdentity() {
  vk::DeviceInfo d;
  d.name = "llvmpipe (LLVM 15.0.6, 256 bits)";
  d.type = VulkanDeviceType::CPU;
  d.vendorId = 0x10005;
  d.deviceId = 0;
  d.apiVersion = VK_MAKE_API_VERSION(0, 1, 3, 230);
  d.driverVersion = 1;
  d.driverId = VK_DRIVER_ID_MESA_LLVMPIPE;
  d.driverName = "llvmpipe";
  d.driverInfo = "Mesa 22.3.6 (LLVM 15.0.6)";
  const char uuid[] = "val-%s";
  std::memcpy(d.pipelineCacheUuid.data(), uuid, sizeof uuid - 1);
  d.subgroupSize = 8;
  return d;
}

// What vkGetPipelineCacheData returns on lavapipe: the 32-byte header only; `extra` bytes of payload after it.
inline std::vector<std::byte> driverBlobFor(const vk::DeviceInfo& d, size_t extra = 0) {
  std::vector<std::byte> blob(32 + extra, std::byte{0x5a});
  auto put = [&](size_t offset, uint32_t v) {
    for (size_t i = 0; i < 4; ++i) blob[offset + i] = static_cast<std::byte>(v >> (8 * i));
  };
  put(0, 32);
  put(4, VK_PIPELINE_CACHE_HEADER_VERSION_ONE);
  put(8, d.vendorId);
  put(12, d.deviceId);
  std::memcpy(blob.data() + 16, d.pipelineCacheUuid.data(), 16);
  return blob;
}

// A valid SPIR-V 1.3 compute module (an empty main) that `seed` tells apart (OpSource's version) and `length` pads
// with that many words (an OpSourceExtension string): the cache validates modules before handing them out.
inline std::vector<uint32_t> sampleSpirv(uint32_t seed, size_t length = 8) {
  std::vector<uint32_t> words = {0x07230203, 0x00010300, 0, 5, 0};     // magic, SPIR-V 1.3, generator, bound, schema
  const auto op = [&](uint32_t opcode, std::vector<uint32_t> operands) {
    words.push_back(static_cast<uint32_t>(operands.size() + 1) << 16 | opcode);
    words.insert(words.end(), operands.begin(), operands.end());
  };
  op(17, {1});                            // OpCapability Shader
  op(14, {0, 1});                         // OpMemoryModel Logical GLSL450
  op(15, {5, 1, 0x6E69616D, 0});          // OpEntryPoint GLCompute %1 "main"
  op(16, {1, 17, 1, 1, 1});               // OpExecutionMode %1 LocalSize 1 1 1
  if (length > 0) {                       // OpSourceExtension "aaa...": length words, NUL-terminated
    std::vector<uint32_t> text(length, 0x61616161);
    text.back() = 0x00616161;
    op(4, text);
  }
  op(3, {0, seed});                       // OpSource Unknown <seed>
  op(19, {2});                            // %2 = OpTypeVoid
  op(33, {3, 2});                         // %3 = OpTypeFunction %2
  op(54, {2, 1, 0, 3});                   // %1 = OpFunction %2 None %3
  op(248, {4});                           // OpLabel
  op(253, {});                            // OpReturn
  op(56, {});                             // OpFunctionEnd
  return words;
}

}  // namespace kiln::testing
