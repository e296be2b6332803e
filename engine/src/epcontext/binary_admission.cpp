#include "epcontext/binary_admission.h"

#include "util/log.h"
#include "util/stopwatch.h"

namespace kiln {

Result<CompatibilityVerdict> admitBinary(const ctxbin::ContextBinary& binary, const AdmissionPolicy& policy,
                                         SessionTimings& timings, std::vector<std::shared_ptr<const void>>& keepAlive) {
  Stopwatch deviceClock;  // the first use of Vulkan in the process creates the instance: device work, not validation
  KILN_ASSIGN_OR_RETURN(const std::string provider, binary.executionProvider());
  const ctxbin::EpContextHooks* hooks = policy.providers ? policy.providers(provider) : nullptr;
  if (!hooks) {
    return Status(StatusCode::NOT_IMPLEMENTED, "context binary " + binary.origin() + " holds partitions of " + provider +
                                                   ", which this session does not hold");
  }
  KILN_ASSIGN_OR_RETURN(const vk::DeviceInfo device, hooks->liveDevice(policy.deviceSelector));
  timings.device_create_ms += deviceClock.elapsedMs();
  Stopwatch validateClock;
  CompatibilityVerdict verdict =
      hooks->judgeContext(binary, device, "device " + std::to_string(device.index) + " (" + device.name + ")");
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
    if (auto opened = hooks->attachDriverCache(device, binary)) keepAlive.push_back(std::move(opened));
  }
  if (verdict.compatibility == Compatibility::COMPATIBLE) {
    if (policy.failOnSuboptimal) {
      return Status(StatusCode::FAIL, "context binary " + origin + " is compatible but not optimal on " + verdict.against +
                                          " (session.fail_on_suboptimal_compiled_model=1): " + reasons());
    }
    log::info("context binary {} is compatible, not optimal: {}", origin, reasons());
  }
  return verdict;
}

Result<std::pair<std::shared_ptr<const ctxbin::ContextBinary>, CompatibilityVerdict>> openCompiledBinary(
    const std::string& path, const AdmissionPolicy& policy, SessionTimings& timings,
    std::vector<std::shared_ptr<const void>>& keepAlive) {
  Stopwatch readClock;
  // Opening validates the header, the section table and every section hash (the validate share is most of it).
  auto binary = ctxbin::ContextBinary::open(path);
  timings.binary_read_ms += readClock.elapsedMs();
  if (!binary.isOk()) return binary.status();
  KILN_ASSIGN_OR_RETURN(CompatibilityVerdict verdict, admitBinary(*binary.value(), policy, timings, keepAlive));
  return std::make_pair(std::move(binary).value(), std::move(verdict));
}

std::string describeDevice(const vk::DeviceInfo& device) {
  return "device " + std::to_string(device.index) + " (" + device.name + ", " + device.driverInfo + ")";
}

}  // namespace kiln
