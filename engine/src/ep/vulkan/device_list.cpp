// The public view of Vulkan devices (kiln/device.h) over the EP's DeviceInfo.
#include "device/device_profile.h"
#include "ep/vulkan/kernel_registry.h"
#include "ep/vulkan/vulkan_device.h"
#include "kiln/device.h"

namespace kiln {

namespace {

VulkanDeviceDescription describe(const vk::DeviceInfo& d) {
  VulkanDeviceDescription v;
  v.index = d.index;
  v.name = d.name;
  v.type = d.type;
  v.vendorId = d.vendorId;
  v.deviceId = d.deviceId;
  v.apiVersion = d.apiVersionString();
  v.driverVersion = d.driverVersion;
  v.driverId = d.driverId;
  v.driverName = d.driverName;
  v.driverInfo = d.driverInfo;
  v.pipelineCacheUuid = d.pipelineCacheUuidHex();
  v.subgroupSize = d.subgroupSize;
  v.subgroupArithmetic = d.subgroupArithmetic;
  v.shaderFloat16 = d.shaderFloat16;
  v.storageBuffer16Bit = d.storageBuffer16Bit;
  v.storageBuffer8Bit = d.storageBuffer8Bit;
  v.shaderInt64 = d.shaderInt64;
  v.pushDescriptors = d.pushDescriptors;
  v.unifiedMemory = d.unifiedMemory;
  v.timestampQueries = d.timestampQueries;
  v.maxStorageBufferRange = d.maxStorageBufferRange;
  v.deviceLocalBytes = d.deviceLocalBytes;
  v.maxPushConstantsSize = d.maxPushConstantsSize;
  v.maxComputeWorkGroupInvocations = d.maxComputeWorkGroupInvocations;
  v.usedByDefault = !d.isCpu();
  return v;
}

}  // namespace

Result<std::vector<VulkanDeviceDescription>> listVulkanDevices() {
  KILN_ASSIGN_OR_RETURN(const std::vector<vk::DeviceInfo> devices, vk::enumerateDevices());
  std::vector<VulkanDeviceDescription> out;
  for (const auto& d : devices) out.push_back(describe(d));
  return out;
}

Result<std::string> vulkanDeviceProfile(uint32_t index) {
  KILN_ASSIGN_OR_RETURN(const vk::DeviceInfo device, vk::selectDevice(std::to_string(index), true));
  return vk::deviceProfileJson(device);
}

Result<VulkanDeviceDescription> readVulkanDeviceProfile(const std::string& path) {
  KILN_ASSIGN_OR_RETURN(const vk::DeviceInfo device, vk::readDeviceProfile(path));
  return describe(device);
}

std::vector<std::string> vulkanKernelOpTypes() { return vk::kernelOpTypes(); }

}  // namespace kiln
