// The statistics every kiln bench and kiln run timing row prints (app/common/bench_statistics.h), against values
// computed by hand.
#include <gtest/gtest.h>

#include <cmath>

#include "bench_statistics.h"

namespace kiln::app {
namespace {

std::vector<double> oneTo(int n, bool reversed = true) {
  std::vector<double> values;
  for (int i = 1; i <= n; ++i) values.push_back(reversed ? n + 1 - i : i);
  return values;
}

TEST(BenchStatistics, EnoughSamplesRuleNeedsOneSampleAboveTheRank) {
  EXPECT_EQ(samplesNeededForPercentile(0.90), 10u);
  EXPECT_EQ(samplesNeededForPercentile(0.95), 20u);
  EXPECT_EQ(samplesNeededForPercentile(0.99), 100u);
  EXPECT_FALSE(enoughSamplesForPercentile(9, 0.90));
  EXPECT_TRUE(enoughSamplesForPercentile(10, 0.90));
  EXPECT_FALSE(enoughSamplesForPercentile(19, 0.95));
  EXPECT_TRUE(enoughSamplesForPercentile(20, 0.95));
  EXPECT_FALSE(enoughSamplesForPercentile(99, 0.99));
  EXPECT_TRUE(enoughSamplesForPercentile(100, 0.99));
  EXPECT_EQ(missingPercentilesText(5), "p90 (needs 10), p95 (needs 20), p99 (needs 100)");
  EXPECT_EQ(missingPercentilesText(20), "p99 (needs 100)");
  EXPECT_EQ(missingPercentilesText(100), "");
}

TEST(BenchStatistics, TailPercentilesAreNearestRankAndOnlyWithEnoughSamples) {
  const SampleStatistics nine = describeSamples(oneTo(9));
  EXPECT_FALSE(nine.p90 || nine.p95 || nine.p99);
  const SampleStatistics ten = describeSamples(oneTo(10));
  ASSERT_TRUE(ten.p90);
  EXPECT_EQ(*ten.p90, 9);  // rank ceil(0.9 * 10) = 9: one sample (10) above it
  EXPECT_FALSE(ten.p95);
  const SampleStatistics twenty = describeSamples(oneTo(20));
  EXPECT_EQ(*twenty.p90, 18);
  EXPECT_EQ(*twenty.p95, 19);
  EXPECT_FALSE(twenty.p99);
  const SampleStatistics hundred = describeSamples(oneTo(100));
  EXPECT_EQ(*hundred.p90, 90);
  EXPECT_EQ(*hundred.p95, 95);
  EXPECT_EQ(*hundred.p99, 99);
  EXPECT_EQ(nearestRankPercentile({1, 2, 3, 4}, 0.9), 4);  // rank ceil(3.6) = 4
  EXPECT_EQ(nearestRankPercentile(oneTo(11, false), 0.9), 10);  // rank ceil(9.9) = 10
}

TEST(BenchStatistics, MedianQuartilesMinMax) {
  EXPECT_EQ(describeSamples({}).count, 0u);
  EXPECT_EQ(describeSamples({}).median, 0);
  const SampleStatistics one = describeSamples({5});
  EXPECT_EQ(one.count, 1u);
  EXPECT_EQ(one.min, 5);
  EXPECT_EQ(one.median, 5);
  EXPECT_EQ(one.p25, 5);
  EXPECT_EQ(one.max, 5);
  const SampleStatistics even = describeSamples({4, 1, 3, 2});  // sorted 1 2 3 4: positions 0.75 and 2.25
  EXPECT_EQ(even.median, 2.5);
  EXPECT_EQ(even.p25, 1.75);
  EXPECT_EQ(even.p75, 3.25);
  EXPECT_EQ(describeSamples({30, 10, 20}).p25, 15);
  EXPECT_EQ(describeSamples(oneTo(11)).median, 6);
  // min <= p25 <= median <= p75 <= p90 <= max for every count.
  std::vector<double> values;
  for (int n = 1; n <= 40; ++n) {
    values.push_back(static_cast<double>((n * 37) % 23));
    const SampleStatistics s = describeSamples(values);
    EXPECT_LE(s.min, s.p25) << n;
    EXPECT_LE(s.p25, s.median) << n;
    EXPECT_LE(s.median, s.p75) << n;
    EXPECT_LE(s.p75, s.max) << n;
    if (s.p90) {
      EXPECT_LE(s.p75, *s.p90) << n;
      EXPECT_LE(*s.p90, s.max) << n;
    }
  }
}

TEST(BenchStatistics, MeanStandardDeviationAndCv) {
  // 2 4 4 4 5 5 7 9: mean 5, squares 32, sample variance 32 / 7.
  const SampleStatistics s = describeSamples({2, 4, 4, 4, 5, 5, 7, 9});
  EXPECT_DOUBLE_EQ(s.mean, 5);
  ASSERT_TRUE(s.stddev && s.cv);
  EXPECT_DOUBLE_EQ(*s.stddev, std::sqrt(32.0 / 7));
  EXPECT_DOUBLE_EQ(*s.cv, std::sqrt(32.0 / 7) / 5);
  EXPECT_FALSE(describeSamples({3}).stddev);  // one sample has no spread
  EXPECT_EQ(*describeSamples({3, 3, 3}).cv, 0);
}

TEST(BenchStatistics, MedianConfidenceRanksMatchTheBinomialByHand) {
  // Fewer than 6 samples: even [x1, xn] covers the median with 1 - 2 / 2^n < 95% (n = 5: 93.75%).
  for (size_t n = 0; n <= 5; ++n) EXPECT_FALSE(medianConfidenceRanks(n)) << n;
  auto check = [](size_t n, size_t lower, size_t upper, double coverage) {
    const auto ranks = medianConfidenceRanks(n);
    ASSERT_TRUE(ranks) << n;
    EXPECT_EQ(ranks->lowerRank, lower) << n;
    EXPECT_EQ(ranks->upperRank, upper) << n;
    EXPECT_NEAR(ranks->coverage, coverage, 1e-9) << n;
  };
  check(6, 1, 6, 1 - 2.0 / 64);                     // P(B <= 0) = 1/64
  check(10, 2, 9, 1 - 2.0 * 11 / 1024);             // P(B <= 1) = 11/1024; P(B <= 2) = 56/1024 > 2.5%
  check(20, 6, 15, 1 - 2.0 * 21700 / 1048576);      // P(B <= 5) = 21700/2^20 = 2.07%; P(B <= 6) = 5.77%
  check(100, 40, 61, 0.9647997997822952);           // P(B <= 39) = 1.76%, P(B <= 40) = 2.84%
  const SampleStatistics twenty = describeSamples(oneTo(20));
  ASSERT_TRUE(twenty.medianCi95);
  EXPECT_EQ(twenty.medianCi95->low, 6);
  EXPECT_EQ(twenty.medianCi95->high, 15);
  EXPECT_FALSE(describeSamples(oneTo(5)).medianCi95);
}

TEST(BenchStatistics, LargeCountsStayFinite) {
  const auto ranks = medianConfidenceRanks(1000000);
  ASSERT_TRUE(ranks);
  // The normal approximation: n/2 -/+ 1.96 * sqrt(n) / 2 = 500000 -/+ 980.
  EXPECT_NEAR(static_cast<double>(ranks->lowerRank), 500000 - 980, 3);
  EXPECT_GE(ranks->coverage, 0.95);
}

}  // namespace
}  // namespace kiln::app
