#include "session/compile_target.h"

#include <cstdio>

#include "session/execution_providers.h"
#include "session/session_config.h"

namespace kiln {
namespace {

std::string hex4(uint32_t value) {
  char text[16];
  std::snprintf(text, sizeof(text), "%04x", value);
  return text;
}

// Everything of a live device that makes its compiled pipelines its own: name, ids, driver and cache UUID.
std::string describeLiveDevice(const vk::DeviceInfo& device) {
  return "device " + device.name + " " + hex4(device.vendorId) + ":" + hex4(device.deviceId) + " driver " +
         std::to_string(device.driverId) + "/" + std::to_string(device.driverVersion) + " " + device.driverInfo +
         " cache " + device.pipelineCacheUuidHex();
}

}  // namespace

Result<epctx::CompileTarget> compileTargetOf(const SessionOptions& options) {
  KILN_ASSIGN_OR_RETURN(const SessionConfig config, parseSessionConfig(options));
  const ctxbin::ContextHooksLookup lookup = contextHooksOf(config.executionProviders);
  epctx::CompileTarget target;
  for (const std::string& provider : providerNamesFor(config.executionProviders)) {
    const ctxbin::EpContextHooks* hooks = lookup ? lookup(provider) : nullptr;
    if (!hooks) continue;  // an EP that stores no context (the CPU EP) compiles nothing device-specific
    const std::string toolchain = hooks->toolchainIdentity();
    if (!toolchain.empty()) target.toolchain += (target.toolchain.empty() ? "" : "; ") + provider + ": " + toolchain;
    if (!config.vulkan.targetProfile.empty()) continue;  // the profile's content is in the recorded options
    auto device = hooks->liveDevice(config.vulkan.device);
    const std::string described =
        device.isOk() ? describeLiveDevice(*device) : "unavailable (" + device.status().message() + ")";
    target.device += (target.device.empty() ? "" : "; ") + provider + ": " + described;
  }
  if (!config.vulkan.targetProfile.empty()) target.device = "profile " + epctx::recordedProfileValue(config.vulkan.targetProfile);
  return target;
}

}  // namespace kiln
