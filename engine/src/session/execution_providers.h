// The session's execution providers, created from kiln.execution_providers before the model loads (so a device
// comes up while the model is read).
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "context_binary/ep_context_hooks.h"
#include "ep/execution_provider.h"
#include "kiln/session_options.h"

namespace kiln {

struct SessionConfig;  // session/session_config.h

struct ProviderSet {
  std::vector<std::unique_ptr<ExecutionProvider>> providers;  // preference order; the CPU EP is always last
  // The configuration asked for a non-CPU EP (explicitly, or by default): session.disable_cpu_ep_fallback then
  // applies. A list of just "cpu" means the caller wants the CPU EP, so nothing counts as a fallback.
  bool nonCpuRequested = false;
};

// Creates the EPs that kiln.execution_providers names (default "vulkan,cpu") and this build and machine can
// provide, then the CPU EP as the fallback when the list does not name it. INVALID_ARGUMENT for an unknown name;
// the Vulkan EP's error (EP_FAIL) when it was asked for explicitly and cannot start.
Result<ProviderSet> createProviders(const SessionConfig& config);

// An execution provider the process can create beside the built-in ones ("cpu", "vulkan"), by its short name in
// kiln.execution_providers: how the tests add an EP that exists only in them (tests/engine/reference_ep.h) and
// run it through everything a built-in EP goes through.
struct ProviderRegistration {
  std::string shortName;  // "reference"
  std::string name;       // its ExecutionProvider::name()
  std::function<std::unique_ptr<ExecutionProvider>()> create;
  std::shared_ptr<const ctxbin::EpContextHooks> hooks;  // null: its partitions are not stored in context binaries
};
// Adds (or replaces, by short name) a registration. INVALID_ARGUMENT for a built-in short name or a missing part.
Status registerExecutionProvider(ProviderRegistration registration);

// Whether kiln.execution_providers may name `shortName`, and the names it may use ("vulkan, cpu, ...").
bool isKnownProviderShortName(const std::string& shortName);
std::string knownProviderShortNames();
// The EP names a session of these short names holds, in order, the CPU EP last when the list does not name it.
std::vector<std::string> providerNamesFor(const std::vector<std::string>& shortNames);

// The context hooks of the EPs a session of `shortNames` holds, found by EP name or EPContext `source`: how
// epcontext/ exports, admits, judges and describes binaries without naming a device API.
ctxbin::ContextHooksLookup contextHooksOf(const std::vector<std::string>& shortNames);
// The same over every EP this build can create (merging and inspecting need no session).
ctxbin::ContextHooksLookup allContextHooks();

// The same set for providers a caller built (tests): nonCpuRequested when any of them is not the CPU EP.
ProviderSet providerSetFrom(std::vector<std::unique_ptr<ExecutionProvider>> providers);

}  // namespace kiln
