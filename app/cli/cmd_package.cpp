// kiln package SOURCE.onnx --profile A.json --profile B.json --variant fp32,fp16 -o model.kilnpkg: one folder
// holding a compiled variant per (profile, precision) and the source, from which kiln run, InferenceSession and
// the studio pick the variant that fits the device present (kiln/model_package.h).
#include <cstdio>

#include "cli_output.h"
#include "commands.h"
#include "kiln/model_package.h"
#include "package_output.h"
#include "progress_display.h"

namespace kiln::cli {
namespace {

struct PackageArgs {
  std::string source;
  std::vector<std::string> profiles;
  std::vector<std::string> precisions = {"fp32"};
  std::string output;
  bool force = false;
  std::vector<std::string> shapes;
  std::vector<std::string> configs;
  std::string device;
  CommonFlags flags;
};

int runPackage(const PackageArgs& args) {
  configureLogging(args.flags);
  PackageOptions options;
  options.sourceModel = args.source;
  options.profiles = args.profiles;
  options.precisions = args.precisions;
  options.outputFolder = args.output;
  options.overwrite = args.force;
  if (Status s = applyConfigEntries(args.configs, options.sessionOptions); !s.isOk()) return reportError(s, args.flags);
  if (Status s = applyShapeArguments(args.shapes, options.sessionOptions); !s.isOk()) return reportError(s, args.flags);
  if (!args.device.empty()) {
    if (Status s = options.sessionOptions.addConfigEntry("kiln.vulkan.device", args.device); !s.isOk()) {
      return reportError(s, args.flags);
    }
  }
  if (options.outputFolder.empty()) {
    const std::string stem = args.source.substr(0, args.source.rfind(".onnx"));
    options.outputFolder = stem + ".kilnpkg";
  }
  ProgressDisplay progress(!args.flags.quiet);
  options.sessionOptions.progress.onProgress = progress.callback();
  auto package = packageModel(options);
  progress.finish();
  if (!package.isOk()) return reportError(package.status(), args.flags);
  if (args.flags.json) {
    printJson(packageJson(*package, nullptr));
  } else if (!args.flags.quiet) {
    printPackage(*package, nullptr);
  }
  return kExitOk;
}

}  // namespace

void registerPackage(CLI::App& app, Commands& commands) {
  auto args = std::make_shared<PackageArgs>();
  CLI::App* cmd = app.add_subcommand("package", "Compile a model for several device profiles and precisions into one "
                                                "model package that loads the variant fitting the device present");
  cmd->add_option("model", args->source, "The ONNX model to package")->required();
  cmd->add_option("--profile", args->profiles, "Device profile JSON to compile for (repeatable; default: the live device)");
  cmd->add_option("--variant", args->precisions, "Precisions: fp32, fp16, autotune (comma-separated or repeated)")
      ->delimiter(',');
  cmd->add_option("-o,--output", args->output, "The package folder to write (default: <model stem>.kilnpkg beside it)");
  cmd->add_flag("--force", args->force, "Replace an existing package folder");
  cmd->add_option("--device", args->device, "Vulkan device for the live-device variants (index or name substring)");
  cmd->add_option("--shape", args->shapes, "NAME=1x3x640x640: fix an input's free dimensions");
  cmd->add_option("--config", args->configs, "KEY=VALUE session config entry for every compile (repeatable)");
  addCommonFlags(*cmd, args->flags);
  cmd->footer("\nExamples:\n  kiln package det.onnx --profile lavapipe.json --profile gpu.json --variant fp32,fp16 -o det.kilnpkg\n"
              "  kiln inspect det.kilnpkg\n  kiln run det.kilnpkg");
  cmd->callback([args, &commands] { commands.run = [args] { return runPackage(*args); }; });
}

}  // namespace kiln::cli
