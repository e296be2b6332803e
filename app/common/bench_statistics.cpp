// Percentiles, spread and the median's order-statistic confidence interval (bench_statistics.h defines them).
#include "bench_statistics.h"

#include <algorithm>
#include <cmath>

namespace kiln::app {
namespace {

// Linear interpolation between the two nearest ranks of sorted, non-empty values.
double interpolatedQuantile(const std::vector<double>& sorted, double fraction) {
  const double position = fraction * static_cast<double>(sorted.size() - 1);
  const size_t below = static_cast<size_t>(std::floor(position));
  const size_t above = std::min(below + 1, sorted.size() - 1);
  return sorted[below] + (sorted[above] - sorted[below]) * (position - static_cast<double>(below));
}

// log P(B = k) for B ~ Binomial(n, 1/2), in log space so that large counts (steady inferences) do not overflow.
double logBinomialHalf(size_t n, size_t k) {
  const double nd = static_cast<double>(n), kd = static_cast<double>(k);
  return std::lgamma(nd + 1) - std::lgamma(kd + 1) - std::lgamma(nd - kd + 1) - nd * std::log(2.0);
}

}  // namespace

bool enoughSamplesForPercentile(size_t count, double fraction) {
  // count * (1 - p) >= 1, with a tolerance for 1 - 0.9 not being exactly 0.1 in binary.
  return static_cast<double>(count) * (1.0 - fraction) >= 1.0 - 1e-9;
}

size_t samplesNeededForPercentile(double fraction) {
  return static_cast<size_t>(std::ceil(1.0 / (1.0 - fraction) - 1e-9));
}

std::optional<RankInterval> medianConfidenceRanks(size_t count, double confidence) {
  const double tail = (1.0 - confidence) / 2;
  // P(B <= k - 1) grows with k: keep the largest k whose lower tail stays within (1 - confidence) / 2.
  double below = 0, bestBelow = 0;
  size_t best = 0;
  for (size_t k = 1; k <= (count + 1) / 2; ++k) {
    below += std::exp(logBinomialHalf(count, k - 1));
    if (below > tail + 1e-12) break;
    best = k;
    bestBelow = below;
  }
  if (best == 0) return std::nullopt;
  return RankInterval{best, count + 1 - best, 1.0 - 2.0 * bestBelow};
}

double nearestRankPercentile(const std::vector<double>& sorted, double fraction) {
  // The smallest value with at least `fraction` of the values at or below it: rank ceil(fraction * n).
  const double exact = fraction * static_cast<double>(sorted.size());
  const size_t rank = static_cast<size_t>(std::ceil(exact - 1e-9));
  return sorted[std::clamp<size_t>(rank, 1, sorted.size()) - 1];
}

double medianOfSorted(const std::vector<double>& sorted) {
  const size_t n = sorted.size();
  if (n == 0) return 0;
  return n % 2 ? sorted[n / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2;
}

SampleStatistics describeSamples(std::vector<double> values) {
  SampleStatistics s;
  if (values.empty()) return s;
  std::sort(values.begin(), values.end());
  const size_t n = values.size();
  s.count = n;
  s.min = values.front();
  s.max = values.back();
  s.median = medianOfSorted(values);
  s.p25 = interpolatedQuantile(values, 0.25);
  s.p75 = interpolatedQuantile(values, 0.75);
  std::optional<double>* tails[] = {&s.p90, &s.p95, &s.p99};
  for (size_t i = 0; i < std::size(kTailPercentiles); ++i) {
    if (enoughSamplesForPercentile(n, kTailPercentiles[i])) *tails[i] = nearestRankPercentile(values, kTailPercentiles[i]);
  }
  double sum = 0;
  for (double v : values) sum += v;
  s.mean = sum / static_cast<double>(n);
  if (n >= 2) {
    double squares = 0;
    for (double v : values) squares += (v - s.mean) * (v - s.mean);
    s.stddev = std::sqrt(squares / static_cast<double>(n - 1));
    if (s.mean > 0) s.cv = *s.stddev / s.mean;
  }
  if (auto ranks = medianConfidenceRanks(n)) {
    s.medianCi95 = ConfidenceInterval{values[ranks->lowerRank - 1], values[ranks->upperRank - 1], *ranks};
  }
  return s;
}

std::string missingPercentilesText(size_t count) {
  std::string text;
  for (double fraction : kTailPercentiles) {
    if (enoughSamplesForPercentile(count, fraction)) continue;
    if (!text.empty()) text += ", ";
    text += "p" + std::to_string(static_cast<int>(std::lround(fraction * 100))) + " (needs " +
            std::to_string(samplesNeededForPercentile(fraction)) + ")";
  }
  return text;
}

}  // namespace kiln::app
