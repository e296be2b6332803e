#include "context_binary/verdict.h"

#include "kiln/version.h"
#include "util/mapped_file.h"

namespace kiln {

const char* compatibilityName(Compatibility value) {
  switch (value) {
    case Compatibility::OPTIMAL: return "optimal";
    case Compatibility::COMPATIBLE: return "compatible";
    case Compatibility::UNSUPPORTED: return "unsupported";
  }
  return "unsupported";
}

namespace ctxbin {
namespace {

std::string hex(uint32_t v) {
  char text[16];
  std::snprintf(text, sizeof text, "0x%x", v);
  return text;
}

// Feature bits a device provides.
uint32_t deviceFeatures(const vk::DeviceInfo& d) {
  uint32_t bits = 0;
  if (d.subgroupArithmetic) bits |= kFeatureSubgroupArithmetic;
  if (d.shaderFloat16) bits |= kFeatureFloat16;
  if (d.shaderInt64) bits |= kFeatureInt64;
  if (d.storageBuffer8Bit) bits |= kFeatureStorage8Bit | kFeatureInt8;  // 8-bit storage access implies the type
  if (d.storageBuffer16Bit) bits |= kFeatureStorage16Bit | kFeatureInt16;
  return bits;
}

}  // namespace

Result<std::optional<CompatibilityVerdict>> judgeFormatVersion(const std::string& path, const std::string& against) {
  KILN_ASSIGN_OR_RETURN(std::shared_ptr<MappedFile> file, MappedFile::open(path));
  return judgeFormatVersion(file->bytes(), path, against);
}

Result<std::optional<CompatibilityVerdict>> judgeFormatVersion(std::span<const std::byte> bytes, const std::string& origin,
                                                               const std::string& against) {
  auto version = readFormatVersion(bytes);
  if (!version.isOk()) return version.status().withContext(origin);
  if (version.value().first == kFormatMajor) return std::optional<CompatibilityVerdict>();
  return std::optional<CompatibilityVerdict>(CompatibilityVerdict{
      Compatibility::UNSUPPORTED,
      {unreadableFormatMessage(version.value().first, version.value().second)},
      against});
}

std::vector<std::string> unsupportedReasons(const Header& h, const vk::DeviceInfo& device) {
  std::vector<std::string> unsupported;
  const uint32_t engine = packVersion(engineVersion());
  if (engine < h.readableMin || engine > h.readableMax) {
    unsupported.push_back("engine " + std::string(engineVersion()) + " is outside the versions this binary declares "
                          "readable (" + unpackVersion(h.readableMin) + " - " + unpackVersion(h.readableMax) + ")");
  }
  const uint32_t missing = h.requiredFeatures & ~deviceFeatures(device);
  if (missing) unsupported.push_back("the device lacks features the SPIR-V uses: " + featureNames(missing));
  if ((h.requiredFeatures & kFeatureSubgroupArithmetic) && device.subgroupSize != h.subgroupSize) {
    unsupported.push_back("subgroup size " + std::to_string(device.subgroupSize) + " differs from the " +
                          std::to_string(h.subgroupSize) + " the kernels were sized for");
  }
  if (device.maxComputeWorkGroupInvocations < h.requiredWorkgroupInvocations) {
    unsupported.push_back("workgroups of " + std::to_string(h.requiredWorkgroupInvocations) + " invocations exceed the " +
                          "device's maxComputeWorkGroupInvocations " + std::to_string(device.maxComputeWorkGroupInvocations));
  }
  for (size_t i = 0; i < 3; ++i) {
    if (device.maxComputeWorkGroupSize[i] < h.requiredWorkgroupSize[i]) {
      unsupported.push_back("workgroup size " + std::to_string(h.requiredWorkgroupSize[i]) + " along axis " +
                            std::to_string(i) + " exceeds the device's " + std::to_string(device.maxComputeWorkGroupSize[i]));
    }
  }
  if (device.maxPushConstantsSize < h.requiredPushConstantBytes) {
    unsupported.push_back(std::to_string(h.requiredPushConstantBytes) + " bytes of push constants exceed the device's " +
                          std::to_string(device.maxPushConstantsSize));
  }
  return unsupported;
}

CompatibilityVerdict judge(const ContextBinary& binary, const vk::DeviceInfo& device, const std::string& against) {
  const Header& h = binary.header();
  CompatibilityVerdict verdict{Compatibility::OPTIMAL, {}, against};
  std::vector<std::string> unsupported = unsupportedReasons(h, device), suboptimal;
  if (!unsupported.empty()) {
    verdict.compatibility = Compatibility::UNSUPPORTED;
    verdict.reasons = std::move(unsupported);
    return verdict;
  }

  // Fits: optimal only when the driver blob was made by this very device and driver.
  const vk::DeviceInfo& t = binary.target();
  if (h.vendorId != device.vendorId || h.deviceId != device.deviceId) {
    suboptimal.push_back("compiled for " + t.name + " (vendor " + hex(h.vendorId) + ", device " + hex(h.deviceId) +
                         "), not " + device.name + " (vendor " + hex(device.vendorId) + ", device " + hex(device.deviceId) + ")");
  } else if (h.deviceNameHash != stringHash(device.name)) {
    suboptimal.push_back("compiled for device '" + t.name + "', this is '" + device.name + "'");
  }
  if (h.driverId != device.driverId || h.driverVersion != device.driverVersion) {
    suboptimal.push_back("driver " + t.driverName + " " + hex(h.driverVersion) + " differs from " + device.driverName +
                         " " + hex(device.driverVersion));
  }
  if (h.driverInfoHash != stringHash(device.driverInfo)) {
    suboptimal.push_back("driver info '" + t.driverInfo + "' differs from '" + device.driverInfo + "'");
  }
  if (h.pipelineCacheUuid != device.pipelineCacheUuid) suboptimal.push_back("pipeline cache UUID differs");
  if (h.apiVersion != device.apiVersion) {
    suboptimal.push_back("Vulkan API version " + t.apiVersionString() + " differs from " + device.apiVersionString());
  }
  if (h.target == TargetKind::PROFILE) {
    suboptimal.push_back("compiled for a device profile: no driver pipeline cache, pipelines are created on load");
  } else if (!binary.hasDriverCache()) {
    suboptimal.push_back("the binary holds no driver pipeline cache");
  }
  if (!suboptimal.empty()) {
    verdict.compatibility = Compatibility::COMPATIBLE;
    verdict.reasons = std::move(suboptimal);
  }
  return verdict;
}

Result<CompatibilityVerdict> judgeFile(const std::string& path, const vk::DeviceInfo& device, const std::string& against) {
  KILN_ASSIGN_OR_RETURN(auto otherFormat, judgeFormatVersion(path, against));
  if (otherFormat) return *otherFormat;
  KILN_ASSIGN_OR_RETURN(auto binary, ContextBinary::open(path));
  return judge(*binary, device, against);
}

Result<CompatibilityVerdict> judgeBytes(std::span<const std::byte> bytes, const std::string& origin,
                                        const vk::DeviceInfo& device, const std::string& against) {
  KILN_ASSIGN_OR_RETURN(auto otherFormat, judgeFormatVersion(bytes, origin, against));
  if (otherFormat) return *otherFormat;
  KILN_ASSIGN_OR_RETURN(auto binary, ContextBinary::fromBytes(std::vector<std::byte>(bytes.begin(), bytes.end()), origin));
  return judge(*binary, device, against);
}

}  // namespace ctxbin
}  // namespace kiln
