// The Vulkan execution provider: claims the nodes its kernels handle, compiles partitions (kernel selection,
// glslang, pipelines) and runs them on a Vulkan 1.1+ device.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "ep/execution_provider.h"
#include "ep/host_evaluator.h"

namespace kiln::vk {

extern const char* const kVulkanExecutionProviderName;  // "VulkanExecutionProvider"

// The EP's settings, from the session's kiln.vulkan.* config entries (SessionConfig).
struct VulkanEpConfig {
  std::string device;             // kiln.vulkan.device: index or name substring; "" = the default device
  std::string targetProfile;      // kiln.vulkan.target_profile: compile for this device profile instead
  std::string pipelineCachePath;  // kiln.vulkan.pipeline_cache_path; "" = off
  bool profile = false;           // kiln.vulkan.profile
  bool autotune = false;          // kiln.vulkan.autotune
  bool fp16 = false;              // kiln.vulkan.fp16: float32 partitions store tensors as float16
  // What fixes input shapes for autotune at compile: the session's per-input shapes (--shape) and
  // kiln.free_dim_override.<dim_param> values.
  std::map<std::string, std::vector<int64_t>> inputShapes;
  std::map<std::string, int64_t> freeDims;
};

// Creates the Vulkan EP for a session. Device selection: `config.device` (index or name substring) picks one;
// otherwise a GPU, and a CPU-type device (lavapipe) only when `explicitlyRequested`.
// Device creation starts on a background thread so it overlaps model loading; the first getCapability waits.
// Returns nullptr (no error) when no suitable device exists and the EP was not explicitly requested; an error
// (EP_FAIL) when it was. `host` evaluates the shape arithmetic the EP keeps on the host (the session passes the
// CPU EP's kernels: cpu::hostEvaluator()); it must not be null.
Result<std::unique_ptr<ExecutionProvider>> createVulkanExecutionProvider(const VulkanEpConfig& config,
                                                                         bool explicitlyRequested,
                                                                         std::shared_ptr<const HostEvaluator> host);

}  // namespace kiln::vk
