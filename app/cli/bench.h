// kiln bench: cold versus cached session creation, measured honestly. Shared by the orchestrator (cmd_bench.cpp),
// the measured process (bench_worker.cpp) and the report (bench_report.cpp).
//
// Two axes, never mixed: Kiln's caches (the mode) and the driver's own shader cache (`cold`: a new empty cache
// folder for every process; `warm`: one folder per mode, primed by the discarded warm-up, as a deployed app has it).
// speedup_vs_cold compares a mode with `cold` at the same driver-cache state.
#pragma once

#include <nlohmann/json.hpp>

#include <optional>
#include <string>
#include <vector>

namespace kiln::cli {

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

struct Stat {
  double min = 0, median = 0, p90 = 0;
};
Stat summarize(std::vector<double> values);

nlohmann::json toJson(const BenchReport& report);
// The table `kiln bench` prints without --json.
std::string toTable(const BenchReport& report);
// One row per mode and driver-cache state, medians, for spreadsheets.
std::string toCsv(const BenchReport& report);

// The .npy file name the worker writes an input to (--dump-inputs), and onnxruntime-node reads it from.
std::string benchInputFileName(const std::string& inputName);

}  // namespace kiln::cli
