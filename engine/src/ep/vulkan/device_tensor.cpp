#include "ep/vulkan/device_tensor.h"

#include <algorithm>
#include <cstring>
#include <mutex>

#include "ep/vulkan/command_stream.h"
#include "ep/vulkan/memory_allocator.h"
#include "kiln/provider_names.h"

namespace kiln::vk {

VulkanDeviceBuffer::VulkanDeviceBuffer(std::shared_ptr<Device> device, std::shared_ptr<DeviceStorage> storage)
    : device_(std::move(device)), storage_(std::move(storage)),
      location_(std::string(kVulkanExecutionProvider) + ":" + std::to_string(device_->info().index) + " (" +
                device_->info().name + ")") {}

VulkanDeviceBuffer::~VulkanDeviceBuffer() {
  // The range goes back to the shared allocator: not while a run on this device is recording (Device::memoryUseMutex).
  std::lock_guard lock(device_->memoryUseMutex());
  storage_.reset();
}

Status VulkanDeviceBuffer::read(void* destination, uint64_t bytes) const {
  bytes = std::min<uint64_t>(bytes, storage_->range.size);
  if (bytes == 0) return Status::ok();
  std::lock_guard lock(device_->memoryUseMutex());
  const BufferRange& range = storage_->range;
  if (range.mapped) {
    std::memcpy(destination, range.mapped, bytes);
    return Status::ok();
  }
  MemoryAllocator& allocator = device_->allocator();
  KILN_ASSIGN_OR_RETURN(BufferRange staging, allocator.allocateStaging(bytes));
  DeviceStorage stagingOwner{&allocator, staging};
  KILN_ASSIGN_OR_RETURN(auto stream, CommandStream::create(device_));
  KILN_RETURN_IF_ERROR(stream->begin());
  stream->copy(range, staging, bytes);
  KILN_RETURN_IF_ERROR(stream->submitAndWait());
  std::memcpy(destination, staging.mapped, bytes);
  return Status::ok();
}

Tensor deviceTensor(const std::shared_ptr<Device>& device, const VkTensor& value) {
  return Tensor::onDevice(value.dtype, value.shape, std::make_shared<VulkanDeviceBuffer>(device, value.storage));
}

std::shared_ptr<DeviceStorage> storageOn(const Device& device, const Tensor& tensor) {
  const auto* buffer = dynamic_cast<const VulkanDeviceBuffer*>(tensor.deviceBuffer().get());
  if (!buffer || &buffer->device() != &device) return nullptr;
  return buffer->storage();
}

}  // namespace kiln::vk
