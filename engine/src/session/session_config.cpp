#include "session/session_config.h"

#include <algorithm>
#include <sstream>
#include <string>
#include <string_view>
#include <thread>

#include "kiln/config_keys.h"
#include "session/config_value.h"
#include "session/execution_providers.h"
#include "epcontext/compile_record.h"

namespace kiln {

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
    if (!isKnownProviderShortName(name)) {
      return Status(StatusCode::INVALID_ARGUMENT, "unknown execution provider '" + name + "' in " +
                                                      config::kExecutionProviders + " (known: " + knownProviderShortNames() + ")");
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

optimizer::OptimizationLevel optimizerLevel(GraphOptimizationLevel level) {
  switch (level) {
    case GraphOptimizationLevel::NONE: return optimizer::OptimizationLevel::NONE;
    case GraphOptimizationLevel::BASIC: return optimizer::OptimizationLevel::BASIC;
    case GraphOptimizationLevel::ALL: return optimizer::OptimizationLevel::ALL;
  }
  return optimizer::OptimizationLevel::BASIC;
}

Result<SessionConfig> parseSessionConfig(const SessionOptions& options) {
  SessionConfig c;
  KILN_ASSIGN_OR_RETURN(c.executionProviders, providerNames(entry(options, config::kExecutionProviders)));
  c.executionProvidersSet = options.configEntry(config::kExecutionProviders).has_value();
  KILN_ASSIGN_OR_RETURN(c.intraOpThreads, threads(options));
  KILN_ASSIGN_OR_RETURN(const GraphOptimizationLevel level,
                        parseGraphOptimizationLevel(entry(options, config::kGraphOptimizationLevel)));
  c.optimizationLevel = optimizerLevel(level);
  c.externalInitializersFolder = entry(options, config::kModelExternalInitializersFolder);
  c.disableCpuEpFallback = flag(options, config::kDisableCpuEpFallback);
  c.failOnSuboptimalCompiledModel = flag(options, config::kFailOnSuboptimalCompiledModel);
  c.disableModelCompile = flag(options, config::kDisableModelCompile);
  c.inputShapes.shapes = options.inputShapes();
  const std::string_view freeDimPrefix = config::kFreeDimOverridePrefix;
  for (const auto& [key, value] : options.configEntries()) {
    if (key.rfind(freeDimPrefix, 0) == 0) c.inputShapes.freeDimOverrides[key.substr(freeDimPrefix.size())] = value;
  }
  const std::string floatKernels = entry(options, config::kCpuFloatKernels);
  if (floatKernels != "gemm" && floatKernels != "onednn" && floatKernels != "openblas") {  // openblas: gemm's old name
    return Status(StatusCode::INVALID_ARGUMENT, std::string(config::kCpuFloatKernels) +
                                                    " must be gemm or onednn, got '" + floatKernels + "'");
  }
  c.cpuFloatOnOneDnn = floatKernels == "onednn";
  if (auto value = options.configEntry(kMaxTensorBytesKey)) {
    KILN_ASSIGN_OR_RETURN(c.maxTensorBytes, parseMaxTensorBytes(*value));
  }

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
  c.epContext.sourceModelPath = entry(options, config::kEpContextSourceModelPath);
  c.epContext.weightless = weightlessRequested(options);
  return c;
}

bool weightlessRequested(const SessionOptions& options) {
  return configValue(options, config::kEnableWeightlessEpContextNodes) == "1" ||
         configValue(options, config::kEnableWeightless) == "1";
}

std::map<std::string, std::string> resultChangingOptions(const SessionOptions& options) {
  std::map<std::string, std::string> result;
  for (const char* key : {config::kGraphOptimizationLevel, config::kVulkanFp16, config::kVulkanAutotune,
                          config::kEpContextNodeNamePrefix, config::kExecutionProviders}) {
    result[key] = configValue(options, key);
  }
  result[config::kVulkanTargetProfile] = epctx::recordedProfileValue(configValue(options, config::kVulkanTargetProfile));
  // Either spelling: a weightless binary needs its source at load (kiln check says when it is not there).
  result[config::kEnableWeightlessEpContextNodes] = weightlessRequested(options) ? "1" : "0";
  return result;
}

epctx::ContextLoadOptions contextLoadOptions(const SessionConfig& config, const SessionOptions& options) {
  epctx::ContextLoadOptions load;
  load.executionProviders = providerNamesFor(config.executionProviders);
  load.shareEpContexts = config.epContext.share;
  load.sourceModelPath = config.epContext.sourceModelPath;
  load.admission = admissionPolicy(config);
  load.readFunction = options.contextDataReadFunction();
  return load;
}

AdmissionPolicy admissionPolicy(const SessionConfig& config) {
  return AdmissionPolicy{config.vulkan.device, config.failOnSuboptimalCompiledModel,
                         contextHooksOf(config.executionProviders)};
}

}  // namespace kiln
