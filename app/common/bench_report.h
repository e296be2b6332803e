// kiln bench's report: cold versus cached session creation, measured honestly. The model shared by the orchestrator
// (app/cli/cmd_bench.cpp) and the measured process (app/cli/bench_worker.cpp), its statistics and its JSON, table and
// CSV writers; the studio's bench panel (app/bridge/bench_report_io.cpp) writes its CSV here too.
//
// Two axes, never mixed: Kiln's caches (the mode) and the driver's own shader cache (`cold`: a new empty cache
// folder for every process; `warm`: one folder per mode, primed by the discarded warm-up, as a deployed app has it).
// speedup_vs_cold compares a mode with `cold` at the same driver-cache state.
#pragma once

#include <nlohmann/json.hpp>

#include <optional>
#include <string>
#include <vector>

namespace kiln::app {

// Modes, in report order. Every mode but in-process runs in fresh processes.
inline constexpr const char* kBenchModes[] = {"cold", "pipeline-cache", "epctx-embed", "epctx-file", "in-process"};
inline constexpr const char* kOnnxRuntimeMode = "onnxruntime-node";

// One measured session.
struct BenchSample {
  double sessionCreateMs = 0;
  double firstInferenceMs = 0;
  std::vector<double> inferenceMs;  // steady inferences after the first
  nlohmann::json timings = nlohmann::json::object();
  nlohmann::json counters = nlohmann::json::object();

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
  int inferences = 0;
  bool autotune = false;
  nlohmann::json compile = nullptr;  // what `kiln compile` reported for the epctx modes, when they ran
  std::vector<BenchMode> modes;
};

// {min, p25, median, p75, p90, max} of a set of milliseconds (a box plot's five numbers, plus p90); all 0 for no
// values.
struct Stat {
  double min = 0, median = 0, p90 = 0;
  double p25 = 0, p75 = 0, max = 0;
};
// The median averages the two middle values of an even count; p25 and p75 interpolate linearly between the two
// nearest ranks (numpy's default percentile, as box plots usually draw it; the median is their p50); p90 is the
// nearest rank (the smallest value with at least 90% of the values at or below it).
Stat summarize(std::vector<double> values);

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
