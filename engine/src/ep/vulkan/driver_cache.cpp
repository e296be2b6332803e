#include "ep/vulkan/driver_cache.h"

#include "ep/vulkan/pipeline_cache.h"
#include "ep/vulkan/pipeline_registry.h"
#include "util/log.h"

namespace kiln::vk {

Result<std::vector<std::byte>> driverCacheDataOf(const DeviceInfo& device) {
  KILN_ASSIGN_OR_RETURN(const std::vector<DeviceInfo> devices, enumerateDevices());
  for (const auto& live : devices) {
    const bool same = live.vendorId == device.vendorId && live.deviceId == device.deviceId && live.name == device.name &&
                      live.driverInfo == device.driverInfo && live.pipelineCacheUuid == device.pipelineCacheUuid;
    if (!same) continue;
    // Shared with the sessions that compiled on it (Device::acquire hands out the open logical device).
    KILN_ASSIGN_OR_RETURN(std::shared_ptr<Device> open, Device::acquire(live.index));
    return open->pipelines().driverCacheData();
  }
  return std::vector<std::byte>();
}

std::shared_ptr<Device> attachDriverCacheTo(const DeviceInfo& device, std::span<const std::byte> blob) {
  if (const std::string why = validateDriverBlob(blob, device); !why.empty()) {
    log::info("context binary driver cache not used: {}", why);
    return nullptr;
  }
  auto open = Device::acquire(device.index);
  if (!open.isOk()) return nullptr;  // the session's own device creation reports this
  if (Status attached = open.value()->pipelines().attachDriverCache(blob); !attached.isOk()) {
    log::warn("context binary driver cache not used: {}", attached.message());
  }
  return std::move(open).value();
}

}  // namespace kiln::vk
