// The ratio of medians of two bench results with bootstrap intervals, and its verdicts (bench_compare.h).
#include "bench_compare.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <random>

#include "bench_report.h"
#include "bench_statistics.h"

namespace kiln::app {
namespace {

struct PhaseName {
  const char* key;
  const char* label;
};
constexpr PhaseName kComparedPhases[] = {{"session_create_ms", "session create"},
                                         {"first_inference_ms", "first inference"},
                                         {"time_to_first_result_ms", "first result"},
                                         {"inference_ms", "steady"}};

const char* phaseLabel(const std::string& key) {
  for (const auto& phase : kComparedPhases) {
    if (key == phase.key) return phase.label;
  }
  return key.c_str();
}

std::string format(const char* pattern, double value) {
  char text[64];
  std::snprintf(text, sizeof text, pattern, value);
  return text;
}

double medianInPlace(std::vector<double>& values) {
  const size_t n = values.size(), mid = n / 2;
  std::nth_element(values.begin(), values.begin() + static_cast<std::ptrdiff_t>(mid), values.end());
  const double upper = values[mid];
  if (n % 2) return upper;
  return (*std::max_element(values.begin(), values.begin() + static_cast<std::ptrdiff_t>(mid)) + upper) / 2;
}

Status notABenchResult(const std::string& which, const std::string& why) {
  return Status(StatusCode::INVALID_ARGUMENT, which + " is not a kiln bench result with samples: " + why);
}

// The document's rows, checked: an array of objects with a name and a driver cache.
Result<const nlohmann::json*> modesOf(const nlohmann::json& document, const std::string& which) {
  if (!document.is_object()) return notABenchResult(which, "not a JSON object");
  if (document.contains("error")) return notABenchResult(which, "it holds an error report");
  if (document.value("kind", std::string()) != "kiln_bench" || !document.contains("schema_version")) {
    return notABenchResult(which, "no \"kind\": \"kiln_bench\" and \"schema_version\" (written by an older kiln bench? "
                                  "run it again)");
  }
  if (!document["schema_version"].is_number_integer() || document["schema_version"].get<int>() != kBenchSchemaVersion) {
    return notABenchResult(which, "schema_version " + document["schema_version"].dump() + ", this kiln reads " +
                                      std::to_string(kBenchSchemaVersion));
  }
  const auto modes = document.find("modes");
  if (modes == document.end() || !modes->is_array()) return notABenchResult(which, "no \"modes\" array");
  for (const auto& mode : *modes) {
    if (!mode.is_object() || !mode.value("name", nlohmann::json()).is_string() ||
        !mode.value("driver_cache", nlohmann::json()).is_string()) {
      return notABenchResult(which, "a row without \"name\" and \"driver_cache\"");
    }
  }
  return &*modes;
}

// The stored samples of one phase of a row (empty when the row has none, e.g. no steady inferences).
Result<std::vector<double>> samplesOf(const nlohmann::json& row, const char* phase, const std::string& which) {
  const auto stat = row.find(phase);
  if (stat == row.end() || !stat->is_object()) return std::vector<double>{};
  const auto samples = stat->find("samples");
  if (samples == stat->end() || !samples->is_array()) {
    return notABenchResult(which, std::string("row ") + row["name"].get<std::string>() + " has no samples for " + phase);
  }
  std::vector<double> values;
  for (const auto& value : *samples) {
    if (!value.is_number() || !std::isfinite(value.get<double>()) || value.get<double>() < 0) {
      return notABenchResult(which, std::string("a sample of ") + phase + " is not a non-negative number");
    }
    values.push_back(value.get<double>());
  }
  return values;
}

std::string modelName(const nlohmann::json& document) {
  const auto model = document.find("model");
  if (model == document.end() || !model->is_string()) return {};
  return std::filesystem::path(model->get<std::string>()).filename().string();
}

}  // namespace

bool BenchComparison::failed() const {
  return std::any_of(phases.begin(), phases.end(), [](const PhaseComparison& p) { return p.failing; });
}

std::pair<double, double> bootstrapMedianRatioInterval(const std::vector<double>& base, const std::vector<double>& next,
                                                       int resamples, uint64_t seed) {
  std::mt19937_64 random(seed);
  std::uniform_int_distribution<size_t> pickBase(0, base.size() - 1), pickNext(0, next.size() - 1);
  std::vector<double> ratios, a(base.size()), b(next.size());
  ratios.reserve(static_cast<size_t>(resamples));
  for (int r = 0; r < resamples; ++r) {
    for (auto& value : a) value = base[pickBase(random)];
    for (auto& value : b) value = next[pickNext(random)];
    const double denominator = medianInPlace(a);
    // A zero base median (a phase too quick for the clock) makes the ratio infinite: it counts as such.
    ratios.push_back(denominator > 0 ? medianInPlace(b) / denominator : INFINITY);
  }
  std::sort(ratios.begin(), ratios.end());
  auto at = [&](double fraction) {
    const size_t index = static_cast<size_t>(std::floor(fraction * static_cast<double>(ratios.size() - 1) + 0.5));
    return ratios[index];
  };
  return {at(0.025), at(0.975)};
}

Result<BenchComparison> compareBenchResults(const nlohmann::json& base, const nlohmann::json& next,
                                            const BenchCompareOptions& options) {
  KILN_ASSIGN_OR_RETURN(const nlohmann::json* baseModes, modesOf(base, "BASE"));
  KILN_ASSIGN_OR_RETURN(const nlohmann::json* newModes, modesOf(next, "NEW"));
  BenchComparison out;
  out.options = options;
  out.model = modelName(base);
  if (out.model != modelName(next)) {
    return Status(StatusCode::INVALID_ARGUMENT, "the results measure different models: '" + modelName(base) +
                                                    "' (BASE) and '" + modelName(next) + "' (NEW)");
  }
  for (const char* setting : {"execution_providers", "inferences_per_run", "duration_s"}) {
    if (base.value(setting, nlohmann::json()) != next.value(setting, nlohmann::json())) {
      out.notes.push_back(std::string(setting) + " differs: " + base.value(setting, nlohmann::json()).dump() +
                          " (BASE), " + next.value(setting, nlohmann::json()).dump() + " (NEW)");
    }
  }
  const double threshold = options.thresholdPct / 100;
  for (const auto& baseRow : *baseModes) {
    const std::string name = baseRow["name"], cache = baseRow["driver_cache"];
    const auto match = std::find_if(newModes->begin(), newModes->end(), [&](const nlohmann::json& row) {
      return row["name"] == name && row["driver_cache"] == cache;
    });
    if (match == newModes->end()) {
      out.notes.push_back(name + "/" + cache + " is only in BASE");
      continue;
    }
    for (const auto& phase : kComparedPhases) {
      KILN_ASSIGN_OR_RETURN(std::vector<double> a, samplesOf(baseRow, phase.key, "BASE"));
      KILN_ASSIGN_OR_RETURN(std::vector<double> b, samplesOf(*match, phase.key, "NEW"));
      if (a.empty() || b.empty()) continue;
      PhaseComparison p;
      p.mode = name;
      p.driverCache = cache;
      p.phase = phase.key;
      p.baseCount = a.size();
      p.newCount = b.size();
      p.baseMedian = describeSamples(a).median;
      p.newMedian = describeSamples(b).median;
      p.ratio = p.baseMedian > 0 ? p.newMedian / p.baseMedian : INFINITY;
      std::tie(p.ciLow, p.ciHigh) = bootstrapMedianRatioInterval(a, b);
      const bool excludesOne = p.ciLow > 1 || p.ciHigh < 1;
      const bool significant = excludesOne && std::fabs(p.ratio - 1) > threshold;
      p.verdict = !significant ? "no significant change" : p.ratio > 1 ? "slower" : "faster";
      p.failing = options.failAbovePct && p.verdict == "slower" && p.ratio - 1 > *options.failAbovePct / 100;
      out.phases.push_back(std::move(p));
    }
  }
  for (const auto& newRow : *newModes) {
    const auto match = std::find_if(baseModes->begin(), baseModes->end(), [&](const nlohmann::json& row) {
      return row["name"] == newRow["name"] && row["driver_cache"] == newRow["driver_cache"];
    });
    if (match == baseModes->end()) {
      out.notes.push_back(newRow["name"].get<std::string>() + "/" + newRow["driver_cache"].get<std::string>() +
                          " is only in NEW");
    }
  }
  if (out.phases.empty()) {
    return Status(StatusCode::INVALID_ARGUMENT, "the results share no mode and driver cache with samples to compare");
  }
  return out;
}

nlohmann::json toJson(const BenchComparison& comparison) {
  nlohmann::json phases = nlohmann::json::array();
  for (const auto& p : comparison.phases) {
    phases.push_back({{"mode", p.mode},
                      {"driver_cache", p.driverCache},
                      {"phase", p.phase},
                      {"base_count", p.baseCount},
                      {"new_count", p.newCount},
                      {"base_median_ms", p.baseMedian},
                      {"new_median_ms", p.newMedian},
                      {"ratio", std::isfinite(p.ratio) ? nlohmann::json(p.ratio) : nlohmann::json()},
                      {"ratio_ci95", {std::isfinite(p.ciLow) ? nlohmann::json(p.ciLow) : nlohmann::json(),
                                      std::isfinite(p.ciHigh) ? nlohmann::json(p.ciHigh) : nlohmann::json()}},
                      {"verdict", p.verdict},
                      {"failing", p.failing}});
  }
  const auto& o = comparison.options;
  return {{"kind", "kiln_bench_compare"},
          {"schema_version", kBenchSchemaVersion},
          {"base", comparison.basePath},
          {"new", comparison.newPath},
          {"model", comparison.model},
          {"threshold_pct", o.thresholdPct},
          {"fail_above_pct", o.failAbovePct ? nlohmann::json(*o.failAbovePct) : nlohmann::json()},
          {"bootstrap", {{"resamples", kBootstrapResamples}, {"seed", kBootstrapSeed}, {"confidence", 0.95}}},
          {"phases", phases},
          {"notes", comparison.notes},
          {"failed", comparison.failed()}};
}

std::string toTable(const BenchComparison& comparison) {
  const auto& o = comparison.options;
  std::string out = "kiln bench --compare: " + comparison.basePath + " (BASE) -> " + comparison.newPath + " (NEW), " +
                    comparison.model + "\n";
  out += "ratio = median(NEW) / median(BASE), ms; 95% CI by bootstrap (" + std::to_string(kBootstrapResamples) +
         " resamples, fixed seed); significant: the CI excludes 1 and the change exceeds " +
         format("%g%%", o.thresholdPct) +
         (o.failAbovePct ? "; fails on a significant slowdown above " + format("%g%%", *o.failAbovePct) : "") + "\n\n";
  char line[512];
  std::snprintf(line, sizeof line, "%-16s %-6s %-16s %5s %5s %10s %10s %8s  %-17s %s\n", "mode", "driver", "phase",
                "n old", "n new", "BASE", "NEW", "ratio", "95% CI", "verdict");
  out += line;
  for (const auto& p : comparison.phases) {
    const std::string ci = "[" + format("%.3f", p.ciLow) + ", " + format("%.3f", p.ciHigh) + "]";
    const std::string verdict = p.verdict + (p.failing ? " (FAIL: above " + format("%g%%", *o.failAbovePct) + ")" : "");
    std::snprintf(line, sizeof line, "%-16s %-6s %-16s %5zu %5zu %10.3f %10.3f %7.3fx  %-17s %s\n", p.mode.c_str(),
                  p.driverCache.c_str(), phaseLabel(p.phase), p.baseCount, p.newCount, p.baseMedian, p.newMedian,
                  p.ratio, ci.c_str(), verdict.c_str());
    out += line;
  }
  for (const auto& note : comparison.notes) out += "note: " + note + "\n";
  size_t slower = 0, faster = 0;
  for (const auto& p : comparison.phases) {
    slower += p.verdict == "slower";
    faster += p.verdict == "faster";
  }
  out += "\n" + std::to_string(slower) + " slower, " + std::to_string(faster) + " faster, " +
         std::to_string(comparison.phases.size() - slower - faster) + " without a significant change" +
         (comparison.failed() ? "; FAILED: a significant regression beyond --fail-above" : "") + "\n";
  return out;
}

}  // namespace kiln::app
