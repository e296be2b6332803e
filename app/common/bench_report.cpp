// kiln bench's statistics and its three outputs (JSON, table, CSV).
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

nlohmann::json statJson(const Stat& s) {
  return {{"min", s.min}, {"p25", s.p25}, {"median", s.median}, {"p75", s.p75}, {"p90", s.p90}, {"max", s.max}};
}

// The `fraction` quantile of sorted `values`, interpolated linearly between the two nearest ranks.
double interpolatedQuantile(const std::vector<double>& values, double fraction) {
  const double position = fraction * static_cast<double>(values.size() - 1);
  const size_t below = static_cast<size_t>(std::floor(position));
  const size_t above = std::min(below + 1, values.size() - 1);
  return values[below] + (values[above] - values[below]) * (position - static_cast<double>(below));
}

template <class Get>
Stat statOf(const BenchMode& mode, Get get) {
  std::vector<double> values;
  for (const auto& sample : mode.samples) values.push_back(get(sample));
  return summarize(std::move(values));
}

Stat steadyStat(const BenchMode& mode) {
  std::vector<double> values;
  for (const auto& sample : mode.samples) values.insert(values.end(), sample.inferenceMs.begin(), sample.inferenceMs.end());
  return summarize(std::move(values));
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
    const double median = summarize(byKey[key]).median;
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
template <class Get>
nlohmann::json ratio(const BenchMode* a, const BenchMode* b, Get get) {
  if (!a || !b) return nullptr;
  const double denominator = statOf(*b, get).median;
  if (denominator <= 0) return nullptr;
  return statOf(*a, get).median / denominator;
}

double createOf(const BenchSample& s) { return s.sessionCreateMs; }
double firstResultOf(const BenchSample& s) { return s.timeToFirstResultMs(); }

// The cached row that answers "fully cached": the ctx model from a file, else embedded, at a driver-cache state.
const BenchMode* fullyCached(const BenchReport& report, const std::string& driverCache) {
  const BenchMode* mode = findMode(report, "epctx-file", driverCache);
  return mode ? mode : findMode(report, "epctx-embed", driverCache);
}

std::string ratioText(const nlohmann::json& value) {
  return value.is_number() ? format("%.2fx", value.get<double>()) : std::string("-");
}

}  // namespace

Stat summarize(std::vector<double> values) {
  if (values.empty()) return {};
  std::sort(values.begin(), values.end());
  const size_t n = values.size();
  Stat s;
  s.min = values.front();
  s.max = values.back();
  s.p25 = interpolatedQuantile(values, 0.25);
  s.p75 = interpolatedQuantile(values, 0.75);
  s.median = n % 2 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
  // Nearest rank: the smallest value with at least 90% of the values at or below it.
  const size_t rank = static_cast<size_t>(std::ceil(0.9 * static_cast<double>(n)));
  s.p90 = values[std::max<size_t>(rank, 1) - 1];
  return s;
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
    modes.push_back({{"name", mode.name},
                     {"driver_cache", mode.driverCache},
                     {"runs", mode.samples.size()},
                     {"session_create_ms", statJson(statOf(mode, createOf))},
                     {"first_inference_ms", statJson(statOf(mode, [](const BenchSample& s) { return s.firstInferenceMs; }))},
                     {"time_to_first_result_ms", statJson(statOf(mode, firstResultOf))},
                     {"inference_ms", statJson(steadyStat(mode))},
                     {"stages_ms", medianByKey(mode, "timings", true)},
                     {"counters", medianByKey(mode, "counters", false)},
                     {"speedup_vs_cold", ratio(cold, &mode, createOf)},
                     {"time_to_first_result_speedup_vs_cold", ratio(cold, &mode, firstResultOf)}});
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
  return {{"model", report.model},
          {"device", report.device},
          {"runs", report.runs},
          {"inferences_per_run", report.inferences},
          {"autotune", report.autotune},
          {"compile", report.compile},
          {"modes", modes},
          {"summary", summary}};
}

std::string toTable(const BenchReport& report) {
  const nlohmann::json document = toJson(report);
  std::string out = "kiln bench: " + report.model + " on " + report.device + "\n";
  out += "runs per row: " + std::to_string(report.runs) + " after a discarded warm-up, fresh processes (in-process: one " +
         "process); ms; x cold = median(cold) / median(row) at the same driver cache\n\n";
  char line[512];
  std::snprintf(line, sizeof line, "%-16s %-6s  %-26s %11s %11s %9s %8s %8s\n", "mode", "driver",
                "session create min/med/p90", "first inf", "first result", "steady", "x cold", "x first");
  out += line;
  for (const auto& mode : document["modes"]) {
    auto median = [&](const char* key) { return mode[key]["median"].get<double>(); };
    const std::string create = format("%.1f", mode["session_create_ms"]["min"].get<double>()) + " / " +
                               format("%.1f", median("session_create_ms")) + " / " +
                               format("%.1f", mode["session_create_ms"]["p90"].get<double>());
    std::snprintf(line, sizeof line, "%-16s %-6s  %-26s %11.1f %11.1f %9.2f %8s %8s\n",
                  mode["name"].get<std::string>().c_str(), mode["driver_cache"].get<std::string>().c_str(),
                  create.c_str(), median("first_inference_ms"), median("time_to_first_result_ms"),
                  median("inference_ms"), ratioText(mode["speedup_vs_cold"]).c_str(),
                  ratioText(mode["time_to_first_result_speedup_vs_cold"]).c_str());
    out += line;
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
  return out + "\n";
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
