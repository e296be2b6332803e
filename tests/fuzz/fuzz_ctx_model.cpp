// EPContext resolution with the path rules: the input is a ctx model, written as model_ctx.onnx into a private
// folder that also holds a real context binary (add_relu_vulkan.bin, the one `kiln compile` wrote for the seed
// add_relu_ctx.onnx), a copy in a subfolder, a symlink escaping the folder and a FIFO; then inspected as `kiln inspect`
// does and partitioned as Session::create would (binaries read and checked against the model, no device).
#include <sys/stat.h>

#include <cstdlib>
#include <filesystem>
#include <string>

#include "fuzz_support.h"
#include "kiln/config_keys.h"
#include "kiln/epcontext.h"
#include "kiln/partition_report.h"
#include "kiln/session_options.h"

namespace {

namespace fs = std::filesystem;

// scratch/ctx with the files an ep_cache_context may name; scratch/outside.bin is what the symlink escapes to.
fs::path modelFolder() {
  const fs::path binary = kiln::fuzz::sourceDir() / "tests/fuzz/corpus/context_binary/add_relu_vulkan.bin";
  const fs::path folder = kiln::fuzz::scratchDir() / "ctx";
  fs::create_directories(folder / "sub");
  fs::copy_file(binary, folder / "add_relu_vulkan.bin", fs::copy_options::overwrite_existing);
  fs::copy_file(binary, folder / "sub/add_relu_vulkan.bin", fs::copy_options::overwrite_existing);
  fs::copy_file(binary, kiln::fuzz::scratchDir() / "outside.bin", fs::copy_options::overwrite_existing);
  std::error_code ignored;
  fs::create_symlink("../outside.bin", folder / "escape.bin", ignored);
  ::mkfifo((folder / "fifo.bin").c_str(), 0600);
  return folder;
}

kiln::SessionOptions cpuOptions() {
  kiln::SessionOptions options;
  (void)options.addConfigEntry(kiln::config::kExecutionProviders, "cpu");
  (void)options.addConfigEntry(kiln::config::kIntraOpNumThreads, "1");
  return options;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const fs::path folder = (kiln::fuzz::quietLogging(), modelFolder());
  static const kiln::SessionOptions options = cpuOptions();
  const std::string path = (folder / "model_ctx.onnx").string();
  kiln::fuzz::writeScratchFile("ctx/model_ctx.onnx", data, size);
  kiln::fuzz::note("inspectEpContextModel(path)", kiln::inspectEpContextModel(path));
  kiln::fuzz::note("inspectEpContextModel(bytes)", kiln::inspectEpContextModel(kiln::fuzz::asBytes(data, size), folder.string()));
  kiln::fuzz::note("analyzePartitions", kiln::analyzePartitions(path, options));
  return 0;
}
