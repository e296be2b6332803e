// Records one run's work into a single command buffer (dispatches, copies, barriers, optional timestamps) and
// submits it once. Descriptors are pushed (VK_KHR_push_descriptor) or, without that extension, allocated from a
// pool that is reset per run. Not thread-safe: one stream per running partition.
#pragma once

#include <vulkan/vulkan.h>

#include <array>
#include <memory>
#include <span>
#include <vector>

#include "ep/vulkan/memory_allocator.h"
#include "ep/vulkan/pipeline_registry.h"
#include "kiln/status.h"

namespace kiln::vk {

class Device;

class CommandStream {
 public:
  static Result<std::unique_ptr<CommandStream>> create(std::shared_ptr<Device> device);
  ~CommandStream();

  Status begin();
  // Binds `pipeline`, its buffers (bindings 0..n-1) and push constants, dispatches, then a compute barrier.
  void dispatch(const Pipeline& pipeline, std::span<const BufferRange> buffers, const void* push, size_t pushBytes,
                std::array<uint32_t, 3> groups);
  // Buffer-to-buffer copy followed by a barrier that makes it visible to shaders and later copies.
  void copy(const BufferRange& from, const BufferRange& to, VkDeviceSize bytes);
  // Submits and waits; a run that recorded no command skips the submit. EP_FAIL on device loss or submit errors.
  Status submitAndWait();
  // Records a timestamp (when enabled with enableTimestamps); returns its index or -1.
  int timestamp();
  // Reserves timestamp slots for the next run (0 disables).
  Status enableTimestamps(uint32_t count);
  // Nanoseconds between timestamps a and b of the last submitted run.
  std::vector<uint64_t> readTimestamps(uint32_t count);
  size_t dispatchCount() const { return dispatches_; }

 private:
  explicit CommandStream(std::shared_ptr<Device> device) : device_(std::move(device)) {}
  void barrier();

  std::shared_ptr<Device> device_;
  VkCommandPool pool_ = VK_NULL_HANDLE;
  VkCommandBuffer commands_ = VK_NULL_HANDLE;
  VkFence fence_ = VK_NULL_HANDLE;
  VkDescriptorPool descriptorPool_ = VK_NULL_HANDLE;  // only without push descriptors
  uint32_t descriptorPoolSets_ = 0;
  std::vector<VkDescriptorPool> retiredPools_;
  VkQueryPool queries_ = VK_NULL_HANDLE;
  uint32_t queryCapacity_ = 0, queryUsed_ = 0;
  size_t dispatches_ = 0;
  size_t commandsRecorded_ = 0;  // dispatches, copies and timestamps since begin()
};

}  // namespace kiln::vk
