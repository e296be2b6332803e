// What the framework asks of the execution provider whose compiled partitions a context binary stores, as
// onnxruntime asks an EP (and its factory) for its EPContext nodes and to validate a compiled model against a
// device: epcontext/ writes, admits, judges and describes binaries through these calls and names no device API.
// session/, the one place that creates execution providers, hands them down (session/execution_providers.h).
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "context_binary/context_binary.h"
#include "device/device_info.h"
#include "ep/execution_provider.h"
#include "kiln/context_binary.h"
#include "kiln/status.h"

namespace kiln::ctxbin {

class EpContextHooks {
 public:
  virtual ~EpContextHooks() = default;
  // The execution provider these hooks belong to ("VulkanExecutionProvider"): what its partitions and the
  // `source` of its EPContext nodes name.
  virtual const std::string& executionProvider() const = 0;
  // Whether an EPContext node whose `source` is `source` is this EP's (its name, or an alias it accepts).
  virtual bool claimsSource(const std::string& source) const { return source == executionProvider(); }
  // What a binary of `partitions` (compiled by this EP for one target) holds: the partitions (with whatever the EP
  // keeps in their providerData), their target and its kind, the push-constant block the kernels use and, for a
  // live-device target, the driver's pipeline cache. INVALID_ARGUMENT when there is nothing to store or a
  // partition is another EP's.
  virtual Result<BinaryContents> exportContext(std::vector<CompiledPartition> partitions) const = 0;
  // The compiler this EP's compiles depend on beyond the model, the options and Kiln itself (the Vulkan EP:
  // glslang's version and target settings): part of a compile's identity. "" when there is none.
  virtual std::string toolchainIdentity() const { return ""; }
  // The live device `selector` picks (index or name substring; "" = the one a session would pick, CPU devices
  // included): what a binary is judged against when no profile is given.
  virtual Result<vk::DeviceInfo> liveDevice(const std::string& selector) const = 0;
  // The verdict on `binary` for `device` (live, or a profile); `against` names the device in the verdict.
  virtual CompatibilityVerdict judgeContext(const ContextBinary& binary, const vk::DeviceInfo& device,
                                            const std::string& against) const = 0;
  // Readies the live `device` to load `binary`'s pipelines from its driver cache (called for an `optimal` verdict,
  // before the session creates pipelines). The returned handle keeps that state alive until the session holds the
  // device; null when there is nothing to keep.
  virtual std::shared_ptr<const void> attachDriverCache(const vk::DeviceInfo& device, const ContextBinary& binary) const = 0;
  // What inspect shows of one of this EP's partitions beyond what the format knows (its providerData read the
  // EP's way), as (label, value) pairs; empty by default.
  virtual std::vector<std::pair<std::string, std::string>> describePartition(const CompiledPartition& partition) const {
    (void)partition;
    return {};
  }
};

// The hooks of the execution provider named `nameOrSource` (an EP name, or an EPContext node's `source`), or null
// when no context-owning EP answers to it. session/ builds it over the EPs this build can create.
using ContextHooksLookup = std::function<const EpContextHooks*(const std::string& nameOrSource)>;

// The hooks of the one EP that compiled every partition of `partitions`: INVALID_ARGUMENT when there are none,
// when they come from several EPs (one binary belongs to one EP) or when that EP stores no context.
Result<const EpContextHooks*> exporterOf(const std::vector<CompiledPartition>& partitions, const ContextHooksLookup& lookup);

}  // namespace kiln::ctxbin
