// Vulkan instance, physical-device discovery and logical devices. One process-wide instance; logical devices are
// shared by every session that picks the same physical device, so pipelines are created once per device.
#pragma once

#include <vulkan/vulkan.h>

#include <array>
#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "device/device_info.h"
#include "kiln/status.h"

namespace kiln::vk {

// All physical devices of the process-wide instance (creating it on first use). EP_FAIL when no Vulkan loader
// or driver is usable.
Result<std::vector<DeviceInfo>> enumerateDevices();

// Picks a device: `selector` is an index or a case-insensitive name substring; empty picks the first GPU, or the
// first CPU-type device when `allowCpu`. INVALID_ARGUMENT when the selector matches nothing (listing the devices).
Result<DeviceInfo> selectDevice(const std::string& selector, bool allowCpu);

class PipelineRegistry;
class MemoryAllocator;

// A logical device with one compute queue. Thread-safe: the queue is guarded by submitMutex().
class Device {
 public:
  // The shared logical device for physical device `index` (created on first request, open until the process ends).
  static Result<std::shared_ptr<Device>> acquire(uint32_t index);
  // Closes the open devices no session holds (their pipelines go with them): for a program that is done with
  // Vulkan for a while, or a measurement that must start from a closed device.
  static void releaseUnused();
  // Indices of the devices open now (held by sessions or kept for reuse), ascending.
  static std::vector<uint32_t> openIndices();
  ~Device();
  Device(const Device&) = delete;
  Device& operator=(const Device&) = delete;

  const DeviceInfo& info() const { return info_; }
  VkDevice handle() const { return device_; }
  VkPhysicalDevice physical() const { return physical_; }
  VkQueue queue() const { return queue_; }
  uint32_t queueFamily() const { return queueFamily_; }
  std::mutex& submitMutex() { return submitMutex_; }
  // Held for a partition's whole run (record, submit, wait, read back) and for an immediate upload: a run returns
  // ranges to the shared allocator while recording, before its commands execute, so no other session on this
  // device may take them (and write or read them) until that run has finished.
  std::recursive_mutex& memoryUseMutex() { return memoryUseMutex_; }
  PipelineRegistry& pipelines() { return *pipelines_; }
  MemoryAllocator& allocator() { return *allocator_; }
  // vkCmdPushDescriptorSetKHR when the device has VK_KHR_push_descriptor, else nullptr.
  PFN_vkCmdPushDescriptorSetKHR pushDescriptorFn() const { return pushDescriptor_; }
  // Milliseconds it took to create this logical device (0 when it was already created by another session).
  // How long creating the logical device took, for the first session that asks; 0 for later ones (they found the
  // device open).
  double claimCreateMs() { return createMs_.exchange(0); }

 private:
  Device() = default;
  Status initialize(uint32_t index);

  DeviceInfo info_;
  VkPhysicalDevice physical_ = VK_NULL_HANDLE;
  VkDevice device_ = VK_NULL_HANDLE;
  VkQueue queue_ = VK_NULL_HANDLE;
  uint32_t queueFamily_ = 0;
  std::mutex submitMutex_;
  std::recursive_mutex memoryUseMutex_;
  PFN_vkCmdPushDescriptorSetKHR pushDescriptor_ = nullptr;
  std::unique_ptr<PipelineRegistry> pipelines_;
  std::unique_ptr<MemoryAllocator> allocator_;
  std::atomic<double> createMs_{0};
};

// "VkResult -5 (VK_ERROR_..)" for messages.
std::string resultName(VkResult result);
// EP_FAIL "<what> failed: <result>" unless result is VK_SUCCESS.
Status check(VkResult result, const char* what);

}  // namespace kiln::vk
