// kiln check FILE: the compatibility verdict of a context binary against a device or a device profile, as an
// exit code for scripts: 0 optimal or compatible, 3 unsupported (or compatible with --fail-on-suboptimal, as
// session.fail_on_suboptimal_compiled_model=1 would refuse it), 1 unreadable file.
#include <cstdio>

#include "binary_output.h"
#include "cli_output.h"
#include "commands.h"

namespace kiln::cli {
namespace {

struct CheckArgs {
  std::string file;
  std::string device;
  std::string profile;
  bool failOnSuboptimal = false;
  CommonFlags flags;
};

int runCheck(const CheckArgs& args) {
  configureLogging(args.flags);
  auto verdict = args.profile.empty() ? checkContextBinary(args.file, args.device)
                                      : checkContextBinaryAgainstProfile(args.file, args.profile);
  if (!verdict.isOk()) return reportError(verdict.status(), args.flags);
  if (args.flags.json) {
    printJson(toJson(*verdict));
  } else if (!args.flags.quiet) {
    printText(*verdict);
  }
  const bool refused = verdict->compatibility == Compatibility::UNSUPPORTED ||
                       (args.failOnSuboptimal && verdict->compatibility == Compatibility::COMPATIBLE);
  return refused ? kExitIncompatible : kExitOk;
}

}  // namespace

void registerCheck(CLI::App& app, Commands& commands) {
  auto args = std::make_shared<CheckArgs>();
  CLI::App* cmd = app.add_subcommand("check", "Judge whether a context binary can run here (exit 3 when it cannot)");
  cmd->add_option("file", args->file, "Context binary (<stem>_vulkan.bin)")->required();
  cmd->add_option("--device", args->device, "Vulkan device index or name substring (default: the one compile picks)");
  cmd->add_option("--profile", args->profile, "Judge against this device profile instead of a live device");
  cmd->add_flag("--fail-on-suboptimal", args->failOnSuboptimal, "Exit 3 for 'compatible' too (only 'optimal' passes)");
  addCommonFlags(*cmd, args->flags);
  cmd->footer("\nExit: 0 optimal or compatible, 3 unsupported, 1 unreadable binary, 2 usage.\n"
              "Examples:\n  kiln check model_vulkan.bin\n  kiln check model_vulkan.bin --profile gpu.json --json");
  cmd->callback([args, &commands] { commands.run = [args] { return runCheck(*args); }; });
}

}  // namespace kiln::cli
