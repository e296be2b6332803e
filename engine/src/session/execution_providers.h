// The session's execution providers, created from kiln.execution_providers before the model loads (so a device
// comes up while the model is read).
#pragma once

#include <memory>
#include <vector>

#include "context_binary/ep_context_hooks.h"
#include "ep/execution_provider.h"
#include "kiln/session_options.h"

namespace kiln {

struct ProviderSet {
  std::vector<std::unique_ptr<ExecutionProvider>> providers;  // preference order; the CPU EP is always last
  // The configuration asked for a non-CPU EP (explicitly, or by default): session.disable_cpu_ep_fallback then
  // applies. A list of just "cpu" means the caller wants the CPU EP, so nothing counts as a fallback.
  bool nonCpuRequested = false;
};

// Creates the EPs that kiln.execution_providers names (default "vulkan,cpu") and this build and machine can
// provide, then the CPU EP as the fallback when the list does not name it. INVALID_ARGUMENT for an unknown name;
// the Vulkan EP's error (EP_FAIL) when it was asked for explicitly and cannot start.
Result<ProviderSet> createProviders(const SessionOptions& options);

// The hooks of the EP whose partitions context binaries store (the Vulkan EP): how epcontext/ exports, admits and
// judges binaries without naming a device API.
const ctxbin::EpContextHooks& contextHooks();

// The same set for providers a caller built (tests): nonCpuRequested when any of them is not the CPU EP.
ProviderSet providerSetFrom(std::vector<std::unique_ptr<ExecutionProvider>> providers);

}  // namespace kiln
