#include "ep/vulkan/vulkan_context_hooks.h"

#include <string>
#include <utility>

#include "context_binary/verdict.h"
#include "device/device_profile.h"
#include "ep/vulkan/driver_cache.h"
#include "ep/vulkan/shader_library.h"
#include "ep/vulkan/vulkan_device.h"
#include "ep/vulkan/vulkan_execution_provider.h"

namespace kiln::vk {
namespace {

class VulkanContextHooks final : public ctxbin::EpContextHooks {
 public:
  const std::string& executionProvider() const override { return name_; }

  Result<ctxbin::BinaryContents> exportContext(std::vector<CompiledPartition> partitions) const override {
    if (partitions.empty()) return Status(StatusCode::INVALID_ARGUMENT, "no compiled partitions to store");
    ctxbin::BinaryContents contents;
    const CompiledPartition& first = partitions.front();
    if (first.executionProvider != name_ || first.targetProfile.empty()) {
      return Status(StatusCode::INVALID_ARGUMENT, "partition '" + first.name + "' of " + first.executionProvider +
                                                      " has nothing a context binary stores");
    }
    KILN_ASSIGN_OR_RETURN(contents.target, parseDeviceProfile(first.targetProfile, "partition " + first.name));
    contents.requiredPushConstantBytes = kPushConstantBytes;
    contents.targetKind = first.targetIsProfile ? ctxbin::TargetKind::PROFILE : ctxbin::TargetKind::DEVICE;
    if (contents.targetKind == ctxbin::TargetKind::DEVICE) {
      // The producer's driver cache, with the pipelines of these partitions in it: what makes a load `optimal`.
      KILN_ASSIGN_OR_RETURN(contents.driverCache, driverCacheDataOf(contents.target));
    }
    contents.partitions = std::move(partitions);
    return contents;
  }

  // Nodes written before the `source` attribute are the Vulkan EP's (as TensorRT's EP claims its own).
  bool claimsSource(const std::string& source) const override {
    return source.empty() || source == name_ || source == kShortSource;
  }

  std::string toolchainIdentity() const override { return compilerTag(); }

  Result<DeviceInfo> liveDevice(const std::string& selector) const override { return selectDevice(selector, true); }

  CompatibilityVerdict judgeContext(const ctxbin::ContextBinary& binary, const DeviceInfo& device,
                                    const std::string& against) const override {
    return ctxbin::judge(binary, device, against);
  }

  std::shared_ptr<const void> attachDriverCache(const DeviceInfo& device, const ctxbin::ContextBinary& binary) const override {
    return attachDriverCacheTo(device, binary.driverCache());
  }

 private:
  static constexpr const char* kShortSource = "Vulkan";
  const std::string name_ = kVulkanExecutionProviderName;
};

}  // namespace

std::shared_ptr<const ctxbin::EpContextHooks> vulkanContextHooks() {
  static const std::shared_ptr<const ctxbin::EpContextHooks> hooks = std::make_shared<VulkanContextHooks>();
  return hooks;
}

}  // namespace kiln::vk
