// The Vulkan devices Kiln can compile for and run on: identity (what a context binary records) and the features
// and limits kernels depend on.
#pragma once

#include "kiln/export.h"

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "kiln/status.h"

namespace kiln {

// VkPhysicalDeviceType, as Kiln names it.
enum class VulkanDeviceType { DISCRETE, INTEGRATED, VIRTUAL, CPU, OTHER };

// "discrete", "integrated", "virtual", "cpu" or "other": the spelling in JSON and device profiles.
KILN_EXPORT const char* vulkanDeviceTypeName(VulkanDeviceType type);
// Parses a spelling of vulkanDeviceTypeName; INVALID_ARGUMENT naming the accepted spellings for anything else.
KILN_EXPORT Result<VulkanDeviceType> parseVulkanDeviceType(std::string_view text);

struct KILN_EXPORT VulkanDeviceDescription {
  uint32_t index = 0;          // what kiln.vulkan.device accepts (or a name substring)
  std::string name;
  VulkanDeviceType type = VulkanDeviceType::OTHER;
  uint32_t vendorId = 0, deviceId = 0;
  std::string apiVersion;      // "1.3.239"
  uint32_t driverVersion = 0;
  uint32_t driverId = 0;
  std::string driverName, driverInfo;
  std::string pipelineCacheUuid;  // 32 hex digits
  uint32_t subgroupSize = 0;
  bool subgroupArithmetic = false, shaderFloat16 = false, storageBuffer16Bit = false, storageBuffer8Bit = false;
  bool shaderInt64 = false, pushDescriptors = false, unifiedMemory = false, timestampQueries = false;
  uint64_t maxStorageBufferRange = 0, deviceLocalBytes = 0;
  uint32_t maxPushConstantsSize = 0, maxComputeWorkGroupInvocations = 0;
  // Would a session use it without being asked (a GPU), or only on request (a CPU implementation such as lavapipe)?
  bool usedByDefault = false;
};

// Every Vulkan 1.1+ device with a compute queue. EP_FAIL when there is no Vulkan loader or driver.
KILN_EXPORT Result<std::vector<VulkanDeviceDescription>> listVulkanDevices();

// The device profile (JSON: identity, features, limits) of live device `index`: what `kiln devices --profile`
// prints and what a compile for a device that is not present reads. INVALID_ARGUMENT for an unknown index.
KILN_EXPORT Result<std::string> vulkanDeviceProfile(uint32_t index);
// Reads a device profile file into the description of the device it stands for. NO_SUCHFILE when unreadable;
// INVALID_ARGUMENT naming the field when malformed or of an unknown format.
KILN_EXPORT Result<VulkanDeviceDescription> readVulkanDeviceProfile(const std::string& path);

// Op types the Vulkan EP has kernels for (support still depends on attributes, types and shapes).
KILN_EXPORT std::vector<std::string> vulkanKernelOpTypes();

}  // namespace kiln
