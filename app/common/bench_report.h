// kiln bench's report: cold versus cached session creation, measured honestly. The model shared by the orchestrator
// (app/cli/cmd_bench.cpp) and the measured process (app/cli/bench_worker.cpp), its statistics and its JSON, table and
// CSV writers; the studio's bench panel (app/bridge/bench_report_io.cpp) writes its CSV here too.
//
// Two axes, never mixed: Kiln's caches (the mode) and the driver's own shader cache (`cold`: a new empty cache
// folder for every process; `warm`: one folder per mode, primed by the discarded warm-up, as a deployed app has it).
// speedup_vs_cold compares a mode with `cold` at the same driver-cache state.
//
// The JSON (toJson) follows resources/bench/bench_schema.json, versioned by kBenchSchemaVersion: every timing is a
// statistics object (bench_statistics.h: counts, percentiles under the enough-samples rule, spread, the median's 95%
// interval) that also stores its raw samples, so `kiln bench --compare` can bootstrap two saved results.
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "bench_statistics.h"

namespace kiln::app {

// Modes, in report order. Every mode but in-process runs in fresh processes.
inline constexpr const char* kBenchModes[] = {"cold", "pipeline-cache", "epctx-embed", "epctx-file", "in-process"};
inline constexpr const char* kOnnxRuntimeMode = "onnxruntime-node";

// The version of the JSON document toJson writes (bench_schema.json's "schema_version"); raised on any change a
// reader could trip on.
inline constexpr int kBenchSchemaVersion = 1;

// A worker process's resident memory (process_memory.h) at the end of each phase of one session, in KiB; absent
// where the OS did not say. Peak is the process's high-water mark so far (in-process rows share one process).
struct BenchMemory {
  std::optional<int64_t> afterSessionCreateKib, afterFirstInferenceKib, endKib, peakKib;
};

// One measured session.
struct BenchSample {
  double sessionCreateMs = 0;
  double firstInferenceMs = 0;
  std::vector<double> inferenceMs;  // steady inferences after the first
  nlohmann::json timings = nlohmann::json::object();
  nlohmann::json counters = nlohmann::json::object();
  BenchMemory memory;

  double timeToFirstResultMs() const { return sessionCreateMs + firstInferenceMs; }
};

struct BenchMode {
  std::string name;
  std::string driverCache;  // "cold", "warm", or "n/a" (onnxruntime-node on the CPU)
  std::vector<BenchSample> samples;
};

struct BenchReport {
  std::string model;
  std::string device;
  int runs = 0;
  int inferences = 0;         // steady inferences per run, when counted (durationSeconds 0)
  double durationSeconds = 0;  // steady inferences for this long per run instead (--duration), else 0
  double warmupSeconds = 0;    // discarded steady inferences for this long before them (--warmup-time), else 0
  std::string executionProviders;
  bool autotune = false;
  // Where the numbers were measured (bench_environment.h): kiln, command_line, machine, environment, vulkan.
  nlohmann::json provenance = nlohmann::json::object();
  nlohmann::json compile = nullptr;  // what `kiln compile` reported for the epctx modes, when they ran
  std::vector<BenchMode> modes;
};

// A statistics object of the JSON (bench_schema.json's "statistics"): count, min, mean, median, p25, p75, p90, p95,
// p99 (null without enough samples), max, stddev, cv, median_ci95 ({low, high, lower_rank, upper_rank, coverage} or
// null) and, when `samples` is given, the raw samples in measurement order.
nlohmann::json statisticsJson(const SampleStatistics& stats, const std::vector<double>* samples = nullptr);
// "n 10, min 1.20, mean 1.31, median 1.25 (95% CI 1.21 to 1.30), p90 1.40, max 1.52, stddev 0.10, CV 7.6%":
// the statistics on one line (kiln run's text output); percentiles without enough samples are left out.
std::string statisticsLine(const SampleStatistics& stats);
// The warnings a row of statistics earns: a CV above kHighVariationCv. `what` names the row ("cold/warm session
// create"); empty when none.
std::string variationWarning(const std::string& what, const SampleStatistics& stats);

nlohmann::json toJson(const BenchReport& report);
// The table `kiln bench` prints without --json.
std::string toTable(const BenchReport& report);
// One row per mode and driver-cache state, medians, for spreadsheets.
std::string toCsv(const BenchReport& report);
// The same CSV from a report's JSON document (toJson's, or a saved one): missing numbers become empty cells.
std::string benchCsv(const nlohmann::json& document);

// The .npy file name the worker writes an input to (--dump-inputs), and onnxruntime-node reads it from.
std::string benchInputFileName(const std::string& inputName);

}  // namespace kiln::app
