// The one table of config keys, their defaults and meanings (kiln/config_keys.h).
#include "kiln/config_keys.h"

#include <algorithm>
#include <cstring>

namespace kiln::config {

const std::vector<KeyInfo>& knownKeys() {
  static const std::vector<KeyInfo> keys = [] {
    std::vector<KeyInfo> table = {
        {kModelExternalInitializersFolder, "", "folder external data resolves against"},
        {kDisableCpuEpFallback, "0", "1: a node the preferred EPs cannot run is an error"},
        {kFailOnSuboptimalCompiledModel, "0", "1: a 'compatible' (not optimal) context binary is FAIL"},
        {kDisableModelCompile, "0", "1: a model that needs compilation is MODEL_REQUIRES_COMPILATION"},
        {kCompileOnly, "0", "1: compile and write EPContext output without running"},
        {kSessionIntraOpNumThreads, "0", "CPU threads (ONNX Runtime's SessionOptions field)"},
        {kEpContextEnable, "0", "1: write an EPContext model after compiling"},
        {kEpContextFilePath, "", "path of the EPContext model to write"},
        {kEpContextEmbedMode, "0", "1: embed the context binary in the EPContext node"},
        {kEpContextNodeNamePrefix, "", "prefix for EPContext node and partition names"},
        {kEpContextExternalInitializersFile, "", "external file for CPU-fallback initializers"},
        {kEpContextSourceModelPath, "", "source model path: weightless compile from a buffer, weightless load"},
        {kShareEpContexts, "0", "1: sessions share EP contexts (weight sharing)"},
        {kStopShareEpContexts, "0", "1: the last session of a sharing group"},
        {kEnableWeightlessEpContextNodes, "0", "1: the context binary refers to the source model's weights"},
        {kEnableWeightless, "0", "1: as ep.enable_weightless_ep_context_nodes (onnxruntime 1.29)"},
        {kExecutionProviders, "vulkan,cpu", "EPs in preference order (default vulkan,cpu)"},
        {kIntraOpNumThreads, "0", "CPU EP threads (0 = default: one per logical core, at most 16)"},
        {kGraphOptimizationLevel, "basic", "none | basic | all"},
        {kVulkanDevice, "", "Vulkan device index or name substring"},
        {kVulkanAutotune, "0",
         "1: time candidate kernel configurations while compiling (fixed input shapes; else at the first run), keep "
         "the fastest; context binaries store the choices"},
        {kVulkanPipelineCachePath, "", "Vulkan pipeline cache file"},
        {kVulkanTargetProfile, "", "device profile JSON to compile for"},
        {kVulkanFp16, "0", "1: float16 weights and activations in device storage, float32 arithmetic"},
        {kVulkanProfile, "0", "1: time every dispatch with timestamp queries and log a table per op type"},
        {kCpuFloatKernels, "gemm",
         "gemm | onednn: the CPU EP's float Conv (gemm: im2col and oneDNN's sgemm, the reference path; onednn: "
         "oneDNN's convolution primitive; openblas: gemm's old name)"},
        {kMaxTensorBytes, "2147483648", "the most bytes one tensor may take (2 GiB)"},
    };
    std::sort(table.begin(), table.end(), [](const KeyInfo& a, const KeyInfo& b) { return std::strcmp(a.key, b.key) < 0; });
    return table;
  }();
  return keys;
}

std::string defaultValue(const std::string& key) {
  for (const auto& info : knownKeys()) {
    if (key == info.key) return info.defaultValue;
  }
  return "";
}

}  // namespace kiln::config
