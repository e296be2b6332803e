// kiln compile MODEL...: compiles a model once (ONNX Runtime's Compile API) and writes <stem>_ctx.onnx, whose
// EPContext nodes point at <stem>_vulkan.bin (or embed it); later sessions load those in milliseconds.
// --share compiles several models into one binary with weights deduplicated (ep_weight_sharing_ctx_gen's role).
#include <cstdio>

#include "binary_output.h"
#include "cli_output.h"
#include "compile_settings.h"
#include "commands.h"
#include "kiln/compiler.h"
#include "kiln/progress.h"
#include "progress_display.h"

namespace kiln::cli {
namespace {

// The choices the studio's compile form makes too live in `settings` (one struct, app/common/compile_settings.h);
// the rest is what only the command line has: several models, per-model prefixes, --share, --weightless.
struct CompileArgs {
  std::vector<std::string> models;
  std::vector<std::string> prefixes;
  int embedMode = 0;  // --embed-mode 0|1 (settings.embedMode)
  size_t extThreshold = 1024;  // --ext-threshold: unsigned here, so CLI11 refuses a negative count
  bool share = false;
  bool weightless = false;
  bool force = false;  // --force: compile even when the outputs are up to date
  app::CompileSettings settings;  // inputModel and nodeNamePrefix are set per model
  CommonFlags flags;
};

nlohmann::json resultJson(const std::string& model, const CompileResult& result) {
  nlohmann::json document = {{"model", model},
                             {"output_model", result.outputModelPath},
                             {"epcontext_nodes", result.epContextNodes},
                             {"files_written", result.filesWritten},
                             {"compile_identity", result.compileIdentity},
                             {"reused", result.reused},
                             {"recompile_reasons", result.recompileReasons},
                             {"timings", timingsToJson(result.timings)},
                             {"counters", countersToJson(result.counters)}};
  if (!result.externalInitializersPath.empty()) document["external_initializers"] = result.externalInitializersPath;
  if (!result.binaryPath.empty()) {
    document["binary_path"] = result.binaryPath;
    if (auto info = inspectContextBinary(result.binaryPath); info.isOk()) document["binary"] = toJson(*info);
  }
  return document;
}

void printResult(const std::string& model, const CompileResult& result) {
  if (result.reused) {
    std::printf("%s: %s is up to date (compile identity %s): nothing compiled or written; --force recompiles\n",
                model.c_str(), result.outputModelPath.c_str(), result.compileIdentity.c_str());
    return;
  }
  for (const auto& reason : result.recompileReasons) {
    if (reason != "no output yet") std::printf("%s: recompiling: %s\n", model.c_str(), reason.c_str());
  }
  if (result.epContextNodes == 0) {
    std::printf("%s: no node runs on the Vulkan EP; wrote the optimized model %s\n", model.c_str(),
                result.outputModelPath.c_str());
    return;
  }
  std::printf("%s: %d EPContext node(s) in %s", model.c_str(), result.epContextNodes, result.outputModelPath.c_str());
  if (!result.binaryPath.empty()) std::printf(", binary %s", result.binaryPath.c_str());
  std::printf(" (compiled in %.1f ms)\n", result.timings.session_total_ms);
}

// The options of the settings (one model's input path and prefix are set by the caller; with --share the output is
// the group's folder, which compileModelsSharingContext takes).
Result<ModelCompilationOptions> optionsFrom(const CompileArgs& args, ProgressDisplay& progress) {
  app::CompileSettings settings = args.settings;
  settings.embedMode = args.embedMode == 1;
  settings.externalThreshold = static_cast<int64_t>(args.extThreshold);
  if (args.share) settings.outputModel.clear();
  if (args.weightless) settings.configs.push_back("ep.enable_weightless_ep_context_nodes=1");
  KILN_ASSIGN_OR_RETURN(ModelCompilationOptions options, app::compilationOptionsFor(settings));
  options.sessionOptions().progress.onProgress = progress.callback();
  return options;
}

int runCompile(const CompileArgs& args) {
  configureLogging(args.flags);
  if (args.models.size() > 1 && !args.share) {
    return reportError(Status(StatusCode::INVALID_ARGUMENT, "several models compile together only with --share"),
                       args.flags);
  }
  if (args.share && args.prefixes.size() > 1 && args.prefixes.size() != args.models.size()) {
    return reportError(Status(StatusCode::INVALID_ARGUMENT, "give one --prefix per model with --share"), args.flags);
  }
  ProgressDisplay progress(!args.flags.quiet);
  auto options = optionsFrom(args, progress);
  if (!options.isOk()) return reportError(options.status(), args.flags);
  if (args.share) {
    auto results = compileModelsSharingContext(args.models, *options, args.prefixes, args.settings.outputModel);
    progress.finish();
    if (!results.isOk()) return reportError(results.status(), args.flags);
    if (args.flags.json) {
      nlohmann::json list = nlohmann::json::array();
      for (size_t i = 0; i < results->size(); ++i) list.push_back(resultJson(args.models[i], (*results)[i]));
      printJson({{"models", list}});
    } else if (!args.flags.quiet) {
      for (size_t i = 0; i < results->size(); ++i) printResult(args.models[i], (*results)[i]);
    }
    return kExitOk;
  }
  options->setInputModelPath(args.models.front());
  options->setReuseUpToDateOutputs(!args.force);
  if (!args.prefixes.empty()) options->setNodeNamePrefix(args.prefixes.front());
  auto result = compileModel(*options);
  progress.finish();
  if (!result.isOk()) return reportError(result.status(), args.flags);
  if (args.flags.json) {
    printJson(resultJson(args.models.front(), *result));
  } else if (!args.flags.quiet) {
    printResult(args.models.front(), *result);
  }
  return kExitOk;
}

}  // namespace

void registerCompile(CLI::App& app, Commands& commands) {
  auto args = std::make_shared<CompileArgs>();
  CLI::App* cmd = app.add_subcommand("compile", "Compile a model into an EPContext model (<stem>_ctx.onnx) and its "
                                                "Vulkan context binary (<stem>_vulkan.bin)");
  cmd->add_option("model", args->models, "ONNX model file(s); several only with --share")->required();
  cmd->add_option("-o,--output", args->settings.outputModel,
                  "EPContext model to write (default: <model folder>/<stem>_ctx.onnx); with --share, the folder for "
                  "all outputs");
  cmd->add_option("--embed-mode", args->embedMode, "1: embed the binary in the EPContext node; 0: a separate file")
      ->check(CLI::IsMember({0, 1}));
  cmd->add_option("--prefix", args->prefixes, "Prefix for EPContext node and graph names (with --share: one per model)");
  cmd->add_option("--target-profile", args->settings.targetProfile,
                  "Compile for this device profile (JSON, see kiln devices --profile) instead of a live device");
  cmd->add_option("--device", args->settings.device, "Vulkan device index or name substring (default: the first GPU, else lavapipe)");
  cmd->add_flag("--autotune", args->settings.autotune, "Time candidate kernel configurations and keep the fastest");
  cmd->add_option("--shape", args->settings.shapes, "NAME=1x3x640x640: fix an input's free dimensions");
  cmd->add_option("--ext-initializers", args->settings.externalInitializersFile,
                  "Write initializers of CPU-fallback nodes to this file (relative to the output model)");
  cmd->add_option("--ext-threshold", args->extThreshold, "Smallest initializer (bytes) that goes to --ext-initializers");
  cmd->add_flag("--error-if-exists", args->settings.errorIfOutputExists, "Fail instead of overwriting an existing output model");
  cmd->add_flag("--error-if-no-nodes", args->settings.errorIfNoNodesCompiled, "Fail when no node compiles (default: write the plain model)");
  cmd->add_flag("--share", args->share,
                "Compile all models with shared EP contexts: N ctx models and one binary named after the first model");
  cmd->add_flag("--force", args->force,
                "Compile even when the outputs exist whole with this compile's identity (default: say so and stop)");
  cmd->add_flag("--weightless", args->weightless,
                "Write no weights the source model holds: the binary refers to them (the source must stay)");
  cmd->add_option("--optimization-level", args->settings.optimizationLevel, "none | basic | all (default: basic)");
  cmd->add_option("--config", args->settings.configs, "KEY=VALUE session config entry (repeatable)");
  addCommonFlags(*cmd, args->flags);
  cmd->footer("\nExamples:\n  kiln compile model.onnx\n  kiln compile model.onnx --embed-mode 1 -o out/model_ctx.onnx\n"
              "  kiln compile model.onnx --target-profile gpu.json\n  kiln compile --share a.onnx b.onnx\n"
              "  kiln run model_ctx.onnx");
  cmd->callback([args, &commands] { commands.run = [args] { return runCompile(*args); }; });
}

}  // namespace kiln::cli
