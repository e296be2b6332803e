// Data for pipeline cache file tests that need no Vulkan device: lavapipe 22.3.6's identity as measured
// (env-notes.md), a matching VkPipelineCacheHeaderVersionOne blob, and small SPIR-V-shaped modules.
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

// A SPIR-V-shaped module (magic, version, generator, bound, schema, then `length` payload words from `seed`).
inline std::vector<uint32_t> fakeSpirv(uint32_t seed, size_t length = 8) {
  std::vector<uint32_t> words = {0x07230203, 0x00010300, 0, 16, 0};
  for (size_t i = 0; i < length; ++i) words.push_back(seed * 2654435761u + static_cast<uint32_t>(i));
  return words;
}

}  // namespace kiln::testing
