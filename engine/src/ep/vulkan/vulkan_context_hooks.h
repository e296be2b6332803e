// The Vulkan EP's answers to the framework's context-binary questions (context_binary/ep_context_hooks.h): what a
// binary of its partitions holds (target device or profile, push constants, the driver's pipeline cache), which
// live device judges a binary, and how an `optimal` binary's driver cache reaches that device.
#pragma once

#include <memory>

#include "context_binary/ep_context_hooks.h"

namespace kiln::vk {

// Stateless: one instance serves every session.
std::shared_ptr<const ctxbin::EpContextHooks> vulkanContextHooks();

}  // namespace kiln::vk
