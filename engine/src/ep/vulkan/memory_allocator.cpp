#include "ep/vulkan/memory_allocator.h"

#include <algorithm>

#include "ep/vulkan/vulkan_device.h"

namespace kiln::vk {
namespace {

constexpr VkDeviceSize kChunkBytes = 64ull << 20;

VkDeviceSize alignUp(VkDeviceSize value, VkDeviceSize alignment) { return (value + alignment - 1) / alignment * alignment; }

// The first memory type with all of `required`, preferring one that also has `preferred`.
uint32_t findMemoryType(VkPhysicalDevice physical, VkMemoryPropertyFlags required, VkMemoryPropertyFlags preferred) {
  VkPhysicalDeviceMemoryProperties memory;
  vkGetPhysicalDeviceMemoryProperties(physical, &memory);
  uint32_t fallback = UINT32_MAX;
  for (uint32_t i = 0; i < memory.memoryTypeCount; ++i) {
    const VkMemoryPropertyFlags flags = memory.memoryTypes[i].propertyFlags;
    if ((flags & required) != required) continue;
    if ((flags & preferred) == preferred) return i;
    if (fallback == UINT32_MAX) fallback = i;
  }
  return fallback;
}

}  // namespace

MemoryAllocator::MemoryAllocator(Device& device) : device_(device) {
  const VkMemoryPropertyFlags host = VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT | VK_MEMORY_PROPERTY_HOST_COHERENT_BIT;
  // Device storage: device-local, and mappable too when the device offers such a type (integrated GPUs,
  // lavapipe, resizable BAR), so tensors need no staging copies there.
  devicePool_.memoryType = findMemoryType(device.physical(), VK_MEMORY_PROPERTY_DEVICE_LOCAL_BIT, host);
  if (devicePool_.memoryType == UINT32_MAX) devicePool_.memoryType = findMemoryType(device.physical(), 0, 0);
  VkPhysicalDeviceMemoryProperties memory;
  vkGetPhysicalDeviceMemoryProperties(device.physical(), &memory);
  devicePool_.mappable = (memory.memoryTypes[devicePool_.memoryType].propertyFlags & host) == host;
  deviceMappable_ = devicePool_.mappable;
  stagingPool_.memoryType = findMemoryType(device.physical(), host, VK_MEMORY_PROPERTY_HOST_CACHED_BIT);
  stagingPool_.mappable = true;
  alignment_ = std::max<VkDeviceSize>(256, device.info().minStorageBufferOffsetAlignment);
}

MemoryAllocator::~MemoryAllocator() {
  for (Pool* pool : {&devicePool_, &stagingPool_}) {
    for (Chunk& chunk : pool->chunks) {
      if (chunk.mapped) vkUnmapMemory(device_.handle(), chunk.memory);
      vkDestroyBuffer(device_.handle(), chunk.buffer, nullptr);
      vkFreeMemory(device_.handle(), chunk.memory, nullptr);
    }
  }
}

Status MemoryAllocator::addChunk(Pool& pool, VkDeviceSize bytes) {
  Chunk chunk;
  chunk.size = std::max(kChunkBytes, alignUp(bytes, alignment_));
  VkBufferCreateInfo bufferInfo{VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO};
  bufferInfo.size = chunk.size;
  bufferInfo.usage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT | VK_BUFFER_USAGE_TRANSFER_SRC_BIT | VK_BUFFER_USAGE_TRANSFER_DST_BIT;
  bufferInfo.sharingMode = VK_SHARING_MODE_EXCLUSIVE;
  KILN_RETURN_IF_ERROR(check(vkCreateBuffer(device_.handle(), &bufferInfo, nullptr, &chunk.buffer), "vkCreateBuffer"));
  VkMemoryRequirements requirements;
  vkGetBufferMemoryRequirements(device_.handle(), chunk.buffer, &requirements);
  VkMemoryAllocateInfo allocInfo{VK_STRUCTURE_TYPE_MEMORY_ALLOCATE_INFO};
  allocInfo.allocationSize = requirements.size;
  allocInfo.memoryTypeIndex = pool.memoryType;
  const VkResult result = vkAllocateMemory(device_.handle(), &allocInfo, nullptr, &chunk.memory);
  if (result != VK_SUCCESS) {
    vkDestroyBuffer(device_.handle(), chunk.buffer, nullptr);
    return Status(StatusCode::EP_FAIL, "cannot allocate " + std::to_string(chunk.size >> 20) +
                                           " MiB of Vulkan memory: " + resultName(result));
  }
  vkBindBufferMemory(device_.handle(), chunk.buffer, chunk.memory, 0);
  if (pool.mappable) {
    KILN_RETURN_IF_ERROR(check(vkMapMemory(device_.handle(), chunk.memory, 0, VK_WHOLE_SIZE, 0, &chunk.mapped), "vkMapMemory"));
  }
  chunk.freeRanges[0] = chunk.size;
  pool.chunks.push_back(std::move(chunk));
  return Status::ok();
}

Result<BufferRange> MemoryAllocator::allocate(Pool& pool, bool staging, VkDeviceSize bytes) {
  const VkDeviceSize size = alignUp(std::max<VkDeviceSize>(bytes, 4), alignment_);
  if (!staging && size > device_.info().maxStorageBufferRange) {
    return Status(StatusCode::EP_FAIL, "a tensor of " + std::to_string(bytes) + " bytes exceeds the device's "
                                       "storage-buffer range (" + std::to_string(device_.info().maxStorageBufferRange) + ")");
  }
  std::lock_guard lock(mutex_);
  for (int pass = 0; pass < 2; ++pass) {
    for (size_t c = 0; c < pool.chunks.size(); ++c) {
      Chunk& chunk = pool.chunks[c];
      for (auto it = chunk.freeRanges.begin(); it != chunk.freeRanges.end(); ++it) {
        if (it->second < size) continue;
        const VkDeviceSize offset = it->first;
        const VkDeviceSize remaining = it->second - size;
        chunk.freeRanges.erase(it);
        if (remaining > 0) chunk.freeRanges[offset + size] = remaining;
        BufferRange range;
        range.buffer = chunk.buffer;
        range.offset = offset;
        range.size = size;
        range.mapped = chunk.mapped ? static_cast<char*>(chunk.mapped) + offset : nullptr;
        range.chunk = static_cast<int32_t>(c);
        range.pool = staging;
        return range;
      }
    }
    if (pass == 0) KILN_RETURN_IF_ERROR(addChunk(pool, size));
  }
  return Status(StatusCode::EP_FAIL, "Vulkan memory allocator failed to place " + std::to_string(size) + " bytes");
}

Result<BufferRange> MemoryAllocator::allocateDevice(VkDeviceSize bytes) { return allocate(devicePool_, false, bytes); }

Result<BufferRange> MemoryAllocator::allocateStaging(VkDeviceSize bytes) { return allocate(stagingPool_, true, bytes); }

void MemoryAllocator::release(const BufferRange& range) {
  if (!range.valid() || range.chunk < 0) return;
  std::lock_guard lock(mutex_);
  Pool& pool = range.pool ? stagingPool_ : devicePool_;
  auto& ranges = pool.chunks[static_cast<size_t>(range.chunk)].freeRanges;
  auto [it, inserted] = ranges.emplace(range.offset, range.size);
  if (!inserted) return;  // double release: ignore rather than corrupt the list
  // Coalesce with the following and preceding free ranges.
  auto next = std::next(it);
  if (next != ranges.end() && it->first + it->second == next->first) {
    it->second += next->second;
    ranges.erase(next);
  }
  if (it != ranges.begin()) {
    auto prev = std::prev(it);
    if (prev->first + prev->second == it->first) {
      prev->second += it->second;
      ranges.erase(it);
    }
  }
}

uint64_t MemoryAllocator::reservedBytes() const {
  std::lock_guard lock(mutex_);
  uint64_t total = 0;
  for (const Pool* pool : {&devicePool_, &stagingPool_}) {
    for (const Chunk& chunk : pool->chunks) total += chunk.size;
  }
  return total;
}

}  // namespace kiln::vk
