// Device memory sub-allocation: large VkDeviceMemory chunks, each bound to one VkBuffer, handed out as
// (buffer, offset, size) ranges from a first-fit free list. Chunks stay allocated for reuse by later runs.
#pragma once

#include <vulkan/vulkan.h>

#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <vector>

#include "kiln/status.h"

namespace kiln::vk {

class Device;

// A sub-allocated range. `mapped` points at the range's first byte when its memory is host-visible.
struct BufferRange {
  VkBuffer buffer = VK_NULL_HANDLE;
  VkDeviceSize offset = 0;
  VkDeviceSize size = 0;
  void* mapped = nullptr;
  int32_t chunk = -1;  // owner chunk; -1 for an empty range
  bool pool = false;   // staging pool (true) or device pool (false)

  bool valid() const { return buffer != VK_NULL_HANDLE; }
};

class MemoryAllocator {
 public:
  explicit MemoryAllocator(Device& device);
  ~MemoryAllocator();

  // Device storage for tensors (device-local; host-visible too when the device has unified memory).
  Result<BufferRange> allocateDevice(VkDeviceSize bytes);
  // Host-visible, coherent memory for uploads and downloads (only needed when device memory is not mappable).
  Result<BufferRange> allocateStaging(VkDeviceSize bytes);
  void release(const BufferRange& range);
  // True when device storage is host-visible: tensors are read and written in place, no staging copies.
  bool deviceMemoryMappable() const { return deviceMappable_; }
  // Bytes currently held in chunks (for diagnostics).
  uint64_t reservedBytes() const;

 private:
  struct Chunk {
    VkDeviceMemory memory = VK_NULL_HANDLE;
    VkBuffer buffer = VK_NULL_HANDLE;
    VkDeviceSize size = 0;
    void* mapped = nullptr;
    std::map<VkDeviceSize, VkDeviceSize> freeRanges;  // offset -> size, coalesced
  };
  struct Pool {
    uint32_t memoryType = UINT32_MAX;
    bool mappable = false;
    std::vector<Chunk> chunks;
  };

  Result<BufferRange> allocate(Pool& pool, bool staging, VkDeviceSize bytes);
  Status addChunk(Pool& pool, VkDeviceSize bytes);

  Device& device_;
  mutable std::mutex mutex_;
  Pool devicePool_, stagingPool_;
  bool deviceMappable_ = false;
  VkDeviceSize alignment_ = 256;
};

}  // namespace kiln::vk
