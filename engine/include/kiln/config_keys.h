// The config keys SessionOptions::addConfigEntry accepts, as named constants, with their defaults in one table.
// ONNX Runtime's keys keep their names and meanings; Kiln's own live under "kiln.". A boolean key is on when its
// value is "1" (any other value is off), as in ONNX Runtime.
#pragma once

#include "kiln/export.h"

#include <string>
#include <vector>

namespace kiln::config {

// ONNX Runtime's session keys.
inline constexpr const char* kModelExternalInitializersFolder = "session.model_external_initializers_file_folder_path";
inline constexpr const char* kDisableCpuEpFallback = "session.disable_cpu_ep_fallback";
inline constexpr const char* kFailOnSuboptimalCompiledModel = "session.fail_on_suboptimal_compiled_model";
inline constexpr const char* kDisableModelCompile = "session.disable_model_compile";
inline constexpr const char* kCompileOnly = "session.compile_only";
inline constexpr const char* kSessionIntraOpNumThreads = "session.intra_op_num_threads";
// ONNX Runtime's EPContext keys.
inline constexpr const char* kEpContextEnable = "ep.context_enable";
inline constexpr const char* kEpContextFilePath = "ep.context_file_path";
inline constexpr const char* kEpContextEmbedMode = "ep.context_embed_mode";
inline constexpr const char* kEpContextNodeNamePrefix = "ep.context_node_name_prefix";
inline constexpr const char* kEpContextExternalInitializersFile = "ep.context_model_external_initializers_file_name";
inline constexpr const char* kEpContextSourceModelPath = "ep.context_source_model_path";
inline constexpr const char* kShareEpContexts = "ep.share_ep_contexts";
inline constexpr const char* kStopShareEpContexts = "ep.stop_share_ep_contexts";
inline constexpr const char* kEnableWeightlessEpContextNodes = "ep.enable_weightless_ep_context_nodes";
inline constexpr const char* kEnableWeightless = "ep.enable_weightless";  // onnxruntime 1.29's name of the above
// Kiln's keys.
inline constexpr const char* kExecutionProviders = "kiln.execution_providers";
inline constexpr const char* kIntraOpNumThreads = "kiln.intra_op_num_threads";
inline constexpr const char* kGraphOptimizationLevel = "kiln.graph_optimization_level";
inline constexpr const char* kVulkanDevice = "kiln.vulkan.device";
inline constexpr const char* kVulkanAutotune = "kiln.vulkan.autotune";
inline constexpr const char* kVulkanPipelineCachePath = "kiln.vulkan.pipeline_cache_path";
inline constexpr const char* kVulkanTargetProfile = "kiln.vulkan.target_profile";
inline constexpr const char* kVulkanFp16 = "kiln.vulkan.fp16";
inline constexpr const char* kVulkanProfile = "kiln.vulkan.profile";
inline constexpr const char* kMaxTensorBytes = "kiln.max_tensor_bytes";
inline constexpr const char* kCpuFloatKernels = "kiln.cpu.float_kernels";
// kiln.free_dim_override.<dim_param>=N: fixes a symbolic input dimension (one key per dim_param).
inline constexpr const char* kFreeDimOverridePrefix = "kiln.free_dim_override.";

// One known key: its name, what an unset key means, and a one-line meaning.
struct KILN_EXPORT KeyInfo {
  const char* key;
  const char* defaultValue;
  const char* meaning;
};

// Every fixed key Kiln knows (the kiln.free_dim_override.* family aside), sorted by key: the one table of keys
// and defaults.
KILN_EXPORT const std::vector<KeyInfo>& knownKeys();

// The default of `key` (what the engine does when it is unset); "" for an unknown key.
KILN_EXPORT std::string defaultValue(const std::string& key);

}  // namespace kiln::config
