// kiln inspect FILE: everything a context binary holds (header, section table, graphs, SPIR-V, weights and their
// deduplication) and its verdict against the current device (or a device profile).
#include <cstdio>

#include "binary_output.h"
#include "cli_output.h"
#include "commands.h"

namespace kiln::cli {
namespace {

struct InspectArgs {
  std::string file;
  std::string device;
  std::string profile;
  CommonFlags flags;
};

Result<CompatibilityVerdict> verdictFor(const std::string& file, const std::string& device, const std::string& profile) {
  return profile.empty() ? checkContextBinary(file, device) : checkContextBinaryAgainstProfile(file, profile);
}

int runInspect(const InspectArgs& args) {
  configureLogging(args.flags);
  auto info = inspectContextBinary(args.file);
  if (!info.isOk()) return reportError(info.status(), args.flags);
  // No device is not an error for inspection: the verdict says why it is missing.
  auto verdict = verdictFor(args.file, args.device, args.profile);
  if (args.flags.json) {
    nlohmann::json document = toJson(*info);
    document["verdict"] = verdict.isOk() ? toJson(*verdict) : nlohmann::json{{"error", verdict.status().toString()}};
    printJson(document);
    return kExitOk;
  }
  printText(*info);
  if (verdict.isOk()) {
    printText(*verdict);
  } else {
    std::printf("verdict: not available (%s)\n", verdict.status().toString().c_str());
  }
  return kExitOk;
}

}  // namespace

void registerInspect(CLI::App& app, Commands& commands) {
  auto args = std::make_shared<InspectArgs>();
  CLI::App* cmd = app.add_subcommand("inspect", "Show a context binary's header, sections, graphs, SPIR-V and weights");
  cmd->add_option("file", args->file, "Context binary (<stem>_vulkan.bin)")->required();
  cmd->add_option("--device", args->device, "Judge against this Vulkan device (index or name substring)");
  cmd->add_option("--profile", args->profile, "Judge against this device profile instead of a live device");
  addCommonFlags(*cmd, args->flags);
  cmd->footer("\nExamples:\n  kiln inspect model_vulkan.bin\n  kiln inspect model_vulkan.bin --json --profile gpu.json");
  cmd->callback([args, &commands] { commands.run = [args] { return runInspect(*args); }; });
}

}  // namespace kiln::cli
