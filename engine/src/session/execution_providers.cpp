#include "session/execution_providers.h"

#include <algorithm>
#include <cstdlib>

#include "ep/cpu/cpu_execution_provider.h"
#include "ep/cpu/host_evaluator.h"
#include "ep/vulkan/vulkan_context_hooks.h"
#include "ep/vulkan/vulkan_device.h"
#include "ep/vulkan/vulkan_execution_provider.h"
#include "kiln/environment.h"
#include "session/session_config.h"
#include "util/log.h"

namespace kiln {
namespace {

vk::VulkanEpConfig vulkanEpConfig(const SessionConfig& config) {
  vk::VulkanEpConfig ep;
  ep.inputShapes = config.inputShapes.shapes;
  for (const auto& [param, value] : config.inputShapes.freeDimOverrides) {
    char* end = nullptr;
    const long long size = std::strtoll(value.c_str(), &end, 10);
    if (end && *end == '\0' && size >= 0) ep.freeDims[param] = size;  // else: refused by resolveInputShapes
  }
  ep.device = config.vulkan.device;
  ep.targetProfile = config.vulkan.targetProfile;
  ep.pipelineCachePath = config.vulkan.pipelineCachePath;
  ep.profile = config.vulkan.profile;
  ep.autotune = config.vulkan.autotune;
  ep.fp16 = config.vulkan.fp16;
  return ep;
}

}  // namespace


Result<ProviderSet> createProviders(const SessionOptions& options) {
  KILN_ASSIGN_OR_RETURN(const SessionConfig config, parseSessionConfig(options));

  ProviderSet set;
  bool haveCpu = false;
  for (const auto& entry : config.executionProviders) {
    if (entry == "cpu") {
      set.providers.push_back(std::make_unique<cpu::CpuExecutionProvider>());
      haveCpu = true;
      break;  // the CPU EP takes every node it can: EPs after it would get nothing
    }
    set.nonCpuRequested = true;
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

const ctxbin::EpContextHooks& contextHooks() { return *vk::vulkanContextHooks(); }

ProviderSet providerSetFrom(std::vector<std::unique_ptr<ExecutionProvider>> providers) {
  ProviderSet set;
  set.providers = std::move(providers);
  set.nonCpuRequested = std::any_of(set.providers.begin(), set.providers.end(), [](const auto& ep) {
    return ep->name() != cpu::CpuExecutionProvider::kName;
  });
  return set;
}

}  // namespace kiln
