// kiln bench-worker (hidden): one measured process of `kiln bench`. Creates S sessions one after another in this
// process, and for each times session creation, the first inference and K steady inferences (or steady inferences
// for --duration seconds, after --warmup-time seconds of discarded ones), then prints
// {"sessions": [{"session_create_ms", "first_inference_ms", "inference_ms": [...], "timings", "counters",
//                "memory_kib": {"after_session_create", "after_first_inference", "end", "peak"}}]}.
// The memory is the OS's (VmRSS, getrusage), read at the end of each phase; peak is the process's high-water mark.
// `kiln bench` re-executes kiln with it so that every fresh-process run measures exactly the same code.
#include <chrono>
#include <filesystem>

#include "bench_report.h"
#include "cli_output.h"
#include "commands.h"
#include "kiln/tensor_io.h"
#include "model_inputs.h"
#include "process_memory.h"

namespace kiln::cli {

using app::benchInputFileName;
namespace {

struct WorkerArgs {
  std::string model;
  std::string ep = app::kVulkanProvider;
  std::vector<std::string> configs, shapes, inputs;
  int sessions = 1;
  int inferences = 5;
  double durationSeconds = 0;  // > 0: steady inferences for this long instead of `inferences`
  double warmupSeconds = 0;    // > 0: discarded steady inferences for this long first
  unsigned seed = 1;
  std::string dumpInputs;
};

double msSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
}

nlohmann::json kibOrNull(const std::optional<int64_t>& kib) { return kib ? nlohmann::json(*kib) : nlohmann::json(); }

int runWorker(const WorkerArgs& args) {
  CommonFlags flags;
  flags.json = true;
  flags.quiet = true;
  configureLogging(flags);
  SessionOptions options;
  Status status = applyExecutionProviders(args.ep, options);
  if (status.isOk()) status = applyConfigEntries(args.configs, options);
  if (status.isOk()) status = applyShapeArguments(args.shapes, options);
  if (!status.isOk()) return reportError(status, flags);

  nlohmann::json sessions = nlohmann::json::array();
  std::vector<NamedTensor> inputs;
  for (int s = 0; s < args.sessions; ++s) {
    const auto start = std::chrono::steady_clock::now();
    auto session = Session::create(args.model, options);
    const double createMs = msSince(start);
    if (!session.isOk()) return reportError(session.status(), flags);
    nlohmann::json memory = {{"after_session_create", kibOrNull(app::residentKib())}};
    if (inputs.empty()) {
      auto prepared = app::prepareInputs(**session, args.inputs, args.seed);
      if (!prepared.isOk()) return reportError(prepared.status(), flags);
      inputs = std::move(prepared).value();
      if (!args.dumpInputs.empty()) {
        for (const auto& input : inputs) {
          const auto path = std::filesystem::path(args.dumpInputs) / (benchInputFileName(input.name));
          Status written = writeNpyFile(path.string(), input.tensor);
          if (!written.isOk()) return reportError(written, flags);
        }
      }
    }
    auto first = std::chrono::steady_clock::now();
    auto outputs = (*session)->run(inputs);
    const double firstMs = msSince(first);
    if (!outputs.isOk()) return reportError(outputs.status(), flags);
    memory["after_first_inference"] = kibOrNull(app::residentKib());
    const auto warmupStart = std::chrono::steady_clock::now();
    while (args.warmupSeconds > 0 && msSince(warmupStart) < args.warmupSeconds * 1000) {
      outputs = (*session)->run(inputs);
      if (!outputs.isOk()) return reportError(outputs.status(), flags);
    }
    // Counted, or timed: at least one steady inference when a duration is given, however short.
    nlohmann::json steady = nlohmann::json::array();
    const auto steadyStart = std::chrono::steady_clock::now();
    for (int k = 0; args.durationSeconds > 0 ? k == 0 || msSince(steadyStart) < args.durationSeconds * 1000
                                             : k < args.inferences;
         ++k) {
      const auto begin = std::chrono::steady_clock::now();
      outputs = (*session)->run(inputs);
      steady.push_back(msSince(begin));
      if (!outputs.isOk()) return reportError(outputs.status(), flags);
    }
    memory["end"] = kibOrNull(app::residentKib());
    memory["peak"] = kibOrNull(app::peakResidentKib());
    sessions.push_back({{"session_create_ms", createMs},
                        {"first_inference_ms", firstMs},
                        {"inference_ms", steady},
                        {"timings", timingsToJson((*session)->timings())},
                        {"counters", countersToJson((*session)->counters())},
                        {"memory_kib", memory}});
  }
  nlohmann::json names = nlohmann::json::array();
  for (const auto& input : inputs) names.push_back(input.name);
  printJson({{"model", args.model}, {"inputs", names}, {"sessions", sessions}});
  return kExitOk;
}

}  // namespace

void registerBenchWorker(CLI::App& app, Commands& commands) {
  auto args = std::make_shared<WorkerArgs>();
  CLI::App* worker = app.add_subcommand("bench-worker", "One measured process of kiln bench (internal)");
  worker->group("");  // hidden from kiln --help
  worker->add_option("model", args->model, "ONNX or ctx model")->required();
  worker->add_option("--ep", args->ep, "kiln.execution_providers");
  worker->add_option("--config", args->configs, "KEY=VALUE session config entry");
  worker->add_option("--shape", args->shapes, "NAME=1x3x640x640");
  worker->add_option("--input", args->inputs, "NAME=FILE");
  worker->add_option("--sessions", args->sessions, "Sessions created one after another")->check(CLI::PositiveNumber);
  worker->add_option("--inferences", args->inferences, "Steady inferences per session after the first")
      ->check(CLI::NonNegativeNumber);
  worker->add_option("--duration", args->durationSeconds, "Steady inferences for S seconds instead of --inferences")
      ->check(CLI::NonNegativeNumber);
  worker->add_option("--warmup-time", args->warmupSeconds, "Discarded steady inferences for S seconds first")
      ->check(CLI::NonNegativeNumber);
  worker->add_option("--seed", args->seed, "Seed for random inputs");
  worker->add_option("--dump-inputs", args->dumpInputs, "Write the inputs used as DIR/<name>.npy");
  worker->callback([&commands, args] { commands.run = [args] { return runWorker(*args); }; });
}

}  // namespace kiln::cli
