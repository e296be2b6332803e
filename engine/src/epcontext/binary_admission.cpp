#include "epcontext/binary_admission.h"

#include "context_binary/verdict.h"
#include "device/device_profile.h"
#include "ep/vulkan/driver_cache.h"
#include "ep/vulkan/shader_library.h"
#include "ep/vulkan/vulkan_device.h"
#include "ep/vulkan/vulkan_execution_provider.h"
#include "kiln/config_keys.h"
#include "util/config_value.h"
#include "util/log.h"
#include "util/stopwatch.h"

namespace kiln {

Result<ctxbin::BinaryContents> binaryContentsFor(std::vector<CompiledPartition> partitions) {
  if (partitions.empty()) return Status(StatusCode::INVALID_ARGUMENT, "no compiled partitions to store");
  ctxbin::BinaryContents contents;
  const CompiledPartition& first = partitions.front();
  if (first.executionProvider != vk::kVulkanExecutionProviderName || first.targetProfile.empty()) {
    return Status(StatusCode::INVALID_ARGUMENT, "partition '" + first.name + "' of " + first.executionProvider +
                                                    " has nothing a context binary stores");
  }
  KILN_ASSIGN_OR_RETURN(contents.target, vk::parseDeviceProfile(first.targetProfile, "partition " + first.name));
  contents.requiredPushConstantBytes = vk::kPushConstantBytes;
  contents.targetKind = first.targetIsProfile ? ctxbin::TargetKind::PROFILE : ctxbin::TargetKind::DEVICE;
  if (contents.targetKind == ctxbin::TargetKind::DEVICE) {
    // The producer's driver cache, with the pipelines of these partitions in it: what makes a load `optimal`.
    KILN_ASSIGN_OR_RETURN(contents.driverCache, vk::driverCacheDataOf(contents.target));
  }
  contents.partitions = std::move(partitions);
  return contents;
}

Result<CompatibilityVerdict> admitBinary(const ctxbin::ContextBinary& binary, const SessionOptions& options,
                                         SessionTimings& timings, std::vector<std::shared_ptr<const void>>& keepAlive) {
  Stopwatch deviceClock;  // the first use of Vulkan in the process creates the instance: device work, not validation
  KILN_ASSIGN_OR_RETURN(const vk::DeviceInfo device, vk::selectDevice(configValue(options, config::kVulkanDevice), true));
  timings.device_create_ms += deviceClock.elapsedMs();
  Stopwatch validateClock;
  CompatibilityVerdict verdict =
      ctxbin::judge(binary, device, "device " + std::to_string(device.index) + " (" + device.name + ")");
  timings.binary_validate_ms += validateClock.elapsedMs();
  auto reasons = [&] {
    std::string text;
    for (const auto& r : verdict.reasons) text += (text.empty() ? "" : "; ") + r;
    return text;
  };
  const std::string& origin = binary.origin();
  if (verdict.compatibility == Compatibility::UNSUPPORTED) {
    return Status(StatusCode::INVALID_GRAPH, "context binary " + origin + " is unsupported on " + verdict.against + ": " + reasons());
  }
  if (verdict.compatibility == Compatibility::OPTIMAL) {
    // Before the session creates pipelines; the device stays open (keepAlive) until the session acquires it.
    if (auto opened = vk::attachDriverCacheTo(device, binary.driverCache())) keepAlive.push_back(std::move(opened));
  }
  if (verdict.compatibility == Compatibility::COMPATIBLE) {
    if (configValue(options, config::kFailOnSuboptimalCompiledModel) == "1") {
      return Status(StatusCode::FAIL, "context binary " + origin + " is compatible but not optimal on " + verdict.against +
                                          " (session.fail_on_suboptimal_compiled_model=1): " + reasons());
    }
    log::info("context binary {} is compatible, not optimal: {}", origin, reasons());
  }
  return verdict;
}

Result<std::pair<std::shared_ptr<const ctxbin::ContextBinary>, CompatibilityVerdict>> openCompiledBinary(
    const std::string& path, const SessionOptions& options, SessionTimings& timings,
    std::vector<std::shared_ptr<const void>>& keepAlive) {
  Stopwatch readClock;
  // Opening validates the header, the section table and every section hash (the validate share is most of it).
  auto binary = ctxbin::ContextBinary::open(path);
  timings.binary_read_ms += readClock.elapsedMs();
  if (!binary.isOk()) return binary.status();
  KILN_ASSIGN_OR_RETURN(CompatibilityVerdict verdict, admitBinary(*binary.value(), options, timings, keepAlive));
  return std::make_pair(std::move(binary).value(), std::move(verdict));
}

std::string describeDevice(const vk::DeviceInfo& device) {
  return "device " + std::to_string(device.index) + " (" + device.name + ", " + device.driverInfo + ")";
}

// kiln/context_binary.h: the live device is the one a compile would pick (lavapipe included).
Result<CompatibilityVerdict> checkContextBinary(const std::string& path, const std::string& deviceSelector) {
  KILN_ASSIGN_OR_RETURN(const vk::DeviceInfo device, vk::selectDevice(deviceSelector, true));
  return ctxbin::judgeFile(path, device, describeDevice(device));
}

Result<CompatibilityVerdict> checkContextBinary(std::span<const std::byte> bytes, const std::string& origin,
                                                const std::string& deviceSelector) {
  KILN_ASSIGN_OR_RETURN(const vk::DeviceInfo device, vk::selectDevice(deviceSelector, true));
  return ctxbin::judgeBytes(bytes, origin, device, describeDevice(device));
}

}  // namespace kiln
