// Device tensors of the Vulkan EP (kiln::DeviceBuffer, tensor.h): a partition output left in device memory (an
// IoBinding output bound to DEVICE) and read in place when it comes back as an input on the same device.
#pragma once

#include <memory>
#include <string>

#include "ep/vulkan/vk_kernel.h"
#include "ep/vulkan/vulkan_device.h"
#include "kiln/tensor.h"

namespace kiln::vk {

class VulkanDeviceBuffer final : public DeviceBuffer {
 public:
  // Holds `storage` (and its device) until the last tensor over it goes.
  VulkanDeviceBuffer(std::shared_ptr<Device> device, std::shared_ptr<DeviceStorage> storage);
  ~VulkanDeviceBuffer() override;

  const std::string& location() const override { return location_; }
  uint64_t bytes() const override { return storage_->range.size; }
  // Reads the range in place where device memory is host-visible, else through a staging copy.
  Status read(void* destination, uint64_t bytes) const override;

  const Device& device() const { return *device_; }
  const std::shared_ptr<DeviceStorage>& storage() const { return storage_; }

 private:
  std::shared_ptr<Device> device_;
  std::shared_ptr<DeviceStorage> storage_;
  std::string location_;
};

// A device tensor over `value`'s device storage (which it shares).
Tensor deviceTensor(const std::shared_ptr<Device>& device, const VkTensor& value);

// The Vulkan storage of `tensor` when it is a device tensor of `device`; null otherwise.
std::shared_ptr<DeviceStorage> storageOn(const Device& device, const Tensor& tensor);

}  // namespace kiln::vk
