// kiln run MODEL: one session, random or file inputs, output summaries and the timing breakdown.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <map>
#include <optional>

#include "bench_report.h"
#include "bench_statistics.h"
#include "cli_output.h"
#include "commands.h"
#include "kiln/pipeline_cache.h"
#include "kiln/session.h"
#include "kiln/value.h"
#include "kiln/tensor_io.h"
#include "model_inputs.h"
#include "node_data.h"
#include "chrome_trace.h"
#include "progress_display.h"
#include "run_concurrency.h"

namespace kiln::cli {
namespace {

struct RunArgs {
  std::string model;
  std::vector<std::string> inputs, shapes, configs;
  std::string outputDir;
  std::string profilePath;  // --profile FILE: node-data JSON of the last run's per-node times
  std::string profileFormat = "node-data";  // --profile-format: node-data or chrome (a Chrome trace)
  std::string ep = "auto";
  int runs = 1;
  double durationSeconds = 0;  // > 0: time runs for this long instead of `runs`
  double warmupSeconds = 0;    // > 0: discarded runs for this long first
  int concurrency = 1;         // > 1: that many sessions run in parallel (run_concurrency.h)
  bool runsGiven = false;
  unsigned seed = 0;
  bool noPipelineCache = false;
  CommonFlags flags;
};

nlohmann::json summarize(const NamedTensor& output) {
  nlohmann::json j = {{"name", output.name}, {"dtype", dataTypeName(output.tensor.dtype())},
                      {"shape", output.tensor.shape()}};
  const Tensor& t = output.tensor;
  if (t.dtype() == DataType::STRING || t.numel() == 0) return j;
  double lo = INFINITY, hi = -INFINITY, sum = 0;
  nlohmann::json head = nlohmann::json::array();
  for (int64_t i = 0; i < t.numel(); ++i) {
    double v = 0;
    switch (t.dtype()) {
      case DataType::FLOAT: v = t.data<float>()[i]; break;
      case DataType::DOUBLE: v = t.data<double>()[i]; break;
      case DataType::FLOAT16: v = static_cast<float>(t.data<Float16>()[i]); break;
      case DataType::INT64: v = static_cast<double>(t.data<int64_t>()[i]); break;
      case DataType::INT32: v = t.data<int32_t>()[i]; break;
      case DataType::UINT8: v = t.data<uint8_t>()[i]; break;
      case DataType::INT8: v = t.data<int8_t>()[i]; break;
      case DataType::BOOL: v = t.data<bool>()[i]; break;
      default: break;
    }
    lo = std::min(lo, v);
    hi = std::max(hi, v);
    sum += v;
    if (i < 5) head.push_back(v);
  }
  j["min"] = lo;
  j["max"] = hi;
  j["mean"] = sum / static_cast<double>(t.numel());
  j["first"] = head;
  return j;
}

std::string safeFileName(const std::string& name) {
  std::string out = name;
  for (char& c : out) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '.' && c != '-' && c != '_') c = '_';
  }
  return out.empty() || out == "." || out == ".." ? "_" + out : out;
}

