// kiln conformance DIR: the ONNX backend node tests through one execution provider.
#include <cstdio>

#include "child_process.h"
#include "cli_output.h"
#include "commands.h"
#include "conformance.h"
#include "progress_display.h"
#include "util_read_file.h"
#include "worker.h"

namespace kiln::cli {
namespace {

struct ConformanceArgs {
  std::string directory = "/usr/share/libonnx-testdata/data/node";
  std::string ep = "cpu";
  std::string filter;
  std::string expectedFailuresFile;
  bool noIsolate = false;
  bool showPassed = false;
  bool listSkipped = false;
  int minPassed = 0;
  double rtol = conformance::Options{}.rtol;
  double atol = conformance::Options{}.atol;
  std::vector<std::string> configs;      // --config KEY=VALUE, for every case's session
  std::vector<std::string> workerCases;  // hidden --worker: run these case folders and report them (worker.h)
  CommonFlags flags;
};

int runConformanceCommand(ConformanceArgs& args) {
  configureLogging(args.flags);
  conformance::Options options;
  options.directory = args.directory;
  options.executionProvider = args.ep;
  options.filter = args.filter;
  options.isolate = !args.noIsolate;
  options.rtol = args.rtol;
  options.atol = args.atol;
  options.workerProgram = app::selfExecutable();
  for (const std::string& spec : args.configs) {
    const size_t eq = spec.find('=');
    if (eq == std::string::npos || eq == 0) {
      return reportError(Status(StatusCode::INVALID_ARGUMENT, "--config wants KEY=VALUE, got '" + spec + "'"),
                         args.flags);
    }
    options.configEntries[spec.substr(0, eq)] = spec.substr(eq + 1);
  }
  if (!args.workerCases.empty()) return conformance::runWorker(args.workerCases, options);
  if (args.expectedFailuresFile.empty()) {
    options.expectedFailures = conformance::builtinExpectedFailures(args.ep);
  } else {
    auto text = readTextFile(args.expectedFailuresFile);
    if (!text.isOk()) return reportError(text.status(), args.flags);
    options.expectedFailures = conformance::parseExpectedFailures(*text);
  }
  ProgressDisplay progress(!args.flags.quiet);
  options.onProgress = progress.callback();
  options.onCase = [&args, &progress](const conformance::CaseResult& r) {
    if (args.flags.json) return;
    if (r.outcome == conformance::Outcome::Passed && !args.showPassed) return;
    // Skips are routine for a non-CPU EP (hundreds of cases use an op it lacks): listed only on request.
    if (r.outcome == conformance::Outcome::Skipped && !args.listSkipped && !args.flags.verbose) return;
    progress.clear();
    std::printf("%-16s %s%s%s\n", conformance::outcomeName(r.outcome), r.name.c_str(), r.detail.empty() ? "" : "  ",
                r.detail.c_str());
    std::fflush(stdout);
  };
  auto summary = conformance::runConformance(options);
  progress.finish();
  if (!summary.isOk()) return reportError(summary.status(), args.flags);
  if (args.flags.json) {
    nlohmann::json cases = nlohmann::json::array();
    for (const auto& c : summary->cases) {
      cases.push_back({{"name", c.name}, {"outcome", conformance::outcomeName(c.outcome)}, {"detail", c.detail},
                       {"ms", c.milliseconds}});
    }
    printJson({{"directory", args.directory}, {"execution_provider", args.ep}, {"passed", summary->passed},
               {"failed", summary->failed}, {"expected_failures", summary->expectedFailures},
               {"skipped", summary->skipped}, {"cases", cases}});
  } else {
    std::printf("%d passed, %d failed, %d skipped (%d expected failures)\n", summary->passed, summary->failed,
                summary->skipped, summary->expectedFailures);
  }
  if (summary->passed < args.minPassed) {
    std::fprintf(stderr, "kiln: error: %d cases passed, --min-passed asks for %d\n", summary->passed, args.minPassed);
    return kExitFailure;
  }
  return summary->failed == 0 ? kExitOk : kExitFailure;
}

}  // namespace

void registerConformance(CLI::App& app, Commands& commands) {
  auto args = std::make_shared<ConformanceArgs>();
  CLI::App* cmd = app.add_subcommand("conformance", "Run ONNX backend node test cases and compare outputs");
  cmd->footer(
      "\nExamples:\n"
      "  kiln conformance /usr/share/libonnx-testdata/data/node\n"
      "  kiln conformance --filter '^test_conv' --show-passed\n"
      "  kiln conformance --json > report.json\n"
      "  kiln conformance --ep vulkan --list-skipped --min-passed 250");
  cmd->add_option("dir", args->directory, "Folder of test cases (default: Debian's libonnx-testdata node cases)");
  cmd->add_option("--ep", args->ep, "Execution provider: cpu or vulkan")->check(CLI::IsMember({"cpu", "vulkan"}));
  cmd->add_option("--filter", args->filter, "Only cases whose name matches this regex");
  cmd->add_option("--config", args->configs, "KEY=VALUE session config entry for every case (repeatable)")
      ->allow_extra_args(false);
  cmd->add_option("--expected-failures", args->expectedFailuresFile,
                  "Expected-failure list (default: the built-in list for the EP)");
  cmd->add_option("--rtol", args->rtol, "Relative tolerance: |actual - expected| <= atol + rtol * |expected|")
      ->check(CLI::NonNegativeNumber);
  cmd->add_option("--atol", args->atol, "Absolute tolerance (default 1e-7, the node tests' own)")
      ->check(CLI::NonNegativeNumber);
  cmd->add_flag("--no-isolate", args->noIsolate, "Run cases in this process (faster; a crash ends the run)");
  cmd->add_flag("--show-passed", args->showPassed, "Print passing cases too");
  cmd->add_flag("--list-skipped", args->listSkipped,
                "Print skipped cases and why (for a non-CPU EP: the nodes it does not take)");
  cmd->add_option("--min-passed", args->minPassed, "Fail (exit 1) when fewer cases pass")
      ->check(CLI::NonNegativeNumber);
  // The isolated run re-executes kiln with a batch of case folders (conformance/worker.h); not for users.
  cmd->add_option("--worker", args->workerCases, "Run these case folders and report each on stdout (internal)")
      ->group("");
  addCommonFlags(*cmd, args->flags);
  cmd->callback([&commands, args] { commands.run = [args] { return runConformanceCommand(*args); }; });
}

}  // namespace kiln::cli
