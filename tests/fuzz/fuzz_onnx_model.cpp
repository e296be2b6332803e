// ONNX model load + shape inference + optimization + partitioning, as `kiln partition` does it: the input is a
// model file. CPU EP only; with KILN_FUZZ_VULKAN=1 the Vulkan EP takes part too when a Vulkan device exists
// (lavapipe in CI). Any Status is fine; a crash, a sanitizer report or a hang is the bug.
#include <cstdio>
#include <cstdlib>
#include <string>

#include "fuzz_support.h"
#include "kiln/config_keys.h"
#include "kiln/device.h"
#include "kiln/model_info.h"
#include "kiln/partition_report.h"
#include "kiln/provider_names.h"
#include "kiln/session_options.h"

namespace {

// "vulkan,cpu" when asked for and a device exists, else "cpu".
std::string executionProviders() {
  const char* vulkan = std::getenv("KILN_FUZZ_VULKAN");
  if (vulkan == nullptr || std::string(vulkan) != "1") return kiln::kCpuProviderShortName;
  auto devices = kiln::listVulkanDevices();
  if (!devices.isOk() || devices->empty()) {
    std::fprintf(stderr, "fuzz_onnx_model: KILN_FUZZ_VULKAN=1 but no Vulkan device: CPU EP only\n");
    return kiln::kCpuProviderShortName;
  }
  return kiln::kDefaultExecutionProviders;
}

kiln::SessionOptions fuzzOptions() {
  kiln::SessionOptions options;
  (void)options.addConfigEntry(kiln::config::kExecutionProviders, executionProviders());
  (void)options.addConfigEntry(kiln::config::kIntraOpNumThreads, "1");
  // Constant folding may materialize tensors: keep them far below libFuzzer's 2 GB malloc limit.
  (void)options.addConfigEntry(kiln::config::kMaxTensorBytes, std::to_string(64 << 20));
  return options;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const kiln::SessionOptions options = (kiln::fuzz::quietLogging(), fuzzOptions());
  const std::string path = kiln::fuzz::writeScratchFile("model.onnx", data, size);
  kiln::fuzz::note("inspectModel", kiln::inspectModel(path));
  kiln::fuzz::note("analyzePartitions", kiln::analyzePartitions(path, options));
  return 0;
}