int runModel(RunArgs& args) {
  configureLogging(args.flags);
  if (args.durationSeconds > 0 && args.runsGiven) {
    return reportError(Status(StatusCode::INVALID_ARGUMENT, "--duration and --runs are alternatives: give one"),
                       args.flags);
  }
  if (args.concurrency > 1 && !args.profilePath.empty()) {
    return reportError(Status(StatusCode::INVALID_ARGUMENT, "--profile times one run of one session: leave out --concurrency"),
                       args.flags);
  }
  SessionOptions options;
  if (args.ep != "auto") {
    Status s = applyExecutionProviders(args.ep, options);
    if (!s.isOk()) return reportError(s, args.flags);
  }
  if (Status s = applyConfigEntries(args.configs, options); !s.isOk()) return reportError(s, args.flags);
  // A profile has the Vulkan partitions' per-dispatch device times (timestamp queries), unless --config says otherwise.
  if (!args.profilePath.empty() && !options.configEntry("kiln.vulkan.profile")) {
    if (Status s = options.addConfigEntry("kiln.vulkan.profile", "1"); !s.isOk()) return reportError(s, args.flags);
  }
  // The Vulkan pipeline cache is on by default for the CLI (engine/ARCHITECTURE.md, Names); an explicit --config entry
  // wins, and the CPU EP alone has no use for it.
  if (!args.noPipelineCache && args.ep != app::kCpuProvider && !options.configEntry("kiln.vulkan.pipeline_cache_path")) {
    auto path = defaultPipelineCachePath(args.model);
    if (path.isOk()) {
      Status s = options.addConfigEntry("kiln.vulkan.pipeline_cache_path", *path);
      if (!s.isOk()) return reportError(s, args.flags);
    }  // else Session::create reports an unreadable model; a missing cache folder just means no cache
  }
  if (Status s = applyShapeArguments(args.shapes, options); !s.isOk()) return reportError(s, args.flags);
  // Session creation is quick once compiled: progress only on request.
  ProgressDisplay progress(args.flags.verbose);
  options.progress.onProgress = progress.callback();
  auto session = Session::create(args.model, options);
  progress.finish();
  if (!session.isOk()) return reportError(session.status(), args.flags);

  auto prepared = app::prepareInputs(**session, args.inputs, args.seed);
  if (!prepared.isOk()) return reportError(prepared.status(), args.flags);
  const std::vector<NamedTensor>& inputs = *prepared;

  // runValues: a model may return sequences or optionals (tensor outputs come back as tensor values).
  std::vector<NamedValue> valueInputs;
  for (const auto& in : inputs) valueInputs.push_back({in.name, Value(in.tensor)});
  std::vector<double> runMs;
  Result<std::vector<NamedValue>> outputs = std::vector<NamedValue>{};
  auto secondsSince = [](std::chrono::steady_clock::time_point start) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  };
  // --warmup-time: discarded runs first (the first run's one-time costs among them).
  for (const auto warmup = std::chrono::steady_clock::now(); secondsSince(warmup) < args.warmupSeconds;) {
    outputs = (*session)->runValues(valueInputs, RunOptions{});
    if (!outputs.isOk()) return reportError(outputs.status(), args.flags);
  }
  // --runs N timed runs, or as many as --duration S holds (at least one). Only the last run is profiled: the others
  // stay free of its clock reads, and with --runs 2 or more the profile leaves out first-run costs; with
  // --duration the profiled run is one more after the timed ones.
  const bool timed = args.durationSeconds > 0;
  const int runs = std::max(1, args.runs);
  std::optional<ConcurrentRuns> concurrent;
  if (args.concurrency > 1) {
    SessionOptions quiet = options;  // the other sessions report no progress
    quiet.progress.onProgress = nullptr;
    auto result = runConcurrently(**session, args.model, quiet, valueInputs, args.concurrency, runs, args.durationSeconds);
    if (!result.isOk()) return reportError(result.status(), args.flags);
    concurrent = std::move(result).value();
    runMs = concurrent->latencyMs;
    outputs = (*session)->runValues(valueInputs, RunOptions{});  // the outputs shown, after the timed runs
    if (!outputs.isOk()) return reportError(outputs.status(), args.flags);
  }
  const auto timedStart = std::chrono::steady_clock::now();
  for (int r = 0; !concurrent && (timed ? r == 0 || secondsSince(timedStart) < args.durationSeconds : r < runs); ++r) {
    RunOptions runOptions;
    runOptions.setProfiling(!args.profilePath.empty() && !timed && r == runs - 1);
    const auto start = std::chrono::steady_clock::now();
    outputs = (*session)->runValues(valueInputs, runOptions);
    runMs.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count());
    if (!outputs.isOk()) return reportError(outputs.status(), args.flags);
  }
  if (timed && !args.profilePath.empty()) {
    RunOptions runOptions;
    runOptions.setProfiling(true);
    outputs = (*session)->runValues(valueInputs, runOptions);
    if (!outputs.isOk()) return reportError(outputs.status(), args.flags);
  }
  const app::SampleStatistics runStats = app::describeSamples(runMs);
  // Warnings on stderr: a noisy series, or one too short for p90 (a single run is what plain `kiln run` is for).
  std::vector<std::string> warnings;
  if (std::string noisy = app::variationWarning("run", runStats); !noisy.empty()) warnings.push_back(noisy);
  if (runMs.size() >= 2 && runMs.size() < app::kFewRunsWarning) {
    warnings.push_back(std::to_string(runMs.size()) + " runs: too few for " + app::missingPercentilesText(runMs.size()) +
                       (app::medianConfidenceRanks(runMs.size()) ? "" : ", the median's 95% CI (needs 6)"));
  }

  nlohmann::json report;
  report["model"] = args.model;
  nlohmann::json partitions = nlohmann::json::array();
  for (const auto& p : (*session)->partitions()) {
    partitions.push_back({{"name", p.name}, {"execution_provider", p.executionProvider}, {"nodes", p.nodeCount}});
  }
  report["partitions"] = partitions;
  report["inputs"] = nlohmann::json::array();
  for (const auto& in : inputs) {
    report["inputs"].push_back({{"name", in.name}, {"dtype", dataTypeName(in.tensor.dtype())}, {"shape", in.tensor.shape()}});
  }
  report["outputs"] = nlohmann::json::array();
  if (!args.outputDir.empty()) {
    std::error_code error;
    std::filesystem::create_directories(args.outputDir, error);
    if (error || !std::filesystem::is_directory(args.outputDir)) {
      return reportError(Status(StatusCode::INVALID_ARGUMENT, "--output-dir '" + args.outputDir +
                                                                  "' is not a folder that can be created"),
                         args.flags);
    }
  }
  // A tensor is summarized (and written as NAME.npy); a sequence lists its tensors (NAME_0.npy, ...); an optional
  // says whether it holds a value and then describes that value.
  std::function<Result<nlohmann::json>(const std::string&, const Value&)> describeOutput =
      [&](const std::string& name, const Value& value) -> Result<nlohmann::json> {
    if (value.isOptional()) {
      nlohmann::json j = {{"name", name}, {"kind", "optional"}, {"has_element", value.hasElement()}};
      if (value.hasElement()) {
        KILN_ASSIGN_OR_RETURN(j["element"], describeOutput(name, value.element()));
      }
      return j;
    }
    if (value.isSequence()) {
      nlohmann::json j = {{"name", name}, {"kind", "sequence"}, {"dtype", dataTypeName(value.elementType())},
                          {"elements", nlohmann::json::array()}};
      for (size_t i = 0; i < value.tensors().size(); ++i) {
        KILN_ASSIGN_OR_RETURN(nlohmann::json element, describeOutput(name + "_" + std::to_string(i), Value(value.tensors()[i])));
        j["elements"].push_back(std::move(element));
      }
      return j;
    }
    nlohmann::json summary = summarize({name, value.tensor()});
    if (!args.outputDir.empty()) {
      const std::string path = (std::filesystem::path(args.outputDir) / (safeFileName(name) + ".npy")).string();
      KILN_RETURN_IF_ERROR(writeNpyFile(path, value.tensor()));
      summary["file"] = path;
    }
    return summary;
  };
  for (const auto& out : *outputs) {
    auto summary = describeOutput(out.name, out.value);
    if (!summary.isOk()) return reportError(summary.status(), args.flags);
    report["outputs"].push_back(std::move(*summary));
  }
  report["timings"] = timingsToJson((*session)->timings());
  report["counters"] = countersToJson((*session)->counters());
  // The statistics of bench_report.h (samples included), plus "runs", the name older readers know the count by.
  report["run_ms"] = app::statisticsJson(runStats, &runMs);
  report["run_ms"]["runs"] = runMs.size();
  report["run_settings"] = {{"runs", timed ? nlohmann::json() : nlohmann::json(runs)},
                            {"duration_s", timed ? nlohmann::json(args.durationSeconds) : nlohmann::json()},
                            {"warmup_time_s", args.warmupSeconds > 0 ? nlohmann::json(args.warmupSeconds)
                                                                     : nlohmann::json()}};
  if (concurrent) {
    report["concurrency"] = {{"sessions", concurrent->sessions}, {"runs", concurrent->latencyMs.size()},
                             {"wall_s", concurrent->wallSeconds}, {"inferences_per_s", concurrent->inferencesPerSecond()}};
  }
  report["warnings"] = warnings;
  if (!args.flags.quiet) {
    for (const auto& warning : warnings) std::fprintf(stderr, "kiln: warning: %s\n", warning.c_str());
  }
  std::vector<NodeTiming> slowest;
  if (!args.profilePath.empty()) {
    const RunProfile profile = (*session)->lastRunProfile();
    const Status written = args.profileFormat == "chrome"
                               ? app::writeChromeTrace(args.profilePath, app::chromeTraceFromProfile(profile, args.model))
                               : app::writeNodeData(args.profilePath, app::nodeDataFromProfile(profile, args.model));
    if (!written.isOk()) return reportError(written, args.flags);
    report["profile"] = {{"file", args.profilePath}, {"format", args.profileFormat}, {"nodes", profile.nodes.size()},
                         {"run_ms", profile.runMs}};
    slowest = profile.nodes;
    std::sort(slowest.begin(), slowest.end(), [](const NodeTiming& a, const NodeTiming& b) { return a.totalMs > b.totalMs; });
    slowest.resize(std::min<size_t>(slowest.size(), 10));
  }

  if (args.flags.json) {
    printJson(report);
    return kExitOk;
  }
  std::printf("model: %s\n", args.model.c_str());
  for (const auto& p : (*session)->partitions()) {
    std::printf("partition %s: %lld nodes on %s\n", p.name.c_str(), static_cast<long long>(p.nodeCount),
                p.executionProvider.c_str());
  }
  for (const auto& out : report["outputs"]) {
    if (out.contains("kind")) {  // sequence or optional: its JSON description is the clearest text form
      std::printf("output %s: %s %s\n", out["name"].get<std::string>().c_str(), out["kind"].get<std::string>().c_str(),
                  out.dump().c_str());
      continue;
    }
    std::printf("output %s: %s %s", out["name"].get<std::string>().c_str(), out["dtype"].get<std::string>().c_str(),
                out["shape"].dump().c_str());
    if (out.contains("min")) {
      std::printf(" min %.6g max %.6g mean %.6g", out["min"].get<double>(), out["max"].get<double>(),
                  out["mean"].get<double>());
    }
    if (out.contains("file")) std::printf(" -> %s", out["file"].get<std::string>().c_str());
    std::printf("\n");
  }
  std::printf("timings (ms):");
  forEachTiming((*session)->timings(), [](std::string_view key, double value) {
    if (value > 0) std::printf(" %.*s=%.3f", static_cast<int>(key.size()), key.data(), value);
  });
  std::printf("\nrun (ms): %s\n", app::statisticsLine(runStats).c_str());
  if (concurrent) {
    std::printf("throughput: %.2f inferences/s with %d sessions in parallel (%zu runs in %.2f s; run (ms) above is "
                "each run's latency under that load)\n",
                concurrent->inferencesPerSecond(), concurrent->sessions, concurrent->latencyMs.size(), concurrent->wallSeconds);
  }
  if (!args.profilePath.empty()) {
    std::printf("slowest nodes of the profiled run (all %zu in %s):\n", report["profile"]["nodes"].get<size_t>(),
                args.profilePath.c_str());
    for (const auto& timing : slowest) {
      std::printf("  %10.3f ms  %-20s %s%s\n", timing.totalMs, timing.opType.c_str(), timing.node.c_str(),
                  timing.covers.empty() ? "" : (" (" + std::to_string(timing.covers.size()) + " nodes on " +
                                                 timing.executionProvider + ")").c_str());
    }
  }
  return kExitOk;
}

}  // namespace

