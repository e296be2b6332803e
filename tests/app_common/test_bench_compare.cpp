// kiln bench --compare's ratios, bootstrap intervals and verdicts (app/common/bench_compare.h), on reports built in
// memory.
#include <gtest/gtest.h>

#include "bench_compare.h"
#include "bench_report.h"

namespace kiln::app {
namespace {

// 20 runs of cold/cold with some spread (+-7.5%, CV ~ 5%), every timing multiplied by `scale`.
nlohmann::json report(double scale, const std::string& model = "dir/m.onnx", double spread = 0.15) {
  BenchReport r;
  r.model = model;
  r.device = "test";
  r.runs = 20;
  r.inferences = 3;
  BenchMode mode{"cold", "cold", {}};
  for (int i = 0; i < 20; ++i) {
    BenchSample s;
    const double wobble = 1 + spread * (((i * 7) % 11) / 10.0 - 0.5);
    s.sessionCreateMs = 100 * wobble * scale;
    s.firstInferenceMs = 10 * wobble * scale;
    s.inferenceMs = {2 * wobble * scale, 2.1 * wobble * scale, 1.9 * wobble * scale};
    mode.samples.push_back(s);
  }
  r.modes.push_back(mode);
  return toJson(r);
}

const PhaseComparison& phase(const BenchComparison& c, const std::string& key) {
  for (const auto& p : c.phases) {
    if (p.phase == key) return p;
  }
  throw std::runtime_error("no phase " + key);
}

TEST(BenchCompare, ResultAgainstItselfHasNoSignificantChange) {
  auto c = compareBenchResults(report(1), report(1), {5, 10});
  ASSERT_TRUE(c.isOk()) << c.status().message();
  ASSERT_EQ(c->phases.size(), 4u);
  for (const auto& p : c->phases) {
    EXPECT_EQ(p.ratio, 1) << p.phase;
    EXPECT_LE(p.ciLow, 1) << p.phase;
    EXPECT_GE(p.ciHigh, 1) << p.phase;
    EXPECT_EQ(p.verdict, "no significant change") << p.phase;
  }
  EXPECT_FALSE(c->failed());
}

TEST(BenchCompare, ThirtyPercentSlowerIsSlowerAndFailsAboveTen) {
  auto c = compareBenchResults(report(1), report(1.3), {5, 10});
  ASSERT_TRUE(c.isOk());
  const auto& create = phase(*c, "session_create_ms");
  EXPECT_NEAR(create.ratio, 1.3, 1e-9);
  EXPECT_GT(create.ciLow, 1);
  EXPECT_LE(create.ciLow, 1.3);
  EXPECT_GE(create.ciHigh, 1.3);
  EXPECT_EQ(create.verdict, "slower");
  EXPECT_TRUE(create.failing);
  EXPECT_TRUE(c->failed());
  // Above 40% it is still slower, but within what --fail-above allows; no --fail-above never fails.
  EXPECT_FALSE(compareBenchResults(report(1), report(1.3), {5, 40})->failed());
  EXPECT_FALSE(compareBenchResults(report(1), report(1.3), {5, std::nullopt})->failed());
  auto faster = compareBenchResults(report(1), report(0.7), {5, 10});
  EXPECT_EQ(phase(*faster, "inference_ms").verdict, "faster");
  EXPECT_FALSE(faster->failed());
}

TEST(BenchCompare, AChangeBelowTheThresholdIsNotSignificant) {
  // 3% slower with no noise at all: the interval excludes 1, but 3% < 5%.
  auto c = compareBenchResults(report(1, "m.onnx", 0), report(1.03, "m.onnx", 0), {5, 1});
  const auto& create = phase(*c, "session_create_ms");
  EXPECT_GT(create.ciLow, 1);
  EXPECT_EQ(create.verdict, "no significant change");
  EXPECT_FALSE(c->failed());
  auto lower = compareBenchResults(report(1, "m.onnx", 0), report(1.03, "m.onnx", 0), {2, 1});
  EXPECT_EQ(phase(*lower, "session_create_ms").verdict, "slower");
  EXPECT_TRUE(lower->failed());
}

TEST(BenchCompare, BootstrapIsDeterministicAndBracketsTheRatio) {
  const std::vector<double> a = {10, 11, 12, 9, 10.5, 11.5, 10.2, 9.8}, b = {12, 13, 12.5, 11, 14, 12.2, 12.8, 13.1};
  const auto first = bootstrapMedianRatioInterval(a, b), second = bootstrapMedianRatioInterval(a, b);
  EXPECT_EQ(first, second);
  const double ratio = describeSamples(b).median / describeSamples(a).median;
  EXPECT_LT(first.first, ratio);
  EXPECT_GT(first.second, ratio);
  EXPECT_GT(first.first, 1);  // every b is above the median of a
}

TEST(BenchCompare, BadInputIsAUsageErrorNamingTheProblem) {
  auto expectError = [](const nlohmann::json& base, const nlohmann::json& next, const std::string& words) {
    auto c = compareBenchResults(base, next, {});
    ASSERT_FALSE(c.isOk());
    EXPECT_EQ(c.status().code(), StatusCode::INVALID_ARGUMENT);
    EXPECT_NE(c.status().message().find(words), std::string::npos) << c.status().message();
  };
  expectError(report(1), report(1, "other/n.onnx"), "different models: 'm.onnx' (BASE) and 'n.onnx' (NEW)");
  expectError(nlohmann::json::array(), report(1), "BASE is not a kiln bench result");
  expectError(report(1), {{"model", "m.onnx"}, {"modes", nlohmann::json::array()}}, "NEW is not a kiln bench result");
  nlohmann::json newer = report(1);
  newer["schema_version"] = 99;
  expectError(report(1), newer, "schema_version 99");
  nlohmann::json noSamples = report(1);
  noSamples["modes"][0]["session_create_ms"].erase("samples");
  expectError(report(1), noSamples, "no samples for session_create_ms");
  nlohmann::json otherRow = report(1);
  otherRow["modes"][0]["name"] = "epctx-file";
  expectError(report(1), otherRow, "share no mode");
}

TEST(BenchCompare, WritersNameVerdictsAndNotes) {
  auto c = compareBenchResults(report(1), report(1.3), {5, 10});
  c->basePath = "base.json";
  c->newPath = "new.json";
  const nlohmann::json document = toJson(*c);
  EXPECT_EQ(document["kind"], "kiln_bench_compare");
  EXPECT_TRUE(document["failed"].get<bool>());
  EXPECT_EQ(document["phases"][0]["verdict"], "slower");
  const std::string table = toTable(*c);
  EXPECT_NE(table.find("slower (FAIL: above 10%)"), std::string::npos) << table;
  EXPECT_NE(table.find("FAILED: a significant regression beyond --fail-above"), std::string::npos) << table;
}

}  // namespace
}  // namespace kiln::app
