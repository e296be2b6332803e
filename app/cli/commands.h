// Subcommand registration: each registerX adds its CLI11 subcommand and, when chosen, sets `run`.
#pragma once

#include <CLI/CLI.hpp>

#include <functional>

namespace kiln::cli {

struct Commands {
  std::function<int()> run;  // the chosen subcommand's action; returns the exit code
};

void registerRun(CLI::App& app, Commands& commands);
void registerConformance(CLI::App& app, Commands& commands);
void registerPartition(CLI::App& app, Commands& commands);
void registerDevices(CLI::App& app, Commands& commands);
void registerCompile(CLI::App& app, Commands& commands);
void registerInspect(CLI::App& app, Commands& commands);
void registerCheck(CLI::App& app, Commands& commands);
void registerMerge(CLI::App& app, Commands& commands);
// kiln package: compiled variants per device profile and precision in one model package.
void registerPackage(CLI::App& app, Commands& commands);
// kiln bench and its hidden measured process, kiln bench-worker.
void registerBench(CLI::App& app, Commands& commands);
void registerBenchWorker(CLI::App& app, Commands& commands);
void registerBatch(CLI::App& app, Commands& commands);
// kiln compare: two configurations of a model, every output compared; --bisect, --reproducer.
void registerCompare(CLI::App& app, Commands& commands);
// kiln diff: what differs between two models (kiln/model_diff.h); exit 0 identical, 1 different, 2 trouble.
void registerDiff(CLI::App& app, Commands& commands);
// Hidden: kiln help-man and kiln help-completion, the man pages and shell completion from these definitions.
// Register last: they walk the subcommands registered before them.
void registerHelpDocs(CLI::App& app, Commands& commands);

}  // namespace kiln::cli
