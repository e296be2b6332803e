// kiln bench's statistics and writers (app/common/bench_report.h), without running a bench.
#include <gtest/gtest.h>

#include "bench_report.h"

namespace kiln::app {
namespace {

TEST(BenchStatistics, MedianAndNearestRankP90) {
  EXPECT_EQ(summarize({}).median, 0);
  const Stat one = summarize({5});
  EXPECT_EQ(one.min, 5);
  EXPECT_EQ(one.median, 5);
  EXPECT_EQ(one.p90, 5);
  const Stat even = summarize({4, 1, 3, 2});  // sorted 1 2 3 4
  EXPECT_EQ(even.min, 1);
  EXPECT_EQ(even.median, 2.5);
  EXPECT_EQ(even.p90, 4);  // rank ceil(3.6) = 4
  std::vector<double> ten;
  for (int i = 10; i >= 1; --i) ten.push_back(i);
  const Stat s10 = summarize(ten);
  EXPECT_EQ(s10.median, 5.5);
  EXPECT_EQ(s10.p90, 9);  // rank ceil(9.0) = 9
  std::vector<double> eleven(ten);
  eleven.push_back(11);
  EXPECT_EQ(summarize(eleven).median, 6);
  EXPECT_EQ(summarize(eleven).p90, 10);  // rank ceil(9.9) = 10
}

TEST(BenchStatistics, QuartilesInterpolateAndMaxIsTheLargest) {
  const Stat one = summarize({5});
  EXPECT_EQ(one.p25, 5);
  EXPECT_EQ(one.p75, 5);
  EXPECT_EQ(one.max, 5);
  const Stat three = summarize({30, 10, 20});  // sorted 10 20 30: positions 0.5 and 1.5
  EXPECT_EQ(three.p25, 15);
  EXPECT_EQ(three.p75, 25);
  EXPECT_EQ(three.max, 30);
  const Stat even = summarize({4, 1, 3, 2});  // positions 0.75 and 2.25
  EXPECT_EQ(even.p25, 1.75);
  EXPECT_EQ(even.p75, 3.25);
  EXPECT_EQ(even.max, 4);
  // A box plot's order holds for every count: min <= p25 <= median <= p75 <= p90 <= max.
  std::vector<double> values;
  for (int n = 1; n <= 40; ++n) {
    values.push_back(static_cast<double>((n * 37) % 23));
    const Stat s = summarize(values);
    EXPECT_LE(s.min, s.p25) << n;
    EXPECT_LE(s.p25, s.median) << n;
    EXPECT_LE(s.median, s.p75) << n;
    EXPECT_LE(s.p75, s.p90) << n;
    EXPECT_LE(s.p90, s.max) << n;
  }
}

BenchReport sampleReport() {
  BenchReport report;
  report.model = "m \"q\".onnx";
  report.device = "lavapipe";
  report.runs = 2;
  report.inferences = 1;
  BenchSample fast;
  fast.sessionCreateMs = 10;
  fast.firstInferenceMs = 1;
  fast.inferenceMs = {0.5};
  fast.timings = {{"load_ms", 2.0}, {"glslang_ms", 0.0}};
  fast.counters = {{"glslang_compiles", 0}};
  BenchSample slow = fast;
  slow.sessionCreateMs = 30;
  report.modes.push_back({"cold", "cold", {fast, slow}});
  BenchSample cached = fast;
  cached.sessionCreateMs = 5;
  report.modes.push_back({"epctx-file", "cold", {cached, cached}});
  return report;
}

TEST(BenchReportWriters, JsonHasStatisticsAndRatios) {
  const nlohmann::json document = toJson(sampleReport());
  const auto& cold = document["modes"][0];
  EXPECT_EQ(cold["session_create_ms"]["median"].get<double>(), 20);
  EXPECT_EQ(cold["session_create_ms"]["p90"].get<double>(), 30);
  EXPECT_EQ(cold["session_create_ms"]["p25"].get<double>(), 15);
  EXPECT_EQ(cold["session_create_ms"]["p75"].get<double>(), 25);
  EXPECT_EQ(cold["session_create_ms"]["max"].get<double>(), 30);
  EXPECT_EQ(cold["stages_ms"].size(), 1u);  // glslang_ms is zero in every sample: left out
  EXPECT_EQ(cold["counters"]["glslang_compiles"].get<int64_t>(), 0);  // a zero count is kept
  EXPECT_EQ(document["modes"][1]["speedup_vs_cold"].get<double>(), 4);
  EXPECT_EQ(document["summary"]["epctx_session_create_speedup_driver_cold"].get<double>(), 4);
  EXPECT_TRUE(document["summary"]["epctx_session_create_speedup_driver_warm"].is_null());
}

TEST(BenchReportWriters, CsvFromReportAndFromItsJsonAgree) {
  const BenchReport report = sampleReport();
  const std::string csv = toCsv(report);
  EXPECT_EQ(csv, benchCsv(toJson(report)));
  EXPECT_EQ(csv.substr(0, csv.find('\n')),
            "model,device,mode,driver_cache,runs,session_create_min_ms,session_create_median_ms,session_create_p90_ms,"
            "first_inference_median_ms,time_to_first_result_median_ms,inference_median_ms,speedup_vs_cold,"
            "time_to_first_result_speedup_vs_cold");
  EXPECT_NE(csv.find("\"m \"\"q\"\".onnx\",\"lavapipe\",cold,cold,2,10.000,20.000,30.000,1.000,21.000,0.500,1.000,"),
            std::string::npos)
      << csv;
  EXPECT_NE(csv.find("epctx-file,cold,2,5.000,5.000,5.000,1.000,6.000,0.500,4.000,3.500\n"), std::string::npos) << csv;
}

TEST(BenchReportWriters, CsvOfAPartialDocumentHasEmptyCells) {
  const nlohmann::json document = {{"model", "m"}, {"modes", {{{"name", "cold"}, {"driver_cache", "warm"}}}}};
  const std::string csv = benchCsv(document);
  EXPECT_NE(csv.find("\"m\",\"\",cold,warm,0,,,,,,,,\n"), std::string::npos) << csv;
  EXPECT_EQ(benchCsv(nlohmann::json::array()).find('\n') + 1, benchCsv(nlohmann::json::array()).size());
}

TEST(BenchReportWriters, InputFileNamesAreSafe) {
  EXPECT_EQ(benchInputFileName("a/b c"), "input_a_b_c.npy");
}

}  // namespace
}  // namespace kiln::app
