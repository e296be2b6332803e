// A Vulkan device described as plain data, filled from a live device (the Vulkan EP's vulkan_device.h) or a device profile
// (device_profile.h). Nothing here needs the Vulkan runtime, so the context binary and EPContext layers use it too.
#pragma once

#include <array>
#include <cstdint>
#include <string>

#include "kiln/device.h"

namespace kiln::vk {

// What Kiln knows about a physical device: identity (for the context binary and `kiln devices`) and the
// features and limits kernels and shader defines depend on.
struct DeviceInfo {
  uint32_t index = 0;  // position in vkEnumeratePhysicalDevices order
  std::string name;
  VulkanDeviceType type = VulkanDeviceType::OTHER;
  uint32_t vendorId = 0, deviceId = 0;
  uint32_t apiVersion = 0, driverVersion = 0;
  uint32_t driverId = 0;
  std::string driverName, driverInfo;
  std::array<uint8_t, 16> pipelineCacheUuid{};
  uint32_t subgroupSize = 1;
  bool subgroupArithmetic = false;
  bool shaderFloat16 = false, storageBuffer16Bit = false;
  bool shaderInt64 = false, storageBuffer8Bit = false;
  bool pushDescriptors = false;
  uint64_t maxStorageBufferRange = 0;
  uint32_t maxPushConstantsSize = 0;
  uint32_t maxComputeWorkGroupInvocations = 0;
  std::array<uint32_t, 3> maxComputeWorkGroupCount{};
  std::array<uint32_t, 3> maxComputeWorkGroupSize{};
  uint64_t minStorageBufferOffsetAlignment = 4;
  uint64_t deviceLocalBytes = 0;
  bool unifiedMemory = false;     // a memory type that is both device-local and host-visible (no staging needed)
  bool timestampQueries = false;  // the compute queue supports timestamps
  float timestampPeriodNs = 0;

  bool isCpu() const { return type == VulkanDeviceType::CPU; }
  // "1.3.239"
  std::string apiVersionString() const;
  // 32 lower-case hex digits.
  std::string pipelineCacheUuidHex() const;
};

}  // namespace kiln::vk
