// kiln/environment.h: the process-wide registries, reached through the components that own them (the Vulkan
// device registry through session/execution_providers.cpp, the one place that names the Vulkan EP).
#include "kiln/environment.h"

#include "ep/cpu/thread_pool.h"
#include "session/epcontext_generation.h"

namespace kiln {

std::vector<int> liveThreadPools() { return cpu::ThreadPool::liveSharedPools(); }

size_t pendingShareGroupMembers() { return epctx::pendingShareGroupMembers(); }

void discardPendingShareGroup() { epctx::discardPendingShareGroup(); }

}  // namespace kiln
