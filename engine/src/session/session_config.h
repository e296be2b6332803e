// One validated parse of a session's config entries into typed fields (keys and defaults: kiln/config_keys.h).
// Session creation parses first, so a bad value fails before any work; later steps read the struct, not strings.
#pragma once

#include <string>
#include <vector>

#include "kiln/session_options.h"
#include "optimizer/optimizer.h"
#include "util/config_value.h"

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

  struct Vulkan {
    std::string device;  // kiln.vulkan.device: index or name substring ("" = the default device)
    bool deviceSet = false;
    bool autotune = false, profile = false, fp16 = false;
    std::string pipelineCachePath, targetProfile;
  } vulkan;

  struct EpContext {
    bool enable = false, share = false, stopShare = false;
    std::string filePath, nodeNamePrefix, externalInitializersFile;
    std::string embedMode;  // "0" or "1": checked by generation, only when enabled (ONNX Runtime's order of checks)
  } epContext;
};

// Parses every known key of `options`: INVALID_ARGUMENT naming the key for a malformed value (threads, optimization
// level, execution providers). Unset keys take their defaults (config::defaultValue).
Result<SessionConfig> parseSessionConfig(const SessionOptions& options);

}  // namespace kiln
