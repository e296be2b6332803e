// kiln bench --compare BASE.json NEW.json: is a difference between two saved bench results real?
//
// For every row (mode and driver cache) in both results and every timed phase, the ratio of medians NEW / BASE with
// a 95% confidence interval by bootstrap: both sides' stored samples are resampled with replacement
// (kBootstrapResamples times, a fixed seed, so the same files always give the same answer) and the 2.5% and 97.5%
// percentiles of the resampled median ratios bound it. A change is significant when the interval excludes 1 and the
// ratio differs from 1 by more than the threshold; a significant ratio above 1 is "slower", below 1 "faster",
// anything else "no significant change".
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "kiln/status.h"

namespace kiln::app {

inline constexpr int kBootstrapResamples = 2000;
inline constexpr uint64_t kBootstrapSeed = 34;

struct BenchCompareOptions {
  double thresholdPct = 5;               // smaller changes are never significant
  std::optional<double> failAbovePct;    // a significant slowdown beyond this fails the comparison
};

struct PhaseComparison {
  std::string mode, driverCache, phase;  // phase: the JSON member, e.g. "session_create_ms"
  size_t baseCount = 0, newCount = 0;
  double baseMedian = 0, newMedian = 0;
  double ratio = 0, ciLow = 0, ciHigh = 0;  // NEW / BASE and its 95% bootstrap interval
  std::string verdict;                      // "faster", "slower" or "no significant change"
  bool failing = false;                     // slower by more than failAbovePct
};

struct BenchComparison {
  std::string basePath, newPath, model;
  BenchCompareOptions options;
  std::vector<PhaseComparison> phases;
  std::vector<std::string> notes;  // rows only one side has, differing settings
  bool failed() const;             // any phase failing
};

// The two parsed documents compared; INVALID_ARGUMENT (a usage error) when either is not a kiln bench result with
// samples (schema_version 1), when they measure different models, or when they share no row.
Result<BenchComparison> compareBenchResults(const nlohmann::json& base, const nlohmann::json& next,
                                            const BenchCompareOptions& options);
// The median of sample medians ratio's bootstrap interval, exposed for tests: {low, high} at 95%.
std::pair<double, double> bootstrapMedianRatioInterval(const std::vector<double>& base, const std::vector<double>& next,
                                                       int resamples = kBootstrapResamples,
                                                       uint64_t seed = kBootstrapSeed);

nlohmann::json toJson(const BenchComparison& comparison);
std::string toTable(const BenchComparison& comparison);

}  // namespace kiln::app
