// kiln check FILE: whether a ctx model, a context binary or a plain model can run here, in onnxruntime's four
// compatibility states (kiln/compatibility.h) beside Kiln's verdict, as an exit code for scripts: 0 NOT_APPLICABLE,
// SUPPORTED_OPTIMAL or SUPPORTED_PREFER_RECOMPILATION; 3 UNSUPPORTED (or SUPPORTED_PREFER_RECOMPILATION with
// --fail-on-suboptimal, as session.fail_on_suboptimal_compiled_model=1 would refuse it); 1 unreadable file.
#include <cstdio>

#include "cli_output.h"
#include "commands.h"
#include "kiln/model_package.h"
#include "package_output.h"
#include "kiln/compatibility.h"

namespace kiln::cli {
namespace {

struct CheckArgs {
  std::string file;
  std::string device;
  std::string profile;
  std::string source;
  std::vector<std::string> configs;
  bool failOnSuboptimal = false;
  CommonFlags flags;
};

nlohmann::json toJson(const ModelCompatibility& c) {
  return {{"compatibility", compiledModelCompatibilityName(c.state)},
          {"verdict", c.verdict ? nlohmann::json(compatibilityName(*c.verdict)) : nlohmann::json(nullptr)},
          {"file_kind", c.fileKind},
          {"against", c.against},
          {"reasons", c.reasons},
          {"answered_from", c.fromMetadata ? "metadata" : c.verdict ? "binary" : "model"},
          {"compile_record", c.compileRecord.empty() ? nlohmann::json(nullptr)
                                                     : nlohmann::json::parse(c.compileRecord, nullptr, false)},
          {"source_checked", c.sourceChecked}};
}

void printText(const ModelCompatibility& c) {
  std::printf("compatibility: %s", compiledModelCompatibilityName(c.state));
  if (c.verdict) std::printf(" (verdict %s, against %s)", compatibilityName(*c.verdict), c.against.c_str());
  std::printf("\n");
  for (const auto& reason : c.reasons) std::printf("  - %s\n", reason.c_str());
  if (c.fromMetadata) std::printf("  (from the model's ep_compatibility_info: no binary was read)\n");
  if (!c.sourceChecked.empty()) std::printf("  (source compared: %s)\n", c.sourceChecked.c_str());
}

// A model package: every variant judged, and the one a session here would load (exit 3 when none fits and the
// source would have to be compiled).
int checkPackage(const CheckArgs& args) {
  auto package = readModelPackage(args.file);
  if (!package.isOk()) return reportError(package.status(), args.flags);
  SessionOptions options;
  if (Status s = applyConfigEntries(args.configs, options); !s.isOk()) return reportError(s, args.flags);
  if (!args.device.empty()) {
    if (Status s = options.addConfigEntry("kiln.vulkan.device", args.device); !s.isOk()) return reportError(s, args.flags);
  }
  auto choice = choosePackageVariant(*package, options);
  if (!choice.isOk()) return reportError(choice.status(), args.flags);
  if (args.flags.json) {
    printJson(packageJson(*package, &*choice));
  } else if (!args.flags.quiet) {
    printPackage(*package, &*choice);
  }
  return choice->chosen >= 0 ? kExitOk : kExitIncompatible;
}

int runCheck(const CheckArgs& args) {
  configureLogging(args.flags);
  if (isModelPackage(args.file)) return checkPackage(args);
  CompatibilityQuery query{args.device, args.profile, args.source, nullptr};
  SessionOptions compileOptions;
  if (!args.configs.empty()) {
    if (Status s = applyConfigEntries(args.configs, compileOptions); !s.isOk()) return reportError(s, args.flags);
    query.compileOptions = &compileOptions;
  }
  auto compatibility = getModelCompatibility(args.file, query);
  if (!compatibility.isOk()) return reportError(compatibility.status(), args.flags);
  if (args.flags.json) {
    printJson(toJson(*compatibility));
  } else if (!args.flags.quiet) {
    printText(*compatibility);
  }
  const bool refused = compatibility->state == CompiledModelCompatibility::UNSUPPORTED ||
                       (args.failOnSuboptimal &&
                        compatibility->state == CompiledModelCompatibility::SUPPORTED_PREFER_RECOMPILATION);
  return refused ? kExitIncompatible : kExitOk;
}

}  // namespace

void registerCheck(CLI::App& app, Commands& commands) {
  auto args = std::make_shared<CheckArgs>();
  CLI::App* cmd = app.add_subcommand("check", "Judge whether a compiled model or context binary can run here (exit 3 when it cannot)");
  cmd->add_option("file", args->file, "ctx model (<stem>_ctx.onnx), context binary (<stem>_vulkan.bin) or plain model")->required();
  cmd->add_option("--device", args->device, "Vulkan device index or name substring (default: the one compile picks)");
  cmd->add_option("--profile", args->profile, "Judge against this device profile instead of a live device");
  cmd->add_option("--source", args->source,
                  "The source model now: a ctx model compiled from other content is stale (default: the source its "
                  "compile record names, if that file exists)");
  cmd->add_option("--config", args->configs,
                  "KEY=VALUE compile option one would use now (repeatable): different result-changing options are stale");
  cmd->add_flag("--fail-on-suboptimal", args->failOnSuboptimal,
                "Exit 3 for SUPPORTED_PREFER_RECOMPILATION too (only SUPPORTED_OPTIMAL passes)");
  addCommonFlags(*cmd, args->flags);
  cmd->footer("\nStates (onnxruntime's): NOT_APPLICABLE (no Kiln EPContext node), SUPPORTED_OPTIMAL (verdict optimal),\n"
              "SUPPORTED_PREFER_RECOMPILATION (verdict compatible), UNSUPPORTED (verdict unsupported).\n"
              "A ctx model is stale when its source, its result-changing options or the Kiln version changed:\n"
              "source changed is UNSUPPORTED, the others at best SUPPORTED_PREFER_RECOMPILATION.\n"
              "Exit: 0 supported or not applicable, 3 unsupported, 1 unreadable file, 2 usage.\n"
              "Examples:\n  kiln check model_vulkan.bin\n  kiln check model_ctx.onnx --profile gpu.json --json");
  cmd->callback([args, &commands] { commands.run = [args] { return runCheck(*args); }; });
}

}  // namespace kiln::cli
