// kiln package SOURCE.onnx --profile A.json --profile B.json --variant fp32,fp16 -o model.kilnpkg: one folder
// holding a compiled variant per (profile, precision) and the source, from which kiln run, InferenceSession and
// the studio pick the variant that fits the device present (kiln/model_package.h). With --plan DIR the compiles
// are left to kiln batch (locally or on Slurm: one compile job per variant in DIR/jobs.json), and
// kiln package --assemble DIR publishes the package once they ran.
#include <cstdio>
#include <filesystem>

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
  std::string plan;      // --plan DIR: stage the package and write DIR/jobs.json instead of compiling
  std::string assemble;  // --assemble DIR: publish the package a plan's compiles filled
  CommonFlags flags;
};

// A kiln batch jobs file with one compile job per variant of `plan`, passing the command line's --config and
// --shape on (the jobs run `kiln compile ... --json` in the plan folder).
nlohmann::json jobsFile(const PackagePlan& plan, const PackageArgs& args) {
  nlohmann::json jobs = nlohmann::json::array();
  for (const auto& variant : plan.variants) {
    std::vector<std::string> argv = {variant.sourceModel, "-o", variant.ctxModel, "--force", "--error-if-no-nodes"};
    if (!variant.profile.empty()) argv.insert(argv.end(), {"--target-profile", variant.profile});
    if (!args.device.empty()) argv.insert(argv.end(), {"--device", args.device});
    for (const auto& [key, value] : variant.config) argv.insert(argv.end(), {"--config", key + "=" + value});
    for (const auto& entry : args.configs) argv.insert(argv.end(), {"--config", entry});
    for (const auto& shape : args.shapes) argv.insert(argv.end(), {"--shape", shape});
    jobs.push_back({{"name", variant.name}, {"command", "compile"}, {"args", argv}});
  }
  return {{"jobs", jobs}};
}

int planOnly(const PackageArgs& args, const PackageOptions& options) {
  auto plan = planPackage(options, args.plan);
  if (!plan.isOk()) return reportError(plan.status(), args.flags);
  const std::string jobs = (std::filesystem::path(plan->folder) / "jobs.json").string();
  const std::string text = jobsFile(*plan, args).dump(2) + "\n";
  if (std::FILE* file = std::fopen(jobs.c_str(), "wb")) {
    std::fwrite(text.data(), 1, text.size(), file);
    std::fclose(file);
  } else {
    return reportError(Status(StatusCode::FAIL, "cannot write " + jobs), args.flags);
  }
  if (args.flags.json) {
    printJson({{"plan", plan->folder}, {"jobs_file", jobs}, {"output", plan->outputFolder}, {"variants", plan->variants.size()}});
  } else if (!args.flags.quiet) {
    std::printf("planned %zu variant(s) of %s in %s\nnext: kiln batch %s [--jobs N | --scheduler slurm]\n"
                "then: kiln package --assemble %s\n",
                plan->variants.size(), plan->outputFolder.c_str(), plan->folder.c_str(), jobs.c_str(), plan->folder.c_str());
  }
  return kExitOk;
}

// The package written (or assembled): JSON, a table, or nothing with --quiet.
int printResult(const ModelPackage& package, const CommonFlags& flags) {
  if (flags.json) {
    printJson(packageJson(package, nullptr));
  } else if (!flags.quiet) {
    printPackage(package, nullptr);
  }
  return kExitOk;
}

int runPackage(const PackageArgs& args) {
  configureLogging(args.flags);
  if (!args.assemble.empty()) {
    if (!args.source.empty() || !args.plan.empty()) {
      return reportError(Status(StatusCode::INVALID_ARGUMENT, "--assemble takes the plan folder alone"), args.flags);
    }
    auto package = assemblePackage(args.assemble, args.force);
    if (!package.isOk()) return reportError(package.status(), args.flags);
    return printResult(*package, args.flags);
  }
  if (args.source.empty()) {
    return reportError(Status(StatusCode::INVALID_ARGUMENT, "give the model to package (or --assemble PLAN)"), args.flags);
  }
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
  if (!args.plan.empty()) return planOnly(args, options);
  ProgressDisplay progress(!args.flags.quiet);
  options.sessionOptions.progress.onProgress = progress.callback();
  auto package = packageModel(options);
  progress.finish();
  if (!package.isOk()) return reportError(package.status(), args.flags);
  return printResult(*package, args.flags);
}

}  // namespace

void registerPackage(CLI::App& app, Commands& commands) {
  auto args = std::make_shared<PackageArgs>();
  CLI::App* cmd = app.add_subcommand("package", "Compile a model for several device profiles and precisions into one "
                                                "model package that loads the variant fitting the device present");
  cmd->add_option("model", args->source, "The ONNX model to package");
  cmd->add_option("--profile", args->profiles, "Device profile JSON to compile for (repeatable; default: the live device)");
  cmd->add_option("--variant", args->precisions, "Precisions: fp32, fp16, autotune (comma-separated or repeated)")
      ->delimiter(',');
  cmd->add_option("-o,--output", args->output, "The package folder to write (default: <model stem>.kilnpkg beside it)");
  cmd->add_flag("--force", args->force, "Replace an existing package folder");
  cmd->add_option("--device", args->device, "Vulkan device for the live-device variants (index or name substring)");
  cmd->add_option("--shape", args->shapes, "NAME=1x3x640x640: fix an input's free dimensions");
  cmd->add_option("--config", args->configs, "KEY=VALUE session config entry for every compile (repeatable)");
  cmd->add_option("--plan", args->plan, "Stage the package in this folder and write its compiles as a kiln batch jobs "
                                        "file (DIR/jobs.json: run it locally or with --scheduler slurm) instead of compiling");
  cmd->add_option("--assemble", args->assemble, "Publish the package a --plan folder's compiles filled (then removes the folder)");
  addCommonFlags(*cmd, args->flags);
  cmd->footer("\nExamples:\n  kiln package det.onnx --profile lavapipe.json --profile gpu.json --variant fp32,fp16 -o det.kilnpkg\n"
              "  kiln package det.onnx --profile a.json --profile b.json -o det.kilnpkg --plan det.plan\n"
              "  kiln batch det.plan/jobs.json --scheduler slurm && kiln package --assemble det.plan\n"
              "  kiln inspect det.kilnpkg\n  kiln run det.kilnpkg");
  cmd->callback([args, &commands] { commands.run = [args] { return runPackage(*args); }; });
}

}  // namespace kiln::cli
