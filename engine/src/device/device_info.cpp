// DeviceInfo's text forms. Only Vulkan's version macros: code that describes devices (profiles, the context binary,
// its sanitizer target) does not link the Vulkan runtime.
#include "device/device_info.h"

#include <vulkan/vulkan.h>

#include <cstdio>

namespace kiln {

const char* vulkanDeviceTypeName(VulkanDeviceType type) {
  switch (type) {
    case VulkanDeviceType::DISCRETE: return "discrete";
    case VulkanDeviceType::INTEGRATED: return "integrated";
    case VulkanDeviceType::VIRTUAL: return "virtual";
    case VulkanDeviceType::CPU: return "cpu";
    case VulkanDeviceType::OTHER: return "other";
  }
  return "other";
}

Result<VulkanDeviceType> parseVulkanDeviceType(std::string_view text) {
  for (auto type : {VulkanDeviceType::DISCRETE, VulkanDeviceType::INTEGRATED, VulkanDeviceType::VIRTUAL,
                    VulkanDeviceType::CPU, VulkanDeviceType::OTHER}) {
    if (text == vulkanDeviceTypeName(type)) return type;
  }
  return Status(StatusCode::INVALID_ARGUMENT, "a Vulkan device type is discrete, integrated, virtual, cpu or other, "
                                              "got '" + std::string(text) + "'");
}

}  // namespace kiln

namespace kiln::vk {

std::string DeviceInfo::pipelineCacheUuidHex() const {
  std::string text;
  char hex[3];
  for (uint8_t byte : pipelineCacheUuid) {
    std::snprintf(hex, sizeof hex, "%02x", byte);
    text += hex;
  }
  return text;
}

std::string DeviceInfo::apiVersionString() const {
  return std::to_string(VK_API_VERSION_MAJOR(apiVersion)) + "." + std::to_string(VK_API_VERSION_MINOR(apiVersion)) +
         "." + std::to_string(VK_API_VERSION_PATCH(apiVersion));
}

}  // namespace kiln::vk
