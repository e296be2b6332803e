// kiln/environment.h: the process-wide registries, reached through the components that own them.
#include "kiln/environment.h"

#include "ep/cpu/thread_pool.h"
#include "ep/vulkan/vulkan_device.h"
#include "session/epcontext_generation.h"

namespace kiln {

std::vector<uint32_t> openVulkanDevices() { return vk::Device::openIndices(); }

void releaseUnusedDevices() { vk::Device::releaseUnused(); }

std::vector<int> liveThreadPools() { return cpu::ThreadPool::liveSharedPools(); }

size_t pendingShareGroupMembers() { return epctx::pendingShareGroupMembers(); }

void discardPendingShareGroup() { epctx::discardPendingShareGroup(); }

}  // namespace kiln
