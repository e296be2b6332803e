// kiln compile MODEL: compiles the model's Vulkan partitions once and writes the context binary
// (<stem>_vulkan.bin) that later sessions load without glslang, optimization or prepacking.
#include <cstdio>

#include "binary_output.h"
#include "cli_output.h"
#include "commands.h"
#include "kiln/compiler.h"
#include "kiln/progress.h"

namespace kiln::cli {
namespace {

struct CompileArgs {
  std::string model;
  std::string output;
  std::string targetProfile;
  std::string device;
  std::vector<std::string> configs;
  CommonFlags flags;
};

int runCompile(const CompileArgs& args) {
  configureLogging(args.flags);
  SessionOptions options;
  Status status = applyConfigEntries(args.configs, options);
  if (status.isOk() && !args.targetProfile.empty()) {
    status = options.addConfigEntry("kiln.vulkan.target_profile", args.targetProfile);
  }
  if (status.isOk() && !args.device.empty()) status = options.addConfigEntry("kiln.vulkan.device", args.device);
  if (!status.isOk()) return reportError(status, args.flags);
  if (args.flags.verbose) {
    options.progress.onProgress = [](const ProgressEvent& e) {
      std::fprintf(stderr, "kiln: %s %lld/%lld\n", e.stage.c_str(), static_cast<long long>(e.done),
                   static_cast<long long>(e.total));
    };
  }
  auto compiled = compileContextBinary(args.model, args.output, options);
  if (!compiled.isOk()) return reportError(compiled.status(), args.flags);
  if (args.flags.json) {
    printJson({{"model", args.model},
               {"binary", toJson(compiled->info)},
               {"timings", timingsToJson(compiled->timings)},
               {"counters", countersToJson(compiled->counters)}});
    return kExitOk;
  }
  std::printf("wrote %s (%llu bytes, %zu graphs, %zu SPIR-V modules) in %.1f ms\n", compiled->path.c_str(),
              static_cast<unsigned long long>(compiled->info.fileSize), compiled->info.graphs.size(),
              compiled->info.spirvModules.size(), compiled->timings.session_total_ms);
  return kExitOk;
}

}  // namespace

void registerCompile(CLI::App& app, Commands& commands) {
  auto args = std::make_shared<CompileArgs>();
  CLI::App* cmd = app.add_subcommand("compile", "Compile a model's Vulkan partitions into a context binary");
  cmd->add_option("model", args->model, "ONNX model file")->required();
  cmd->add_option("-o,--output", args->output, "Context binary to write (default: <model folder>/<stem>_vulkan.bin)");
  cmd->add_option("--target-profile", args->targetProfile,
                  "Compile for this device profile (JSON, see kiln devices --profile) instead of a live device");
  cmd->add_option("--device", args->device, "Vulkan device index or name substring (default: the first GPU, else lavapipe)");
  cmd->add_option("--config", args->configs, "KEY=VALUE session config entry (repeatable)");
  addCommonFlags(*cmd, args->flags);
  cmd->footer("\nExamples:\n  kiln compile model.onnx\n  kiln compile model.onnx --target-profile gpu.json -o out/model_vulkan.bin\n"
              "  kiln inspect model_vulkan.bin");
  cmd->callback([args, &commands] { commands.run = [args] { return runCompile(*args); }; });
}

}  // namespace kiln::cli
