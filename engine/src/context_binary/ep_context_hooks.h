// What the framework asks of the execution provider whose compiled partitions a context binary stores, as
// onnxruntime asks an EP (and its factory) for its EPContext nodes and to validate a compiled model against a
// device: epcontext/ writes, admits and judges binaries through these calls and names no device API. session/, the
// one place that creates execution providers, hands them down (session/execution_providers.h: contextHooks).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "context_binary/context_binary.h"
#include "device/device_info.h"
#include "ep/execution_provider.h"
#include "kiln/status.h"

namespace kiln::ctxbin {

class EpContextHooks {
 public:
  virtual ~EpContextHooks() = default;
  // The execution provider these hooks belong to ("VulkanExecutionProvider").
  virtual const std::string& executionProvider() const = 0;
  // What a binary of `partitions` (compiled by this EP for one target) holds: the partitions, their target and its
  // kind, the push-constant block the kernels use and, for a live-device target, the driver's pipeline cache.
  // INVALID_ARGUMENT when there is nothing to store or a partition is another EP's.
  virtual Result<BinaryContents> exportContext(std::vector<CompiledPartition> partitions) const = 0;
  // The live device `selector` picks (index or name substring; "" = the one a session would pick, CPU devices
  // included): what a binary is judged against when no profile is given.
  virtual Result<vk::DeviceInfo> liveDevice(const std::string& selector) const = 0;
  // Readies the live `device` to load `binary`'s pipelines from its driver cache (called for an `optimal` verdict,
  // before the session creates pipelines). The returned handle keeps that state alive until the session holds the
  // device; null when there is nothing to keep.
  virtual std::shared_ptr<const void> attachDriverCache(const vk::DeviceInfo& device, const ContextBinary& binary) const = 0;
};

}  // namespace kiln::ctxbin
