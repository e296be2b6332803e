#include "session/execution_providers.h"

#include <algorithm>
#include <mutex>
#include <optional>

#include "ep/cpu/cpu_execution_provider.h"
#include "ep/cpu/host_evaluator.h"
#include "ep/vulkan/vulkan_context_hooks.h"
#include "ep/vulkan/vulkan_device.h"
#include "ep/vulkan/vulkan_execution_provider.h"
#include "kiln/environment.h"
#include "kiln/provider_names.h"
#include "session/session_config.h"
#include "util/log.h"

namespace kiln {
namespace {

vk::VulkanEpConfig vulkanEpConfig(const SessionConfig& config) {
  vk::VulkanEpConfig ep;
  ep.inputShapes = config.inputShapes.shapes;
  for (const auto& [param, text] : config.inputShapes.freeDimOverrides) {
    // A bad text is refused by resolveInputShapes when the graph uses the dimension; unused, it changes nothing.
    if (auto size = parseFreeDimOverride(param, text); size.isOk()) ep.freeDims[param] = *size;
  }
  ep.device = config.vulkan.device;
  ep.targetProfile = config.vulkan.targetProfile;
  ep.pipelineCachePath = config.vulkan.pipelineCachePath;
  ep.profile = config.vulkan.profile;
  ep.autotune = config.vulkan.autotune;
  ep.fp16 = config.vulkan.fp16;
  return ep;
}

struct Registry {
  std::mutex mutex;
  std::vector<ProviderRegistration> entries;
};

Registry& registry() {
  static Registry instance;
  return instance;
}

std::optional<ProviderRegistration> registrationOf(const std::string& shortName) {
  Registry& r = registry();
  std::lock_guard lock(r.mutex);
  for (const auto& entry : r.entries) {
    if (entry.shortName == shortName) return entry;
  }
  return std::nullopt;
}

}  // namespace

Status registerExecutionProvider(ProviderRegistration registration) {
  if (registration.shortName == "cpu" || registration.shortName == kVulkanProviderShortName) {
    return Status(StatusCode::INVALID_ARGUMENT, "'" + registration.shortName + "' is a built-in execution provider");
  }
  if (registration.shortName.empty() || registration.name.empty() || !registration.create) {
    return Status(StatusCode::INVALID_ARGUMENT, "an execution provider registration needs a short name, a name and a factory");
  }
  Registry& r = registry();
  std::lock_guard lock(r.mutex);
  std::erase_if(r.entries, [&](const auto& entry) { return entry.shortName == registration.shortName; });
  r.entries.push_back(std::move(registration));
  return Status::ok();
}

bool isKnownProviderShortName(const std::string& shortName) {
  return shortName == "cpu" || shortName == kVulkanProviderShortName || registrationOf(shortName).has_value();
}

std::string knownProviderShortNames() {
  std::string names = std::string(kVulkanProviderShortName) + ", cpu";
  Registry& r = registry();
  std::lock_guard lock(r.mutex);
  for (const auto& entry : r.entries) names += ", " + entry.shortName;
  return names;
}

std::vector<std::string> providerNamesFor(const std::vector<std::string>& shortNames) {
  std::vector<std::string> names;
  for (const auto& shortName : shortNames) {
    if (shortName == "cpu") break;  // EPs after the CPU EP get nothing (createProviders)
    if (shortName == kVulkanProviderShortName) {
      names.push_back(kVulkanExecutionProvider);
    } else if (auto entry = registrationOf(shortName)) {
      names.push_back(entry->name);
    }
  }
  names.push_back(kCpuExecutionProvider);
  return names;
}

namespace {

// Hooks by short name; null for the CPU EP (it stores no context) and unknown names.
std::shared_ptr<const ctxbin::EpContextHooks> hooksOf(const std::string& shortName) {
  if (shortName == kVulkanProviderShortName) return vk::vulkanContextHooks();
  auto entry = registrationOf(shortName);
  return entry ? entry->hooks : nullptr;
}

ctxbin::ContextHooksLookup lookupOver(const std::vector<std::string>& shortNames) {
  std::vector<std::shared_ptr<const ctxbin::EpContextHooks>> hooks;
  for (const auto& shortName : shortNames) {
    if (shortName == "cpu") break;
    if (auto h = hooksOf(shortName)) hooks.push_back(std::move(h));
  }
  return [hooks](const std::string& nameOrSource) -> const ctxbin::EpContextHooks* {
    for (const auto& h : hooks) {
      if (h->executionProvider() == nameOrSource || h->claimsSource(nameOrSource)) return h.get();
    }
    return nullptr;
  };
}

}  // namespace

ctxbin::ContextHooksLookup contextHooksOf(const std::vector<std::string>& shortNames) { return lookupOver(shortNames); }

ctxbin::ContextHooksLookup allContextHooks() {
  std::vector<std::string> all{kVulkanProviderShortName};
  Registry& r = registry();
  {
    std::lock_guard lock(r.mutex);
    for (const auto& entry : r.entries) all.push_back(entry.shortName);
  }
  return lookupOver(all);
}

Result<ProviderSet> createProviders(const SessionConfig& config) {

  ProviderSet set;
  bool haveCpu = false;
  for (const auto& entry : config.executionProviders) {
    if (entry == "cpu") {
      set.providers.push_back(std::make_unique<cpu::CpuExecutionProvider>());
      haveCpu = true;
      break;  // the CPU EP takes every node it can: EPs after it would get nothing
    }
    set.nonCpuRequested = true;
    if (entry != kVulkanProviderShortName) {
      auto registered = registrationOf(entry);
      if (!registered) return Status(StatusCode::INVALID_ARGUMENT, "unknown execution provider '" + entry + "'");
      set.providers.push_back(registered->create());
      continue;
    }
    // Contracts: a CPU-type device (lavapipe) only when asked for, by the EP list or by naming a device.
    const bool explicitlyRequested = config.executionProvidersSet || config.vulkan.deviceSet;
    KILN_ASSIGN_OR_RETURN(std::unique_ptr<ExecutionProvider> vulkan,
                          vk::createVulkanExecutionProvider(vulkanEpConfig(config), explicitlyRequested,
                                                            cpu::hostEvaluator()));
    if (vulkan) {
      set.providers.push_back(std::move(vulkan));
    } else {
      log::debug("no Vulkan device for the Vulkan execution provider; using the next provider");
    }
  }
  // Like ONNX Runtime, the CPU EP is always there as the last resort; session.disable_cpu_ep_fallback turns
  // any node that lands on it into an error instead.
  if (!haveCpu) set.providers.push_back(std::make_unique<cpu::CpuExecutionProvider>());
  return set;
}

// kiln/environment.h: the Vulkan EP's process-wide device registry.
std::vector<uint32_t> openVulkanDevices() { return vk::Device::openIndices(); }

void releaseUnusedDevices() { vk::Device::releaseUnused(); }

ProviderSet providerSetFrom(std::vector<std::unique_ptr<ExecutionProvider>> providers) {
  ProviderSet set;
  set.providers = std::move(providers);
  set.nonCpuRequested = std::any_of(set.providers.begin(), set.providers.end(), [](const auto& ep) {
    return ep->name() != cpu::CpuExecutionProvider::kName;
  });
  return set;
}

}  // namespace kiln
