// The statistics of one set of timings (or memory readings) that `kiln bench` and `kiln run --runs N` print: the
// definitions live here once, so every row, table and JSON document says the same thing.
//
// Percentiles. p25 and p75 interpolate linearly between the two nearest ranks (numpy's default, as box plots draw
// them); the median averages the two middle values of an even count; p90, p95 and p99 are nearest-rank percentiles
// (the smallest value with at least that fraction of the values at or below it).
//
// The enough-samples rule (enoughSamplesForPercentile): a tail percentile p is reported only when at least one
// sample lies above its rank, i.e. count * (1 - p) >= 1: p90 needs 10 samples, p95 20, p99 100. Below that the
// nearest rank is the maximum, and calling it p99 would claim a tail that was never observed (MLPerf's early
// stopping makes the same point more strictly).
//
// The median's 95% confidence interval uses order statistics (distribution-free, no bootstrap): the number of samples
// below the true median is Binomial(n, 1/2), so [x(k), x(n+1-k)] (1-based ranks) covers the median with probability
// 1 - 2 * P(B <= k-1). k is the largest rank with that coverage >= 95%; for n < 6 no pair of ranks reaches 95%,
// and no interval is reported.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

namespace kiln::app {

// The tail percentiles kiln reports, and the fewest samples each needs (the enough-samples rule above).
inline constexpr double kTailPercentiles[] = {0.90, 0.95, 0.99};
// A coefficient of variation above this makes `kiln bench` and `kiln run` warn that the row is noisy.
inline constexpr double kHighVariationCv = 0.10;
// Fewer runs than this make them warn that the tail percentiles (p90 first) are not reported.
inline constexpr size_t kFewRunsWarning = 10;

// 1-based ranks of the median's confidence interval and the coverage those ranks give (>= the level asked for).
struct RankInterval {
  size_t lowerRank = 0, upperRank = 0;
  double coverage = 0;
};

struct ConfidenceInterval {
  double low = 0, high = 0;
  RankInterval ranks;
};

struct SampleStatistics {
  size_t count = 0;
  double min = 0, max = 0, mean = 0, median = 0;
  double p25 = 0, p75 = 0;
  std::optional<double> p90, p95, p99;     // absent without enough samples
  std::optional<double> stddev, cv;        // sample standard deviation (n - 1) and stddev / mean; need 2 samples
  std::optional<ConfidenceInterval> medianCi95;  // needs 6 samples
};

// True when `count` samples are enough to report the nearest-rank percentile `fraction` (0.9 for p90).
bool enoughSamplesForPercentile(size_t count, double fraction);
// The fewest samples enoughSamplesForPercentile accepts for `fraction` (10 for p90, 100 for p99).
size_t samplesNeededForPercentile(double fraction);
// Ranks [k, n+1-k] whose order statistics cover the median with probability >= `confidence`; none for small n.
std::optional<RankInterval> medianConfidenceRanks(size_t count, double confidence = 0.95);
// The nearest-rank percentile of sorted, non-empty values (no enough-samples check).
double nearestRankPercentile(const std::vector<double>& sorted, double fraction);
// The median of sorted values (0 for none).
double medianOfSorted(const std::vector<double>& sorted);
// Every statistic above of `values` (any order); all zero and absent for none.
SampleStatistics describeSamples(std::vector<double> values);

// "p90 (needs 10), p95 (needs 20)" style text naming the tail percentiles `count` samples are too few for; empty when none.
std::string missingPercentilesText(size_t count);

}  // namespace kiln::app
