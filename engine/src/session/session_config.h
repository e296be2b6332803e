// One validated parse of a session's config entries into typed fields (keys and defaults: kiln/config_keys.h).
// Session creation parses first, so a bad value fails before any work; later steps read the struct, not strings.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "kiln/session_options.h"
#include "kiln/tensor_size.h"
#include "onnx/input_shapes.h"
#include "optimizer/optimizer.h"
#include "epcontext/ctx_model_loader.h"
#include "session/config_value.h"

namespace kiln {

struct SessionConfig {
  // kiln.execution_providers: "vulkan" and/or "cpu" in preference order (duplicates dropped); `set` when given.
  std::vector<std::string> executionProviders;
  bool executionProvidersSet = false;
  int intraOpThreads = 1;  // kiln.intra_op_num_threads (else session.intra_op_num_threads); 0 resolved to the default
  optimizer::OptimizationLevel optimizationLevel = optimizer::OptimizationLevel::BASIC;
  std::string externalInitializersFolder;  // session.model_external_initializers_file_folder_path
  bool disableCpuEpFallback = false;
  bool failOnSuboptimalCompiledModel = false;
  bool disableModelCompile = false;
  bool cpuFloatOnOneDnn = false;  // kiln.cpu.float_kernels: "onednn" (true) or "gemm" (the default)
  uint64_t maxTensorBytes = kDefaultMaxTensorBytes;  // kiln.max_tensor_bytes
  InputShapeRequest inputShapes;  // SessionOptions::setInputShape and kiln.free_dim_override.<dim_param>

  struct Vulkan {
    std::string device;  // kiln.vulkan.device: index or name substring ("" = the default device)
    bool deviceSet = false;
    bool autotune = false, profile = false, fp16 = false;
    std::string pipelineCachePath, targetProfile;
  } vulkan;

  struct EpContext {
    bool enable = false, share = false, stopShare = false;
    std::string filePath, nodeNamePrefix, externalInitializersFile;
    std::string sourceModelPath;  // ep.context_source_model_path: a weightless binary's source ("" = as recorded)
    bool weightless = false;      // ep.enable_weightless_ep_context_nodes=1 or ep.enable_weightless=1
    std::string embedMode;  // "0" or "1": checked by generation, only when enabled (ONNX Runtime's order of checks)
  } epContext;
};

// The optimizer's level for the public one (kiln.graph_optimization_level).
optimizer::OptimizationLevel optimizerLevel(GraphOptimizationLevel level);

// Parses every known key of `options`: INVALID_ARGUMENT naming the key for a malformed value (threads, optimization
// level, execution providers). Unset keys take their defaults (config::defaultValue).
Result<SessionConfig> parseSessionConfig(const SessionOptions& options);

// ep.enable_weightless_ep_context_nodes=1 or onnxruntime 1.29's ep.enable_weightless=1.
bool weightlessRequested(const SessionOptions& options);

// What a compile records as its result-changing options (epcontext/compile_record.h): kiln.graph_optimization_level,
// kiln.vulkan.fp16, kiln.vulkan.autotune, kiln.vulkan.target_profile as the profile file's content hash,
// ep.context_node_name_prefix, kiln.execution_providers and the weightless flag, defaults filled in.
std::map<std::string, std::string> resultChangingOptions(const SessionOptions& options);

// What loading an EPContext model takes from the configuration (`options` supplies the read function).
epctx::ContextLoadOptions contextLoadOptions(const SessionConfig& config, const SessionOptions& options);
// Which device judges a context binary and whether a compatible one is refused.
AdmissionPolicy admissionPolicy(const SessionConfig& config);

}  // namespace kiln