void registerRun(CLI::App& app, Commands& commands) {
  auto args = std::make_shared<RunArgs>();
  CLI::App* run = app.add_subcommand("run", "Run a model once (or --runs times) and print outputs and timings");
  run->footer(
      "\nExamples:\n"
      "  kiln run model.onnx\n"
      "  kiln run det.onnx --shape x=1x3x640x640 --runs 10 --json\n"
      "  kiln run vad.onnx --input input=audio.npy --input state=state.pb --output-dir out/\n"
      "  kiln run det.onnx --shape x=1x3x640x640 --runs 3 --profile det_times.json\n"
      "  kiln run det.onnx --shape x=1x3x640x640 --warmup-time 1 --duration 5   # statistics of 5 s of runs");
  run->add_option("model", args->model, "ONNX model file")->required();
  run->add_option("--input", args->inputs, "NAME=FILE input (.npy or .pb TensorProto); others are random");
  run->add_option("--shape", args->shapes, "NAME=1x3x640x640 shape for a random input with free dimensions");
  run->add_option("--config", args->configs, "KEY=VALUE session config entry (repeatable)");
  run->add_option("--output-dir", args->outputDir, "Write each output as DIR/<output name>.npy");
  run->add_option("--profile", args->profilePath,
                  "Time every node of the last run and write them to FILE as node-data JSON (app/README.md)");
  run->add_option("--profile-format", args->profileFormat,
                  "node-data (kiln-studio overlays it) or chrome (a trace for ui.perfetto.dev / chrome://tracing: "
                  "nodes on a CPU track, each Vulkan dispatch on its partition's device track)")
      ->check(CLI::IsMember({"node-data", "chrome"}));
  run->add_option("--ep", args->ep, "Execution providers in preference order, e.g. vulkan or vulkan,cpu (default: the session's choice)");
  CLI::Option* runs = run->add_option("--runs", args->runs, "Number of inferences to time")->check(CLI::PositiveNumber);
  run->add_option("--duration", args->durationSeconds, "Time inferences for S seconds instead of --runs (at least one)")
      ->check(CLI::PositiveNumber);
  run->add_option("--warmup-time", args->warmupSeconds, "Discarded inferences for S seconds before the timed ones")
      ->check(CLI::PositiveNumber);
  run->add_option("--concurrency", args->concurrency,
                  "N sessions running in parallel, each --runs times (or for --duration): inferences/s and each "
                  "run's latency under that load")
      ->check(CLI::Range(1, 256));
  run->add_option("--seed", args->seed, "Seed for random inputs");
  run->add_flag("--no-pipeline-cache", args->noPipelineCache,
                "Do not use the Vulkan pipeline cache file ($XDG_CACHE_HOME/kiln/<model hash>.vkcache)");
  addCommonFlags(*run, args->flags);
  run->callback([&commands, args, runs] {
    args->runsGiven = runs->count() > 0;
    commands.run = [args] { return runModel(*args); };
  });
}

}  // namespace kiln::cli
