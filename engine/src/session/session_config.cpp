#include "session/session_config.h"

#include <algorithm>
#include <sstream>
#include <thread>

#include "kiln/config_keys.h"

namespace kiln {

std::string configValue(const SessionOptions& options, const char* key);

namespace {

std::string entry(const SessionOptions& options, const char* key) { return configValue(options, key); }

bool flag(const SessionOptions& options, const char* key) { return entry(options, key) == "1"; }

std::string trimmed(const std::string& text) {
  const size_t start = text.find_first_not_of(" \t");
  if (start == std::string::npos) return "";
  return text.substr(start, text.find_last_not_of(" \t") - start + 1);
}

Result<std::vector<std::string>> providerNames(const std::string& list) {
  std::vector<std::string> names;
  std::stringstream stream(list);
  std::string name;
  while (std::getline(stream, name, ',')) {
    name = trimmed(name);
    if (name.empty() || std::find(names.begin(), names.end(), name) != names.end()) continue;
    if (name != "cpu" && name != "vulkan") {
      return Status(StatusCode::INVALID_ARGUMENT, "unknown execution provider '" + name + "' in " +
                                                      config::kExecutionProviders + " (known: vulkan, cpu)");
    }
    names.push_back(name);
  }
  return names;
}

Result<int> threads(const SessionOptions& options) {
  const std::string value = options.configEntryOr(config::kIntraOpNumThreads, entry(options, config::kSessionIntraOpNumThreads));
  try {
    size_t used = 0;
    const int n = std::stoi(value, &used);
    if (n < 0 || used != value.size()) throw std::invalid_argument("not a non-negative integer");
    // Default: one thread per logical core (at most 16), like ONNX Runtime's default; the CPU EP's pool runs small
    // work inline, so tiny models do not pay for the threads.
    return n == 0 ? static_cast<int>(std::clamp(std::thread::hardware_concurrency(), 1u, 16u)) : n;
  } catch (const std::exception&) {
    return Status(StatusCode::INVALID_ARGUMENT, std::string(config::kIntraOpNumThreads) +
                                                    " must be a non-negative integer, got '" + value + "'");
  }
}

}  // namespace

Result<SessionConfig> parseSessionConfig(const SessionOptions& options) {
  SessionConfig c;
  KILN_ASSIGN_OR_RETURN(c.executionProviders, providerNames(entry(options, config::kExecutionProviders)));
  c.executionProvidersSet = options.configEntry(config::kExecutionProviders).has_value();
  KILN_ASSIGN_OR_RETURN(c.intraOpThreads, threads(options));
  KILN_ASSIGN_OR_RETURN(c.optimizationLevel,
                        optimizer::parseOptimizationLevel(entry(options, config::kGraphOptimizationLevel)));
  c.externalInitializersFolder = entry(options, config::kModelExternalInitializersFolder);
  c.disableCpuEpFallback = flag(options, config::kDisableCpuEpFallback);
  c.failOnSuboptimalCompiledModel = flag(options, config::kFailOnSuboptimalCompiledModel);
  c.disableModelCompile = flag(options, config::kDisableModelCompile);
  const std::string floatKernels = entry(options, config::kCpuFloatKernels);
  if (floatKernels != "gemm" && floatKernels != "onednn" && floatKernels != "openblas") {  // openblas: gemm's old name
    return Status(StatusCode::INVALID_ARGUMENT, std::string(config::kCpuFloatKernels) +
                                                    " must be gemm or onednn, got '" + floatKernels + "'");
  }
  c.cpuFloatOnOneDnn = floatKernels == "onednn";

  c.vulkan.device = entry(options, config::kVulkanDevice);
  c.vulkan.deviceSet = options.configEntry(config::kVulkanDevice).has_value();
  c.vulkan.autotune = flag(options, config::kVulkanAutotune);
  c.vulkan.profile = flag(options, config::kVulkanProfile);
  c.vulkan.fp16 = flag(options, config::kVulkanFp16);
  c.vulkan.pipelineCachePath = entry(options, config::kVulkanPipelineCachePath);
  c.vulkan.targetProfile = entry(options, config::kVulkanTargetProfile);

  c.epContext.enable = flag(options, config::kEpContextEnable);
  c.epContext.share = flag(options, config::kShareEpContexts);
  c.epContext.stopShare = flag(options, config::kStopShareEpContexts);
  c.epContext.filePath = entry(options, config::kEpContextFilePath);
  c.epContext.nodeNamePrefix = entry(options, config::kEpContextNodeNamePrefix);
  c.epContext.externalInitializersFile = entry(options, config::kEpContextExternalInitializersFile);
  c.epContext.embedMode = entry(options, config::kEpContextEmbedMode);
  return c;
}

}  // namespace kiln
