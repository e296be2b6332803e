// kiln bench's report and its three outputs (JSON, table, CSV); the statistics are bench_statistics.cpp's.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>

#include "bench_report.h"

namespace kiln::app {
namespace {

std::string format(const char* pattern, double value) {
  char text[64];
  std::snprintf(text, sizeof text, pattern, value);
  return text;
}

// Milliseconds with the digits that matter at their size: 1234.5, 12.34, 0.123.
std::string formatMs(double value) {
  return format(value >= 100 ? "%.1f" : value >= 1 ? "%.2f" : "%.3f", value);
}
std::string formatOptionalMs(const std::optional<double>& value) { return value ? formatMs(*value) : "-"; }

nlohmann::json optionalJson(const std::optional<double>& value) {
  return value ? nlohmann::json(*value) : nlohmann::json();
}

// The timed phases of a session, in report order; steady inference (many values per sample) is the last.
struct Phase {
  const char* key;    // the JSON member
  const char* label;  // the table's words
  double (*get)(const BenchSample&);
};
double createOf(const BenchSample& s) { return s.sessionCreateMs; }
double firstOf(const BenchSample& s) { return s.firstInferenceMs; }
double firstResultOf(const BenchSample& s) { return s.timeToFirstResultMs(); }
constexpr Phase kSessionPhases[] = {{"session_create_ms", "session create", createOf},
                                    {"first_inference_ms", "first inference", firstOf},
                                    {"time_to_first_result_ms", "first result", firstResultOf}};
constexpr const char* kSteadyKey = "inference_ms";
constexpr const char* kSteadyLabel = "steady";

std::vector<double> valuesOf(const BenchMode& mode, double (*get)(const BenchSample&)) {
  std::vector<double> values;
  for (const auto& sample : mode.samples) values.push_back(get(sample));
  return values;
}

std::vector<double> steadyValues(const BenchMode& mode) {
  std::vector<double> values;
  for (const auto& sample : mode.samples) values.insert(values.end(), sample.inferenceMs.begin(), sample.inferenceMs.end());
  return values;
}

// The memory readings of a row, in MiB: {"peak_resident", "resident_after_session_create", ...} each
// {count, min, median, max}, null where no sample had the reading.
nlohmann::json memoryJson(const BenchMode& mode) {
  using Reading = std::optional<int64_t> BenchMemory::*;
  const std::pair<const char*, Reading> readings[] = {
      {"peak_resident", &BenchMemory::peakKib},
      {"resident_after_session_create", &BenchMemory::afterSessionCreateKib},
      {"resident_after_first_inference", &BenchMemory::afterFirstInferenceKib},
      {"resident_end", &BenchMemory::endKib}};
  nlohmann::json out = nlohmann::json::object();
  for (const auto& [key, reading] : readings) {
    std::vector<double> mib;
    for (const auto& sample : mode.samples) {
      if (const auto& kib = sample.memory.*reading) mib.push_back(static_cast<double>(*kib) / 1024.0);
    }
    const SampleStatistics stats = describeSamples(mib);
    out[key] = mib.empty() ? nlohmann::json()
                           : nlohmann::json{{"count", stats.count}, {"min", stats.min}, {"median", stats.median},
                                            {"max", stats.max}};
  }
  return out;
}

// The median over samples of every key of a per-sample object (timings or counters); keys zero in every sample
// are left out of stages_ms, kept in counters (a zero count is the proof that work was skipped).
nlohmann::json medianByKey(const BenchMode& mode, const char* field, bool dropZero) {
  std::map<std::string, std::vector<double>> byKey;
  std::vector<std::string> order;
  for (const auto& sample : mode.samples) {
    const nlohmann::json& object = field[0] == 't' ? sample.timings : sample.counters;
    for (const auto& [key, value] : object.items()) {
      if (!value.is_number()) continue;
      if (!byKey.count(key)) order.push_back(key);
      byKey[key].push_back(value.get<double>());
    }
  }
  nlohmann::json out = nlohmann::json::object();
  for (const auto& key : order) {
    const double median = describeSamples(byKey[key]).median;
    if (dropZero && median == 0) continue;
    if (field[0] == 'c') {
      out[key] = static_cast<int64_t>(std::llround(median));
    } else {
      out[key] = median;
    }
  }
  return out;
}

const BenchMode* findMode(const BenchReport& report, const std::string& name, const std::string& driverCache) {
  for (const auto& mode : report.modes) {
    if (mode.name == name && mode.driverCache == driverCache && !mode.samples.empty()) return &mode;
  }
  return nullptr;
}

// median(a) / median(b) of the same quantity, or null when either side is missing.
nlohmann::json ratio(const BenchMode* a, const BenchMode* b, double (*get)(const BenchSample&)) {
  if (!a || !b) return nullptr;
  const double denominator = describeSamples(valuesOf(*b, get)).median;
  if (denominator <= 0) return nullptr;
  return describeSamples(valuesOf(*a, get)).median / denominator;
}

// The cached row that answers "fully cached": the ctx model from a file, else embedded, at a driver-cache state.
const BenchMode* fullyCached(const BenchReport& report, const std::string& driverCache) {
  const BenchMode* mode = findMode(report, "epctx-file", driverCache);
  return mode ? mode : findMode(report, "epctx-embed", driverCache);
}

std::string ratioText(const nlohmann::json& value) {
  return value.is_number() ? format("%.2fx", value.get<double>()) : std::string("-");
}

std::string percentText(double fraction) { return format("%.1f%%", fraction * 100); }

// The report's warnings: too few runs for the tail percentiles or the median's interval, and noisy rows.
std::vector<std::string> reportWarnings(const BenchReport& report) {
  std::vector<std::string> warnings;
  const size_t runs = static_cast<size_t>(std::max(report.runs, 0));
  if (runs < kFewRunsWarning) {
    std::string text = std::to_string(runs) + (runs == 1 ? " run" : " runs") + " per row: too few for " +
                       missingPercentilesText(runs);
    if (!medianConfidenceRanks(runs)) text += ", the median's 95% CI (needs 6)";
    warnings.push_back(text + " (use --runs 20 or more)");
  }
  for (const auto& mode : report.modes) {
    std::string noisy;
    auto check = [&](const char* label, const std::vector<double>& values) {
      const SampleStatistics stats = describeSamples(values);
      if (stats.cv && *stats.cv > kHighVariationCv) {
        noisy += (noisy.empty() ? "" : ", ") + std::string(label) + " " + percentText(*stats.cv);
      }
    };
    for (const Phase& phase : kSessionPhases) check(phase.label, valuesOf(mode, phase.get));
    check(kSteadyLabel, steadyValues(mode));
    if (!noisy.empty()) {
      warnings.push_back(mode.name + "/" + mode.driverCache + ": CV above " + percentText(kHighVariationCv) + ": " +
                         noisy + " (a busy machine? more runs narrow the interval, they do not remove the noise)");
    }
  }
  return warnings;
}

}  // namespace

nlohmann::json statisticsJson(const SampleStatistics& s, const std::vector<double>* samples) {
  nlohmann::json out = {{"count", s.count},      {"min", s.min},   {"mean", s.mean},
                        {"median", s.median},    {"p25", s.p25},   {"p75", s.p75},
                        {"p90", optionalJson(s.p90)}, {"p95", optionalJson(s.p95)}, {"p99", optionalJson(s.p99)},
                        {"max", s.max},          {"stddev", optionalJson(s.stddev)}, {"cv", optionalJson(s.cv)}};
  out["median_ci95"] = s.medianCi95 ? nlohmann::json{{"low", s.medianCi95->low},
                                                     {"high", s.medianCi95->high},
                                                     {"lower_rank", s.medianCi95->ranks.lowerRank},
                                                     {"upper_rank", s.medianCi95->ranks.upperRank},
                                                     {"coverage", s.medianCi95->ranks.coverage}}
                                    : nlohmann::json();
  if (samples) out["samples"] = *samples;
  return out;
}

std::string statisticsLine(const SampleStatistics& s) {
  std::string out = "n " + std::to_string(s.count) + ", min " + formatMs(s.min) + ", mean " + formatMs(s.mean) +
                    ", median " + formatMs(s.median);
  if (s.medianCi95) out += " (95% CI " + formatMs(s.medianCi95->low) + " to " + formatMs(s.medianCi95->high) + ")";
  const std::pair<const char*, const std::optional<double>*> tails[] = {{"p90", &s.p90}, {"p95", &s.p95}, {"p99", &s.p99}};
  for (const auto& [name, value] : tails) {
    if (*value) out += std::string(", ") + name + " " + formatMs(**value);
  }
  out += ", max " + formatMs(s.max);
  if (s.stddev) out += ", stddev " + formatMs(*s.stddev);
  if (s.cv) out += ", CV " + percentText(*s.cv);
  return out;
}

std::string variationWarning(const std::string& what, const SampleStatistics& stats) {
  if (!stats.cv || *stats.cv <= kHighVariationCv) return {};
  return what + ": CV " + percentText(*stats.cv) + " is above " + percentText(kHighVariationCv) +
         " (a busy machine, or too few runs to settle)";
}

std::string benchInputFileName(const std::string& inputName) {
  std::string out;
  for (char c : inputName) out += std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_' ? c : '_';
  return "input_" + out + ".npy";
}

nlohmann::json toJson(const BenchReport& report) {
  nlohmann::json modes = nlohmann::json::array();
  for (const auto& mode : report.modes) {
    const BenchMode* cold = mode.driverCache == "n/a" ? nullptr : findMode(report, "cold", mode.driverCache);
    nlohmann::json row = {{"name", mode.name}, {"driver_cache", mode.driverCache}, {"runs", mode.samples.size()}};
    for (const Phase& phase : kSessionPhases) {
      const std::vector<double> values = valuesOf(mode, phase.get);
      row[phase.key] = statisticsJson(describeSamples(values), &values);
    }
    const std::vector<double> steady = steadyValues(mode);
    row[kSteadyKey] = statisticsJson(describeSamples(steady), &steady);
    row["memory_mib"] = memoryJson(mode);
    row["stages_ms"] = medianByKey(mode, "timings", true);
    row["counters"] = medianByKey(mode, "counters", false);
    row["speedup_vs_cold"] = ratio(cold, &mode, createOf);
    row["time_to_first_result_speedup_vs_cold"] = ratio(cold, &mode, firstResultOf);
    modes.push_back(std::move(row));
  }
  nlohmann::json summary = nlohmann::json::object();
  for (const char* state : {"cold", "warm"}) {
    summary[std::string("epctx_session_create_speedup_driver_") + state] =
        ratio(findMode(report, "cold", state), fullyCached(report, state), createOf);
  }
  // Fully cold (no Kiln cache, empty driver cache) against fully cached (ctx model, primed driver cache).
  summary["time_to_first_result_fully_cached_vs_fully_cold"] =
      ratio(findMode(report, "cold", "cold"), fullyCached(report, "warm"), firstResultOf);
  summary["onnxruntime_session_create_vs_epctx"] =
      ratio(findMode(report, kOnnxRuntimeMode, "n/a"), fullyCached(report, "warm"), createOf);
  auto provenance = [&](const char* key) { return report.provenance.value(key, nlohmann::json()); };
  return {{"schema_version", kBenchSchemaVersion},
          {"kind", "kiln_bench"},
          {"kiln", provenance("kiln")},
          {"command_line", provenance("command_line")},
          {"machine", provenance("machine")},
          {"environment", provenance("environment")},
          {"vulkan", provenance("vulkan")},
          {"model", report.model},
          {"device", report.device},
          {"execution_providers", report.executionProviders},
          {"runs", report.runs},
          {"inferences_per_run", report.durationSeconds > 0 ? nlohmann::json() : nlohmann::json(report.inferences)},
          {"duration_s", report.durationSeconds > 0 ? nlohmann::json(report.durationSeconds) : nlohmann::json()},
          {"warmup_time_s", report.warmupSeconds > 0 ? nlohmann::json(report.warmupSeconds) : nlohmann::json()},
          {"autotune", report.autotune},
          {"compile", report.compile},
          {"modes", modes},
          {"summary", summary},
          {"warnings", reportWarnings(report)}};
}

std::string toTable(const BenchReport& report) {
  const nlohmann::json document = toJson(report);
  std::string out = "kiln bench: " + report.model + " on " + report.device + "\n";
  const std::string steady = report.durationSeconds > 0
                                 ? "steady inferences for " + format("%g", report.durationSeconds) + " s per run"
                                 : "steady inferences per run: " + std::to_string(report.inferences);
  out += "runs per row: " + std::to_string(report.runs) + " after a discarded warm-up, fresh processes (in-process: one " +
         "process); " + steady +
         (report.warmupSeconds > 0 ? " after " + format("%g", report.warmupSeconds) + " s of discarded ones" : "") +
         "; ms\nx cold = median(cold) / median(row) at the same driver cache; CI = the median's 95% confidence " +
         "interval (order statistics); a percentile needs enough runs (p90 10, p95 20, p99 100)\n";
  char line[512];
  size_t index = 0;
  for (const auto& mode : report.modes) {
    const nlohmann::json& row = document["modes"][index++];
    out += "\n" + mode.name + " " + mode.driverCache + ": x cold " + ratioText(row["speedup_vs_cold"]) +
           ", first result x cold " + ratioText(row["time_to_first_result_speedup_vs_cold"]) + "\n";
    std::snprintf(line, sizeof line, "  %-16s %6s %9s %9s %9s  %-21s %9s %9s %9s %9s %8s %6s\n", "phase", "n", "min",
                  "mean", "median", "95% CI of median", "p90", "p95", "p99", "max", "stddev", "CV");
    out += line;
    auto printRow = [&](const char* label, const std::vector<double>& values) {
      const SampleStatistics s = describeSamples(values);
      const std::string ci = s.medianCi95 ? formatMs(s.medianCi95->low) + " to " + formatMs(s.medianCi95->high) : "-";
      std::snprintf(line, sizeof line, "  %-16s %6zu %9s %9s %9s  %-21s %9s %9s %9s %9s %8s %6s\n", label, s.count,
                    formatMs(s.min).c_str(), formatMs(s.mean).c_str(), formatMs(s.median).c_str(), ci.c_str(),
                    formatOptionalMs(s.p90).c_str(), formatOptionalMs(s.p95).c_str(), formatOptionalMs(s.p99).c_str(),
                    formatMs(s.max).c_str(), formatOptionalMs(s.stddev).c_str(),
                    s.cv ? percentText(*s.cv).c_str() : "-");
      out += line;
    };
    for (const Phase& phase : kSessionPhases) printRow(phase.label, valuesOf(mode, phase.get));
    printRow(kSteadyLabel, steadyValues(mode));
    const nlohmann::json& memory = row["memory_mib"];
    if (!memory["peak_resident"].is_null()) {
      auto median = [&](const char* key) {
        return memory[key].is_object() ? format("%.1f", memory[key]["median"].get<double>()) : std::string("-");
      };
      out += "  memory (MiB, median): peak resident " + median("peak_resident") + "; resident after session create " +
             median("resident_after_session_create") + ", after first inference " +
             median("resident_after_first_inference") + ", at the end " + median("resident_end") + "\n";
    }
  }
  out += "\nstages (median ms) and counters:\n";
  for (const auto& mode : document["modes"]) {
    if (mode["stages_ms"].empty() && mode["counters"].empty()) continue;
    out += "  " + mode["name"].get<std::string>() + "/" + mode["driver_cache"].get<std::string>() + ":";
    for (const auto& [key, value] : mode["stages_ms"].items()) {
      if (key == "session_total_ms" || key == "first_run_ms") continue;
      out += " " + key.substr(0, key.size() - 3) + "=" + format("%.1f", value.get<double>());
    }
    out += "\n   ";
    for (const auto& [key, value] : mode["counters"].items()) out += " " + key + "=" + std::to_string(value.get<int64_t>());
    out += "\n";
  }
  const nlohmann::json& summary = document["summary"];
  out += "\nepctx session creation vs cold: " + ratioText(summary["epctx_session_create_speedup_driver_cold"]) +
         " (driver cache cold), " + ratioText(summary["epctx_session_create_speedup_driver_warm"]) +
         " (warm); time to first result, fully cached vs fully cold: " +
         ratioText(summary["time_to_first_result_fully_cached_vs_fully_cold"]);
  if (summary["onnxruntime_session_create_vs_epctx"].is_number()) {
    out += "; onnxruntime-node session creation / epctx: " + ratioText(summary["onnxruntime_session_create_vs_epctx"]);
  }
  out += "\n";
  for (const auto& warning : document["warnings"]) out += "warning: " + warning.get<std::string>() + "\n";
  return out;
}

std::string toCsv(const BenchReport& report) { return benchCsv(toJson(report)); }

std::string benchCsv(const nlohmann::json& document) {
  std::string out =
      "model,device,mode,driver_cache,runs,session_create_min_ms,session_create_median_ms,session_create_p90_ms,"
      "first_inference_median_ms,time_to_first_result_median_ms,inference_median_ms,speedup_vs_cold,"
      "time_to_first_result_speedup_vs_cold\n";
  auto quoted = [](const std::string& text) {
    std::string q = "\"";
    for (char c : text) q += c == '"' ? std::string("\"\"") : std::string(1, c);
    return q + "\"";
  };
  auto number = [](const nlohmann::json& value) {
    return value.is_number() ? format("%.3f", value.get<double>()) : std::string();
  };
  auto text = [](const nlohmann::json& object, const char* key) {
    const auto it = object.find(key);
    return it != object.end() && it->is_string() ? it->get<std::string>() : std::string();
  };
  auto integer = [](const nlohmann::json& object, const char* key) {
    const auto it = object.find(key);
    return it != object.end() && it->is_number() ? std::to_string(it->get<int64_t>()) : std::string("0");
  };
  // A missing statistic reads as null (an empty cell), never as an exception.
  auto stat = [](const nlohmann::json& mode, const char* key, const char* which) {
    const auto it = mode.find(key);
    if (it == mode.end() || !it->is_object()) return nlohmann::json();
    return it->value(which, nlohmann::json());
  };
  auto field = [](const nlohmann::json& mode, const char* key) { return mode.value(key, nlohmann::json()); };
  const nlohmann::json noModes = nlohmann::json::array();
  const auto modes = document.find("modes");
  for (const auto& mode : modes != document.end() && modes->is_array() ? *modes : noModes) {
    if (!mode.is_object()) continue;
    out += quoted(text(document, "model")) + "," + quoted(text(document, "device")) + "," + text(mode, "name") + "," +
           text(mode, "driver_cache") + "," + integer(mode, "runs") + "," +
           number(stat(mode, "session_create_ms", "min")) + "," + number(stat(mode, "session_create_ms", "median")) +
           "," + number(stat(mode, "session_create_ms", "p90")) + "," +
           number(stat(mode, "first_inference_ms", "median")) + "," +
           number(stat(mode, "time_to_first_result_ms", "median")) + "," + number(stat(mode, "inference_ms", "median")) +
           "," + number(field(mode, "speedup_vs_cold")) + "," +
           number(field(mode, "time_to_first_result_speedup_vs_cold")) + "\n";
  }
  return out;
}

}  // namespace kiln::app
