// DeviceInfo's text forms. Only Vulkan's version macros: code that describes devices (profiles, the context binary,
// its sanitizer target) does not link the Vulkan runtime.
#include "device/device_info.h"

#include <vulkan/vulkan.h>

#include <cstdio>

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
