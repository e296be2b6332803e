// The driver's pipeline cache (one VkPipelineCache per device, in PipelineRegistry) as seen by context binaries:
// a binary compiled on a live device stores the device's cache data, and an `optimal` binary (same device and
// driver) gives it back before its pipelines are created.
#pragma once

#include <cstddef>
#include <memory>
#include <span>
#include <vector>

#include "ep/vulkan/vulkan_device.h"
#include "kiln/status.h"

namespace kiln::vk {

// vkGetPipelineCacheData of the live device `device` describes (matched by identity: vendor, device, name,
// driverInfo, pipeline-cache UUID). Empty when that device has no logical device open or no cache yet.
Result<std::vector<std::byte>> driverCacheDataOf(const DeviceInfo& device);

// Merges `blob` into live device `device.index`'s VkPipelineCache. A blob whose VkPipelineCacheHeaderVersionOne
// does not match the device is dropped with a log line: the driver cache is only ever an optimization. Returns the
// opened device (null when the blob was dropped): the caller keeps it until its session has acquired the device,
// else the device, and the merged cache with it, would be destroyed before any pipeline used it.
std::shared_ptr<Device> attachDriverCacheTo(const DeviceInfo& device, std::span<const std::byte> blob);

}  // namespace kiln::vk
