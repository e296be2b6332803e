// kiln bench's statistics and writers (app/common/bench_report.h), without running a bench.
#include <gtest/gtest.h>

#include "bench_report.h"

namespace kiln::app {
namespace {

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
  fast.memory.peakKib = 2048;
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
  EXPECT_TRUE(cold["session_create_ms"]["p90"].is_null());  // 2 runs: too few for p90
  EXPECT_EQ(cold["session_create_ms"]["count"].get<int>(), 2);
  EXPECT_EQ(cold["session_create_ms"]["samples"], nlohmann::json({10, 30}));
  EXPECT_EQ(cold["session_create_ms"]["mean"].get<double>(), 20);
  EXPECT_TRUE(cold["session_create_ms"]["median_ci95"].is_null());  // needs 6
  EXPECT_EQ(cold["memory_mib"]["peak_resident"]["median"].get<double>(), 2);
  EXPECT_TRUE(cold["memory_mib"]["resident_end"].is_null());  // no sample had it
  EXPECT_EQ(document["schema_version"].get<int>(), kBenchSchemaVersion);
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
  EXPECT_NE(csv.find("\"m \"\"q\"\".onnx\",\"lavapipe\",cold,cold,2,10.000,20.000,,1.000,21.000,0.500,1.000,"),
            std::string::npos)
      << csv;
  EXPECT_NE(csv.find("epctx-file,cold,2,5.000,5.000,,1.000,6.000,0.500,4.000,3.500\n"), std::string::npos) << csv;
}

TEST(BenchReportWriters, CsvOfAPartialDocumentHasEmptyCells) {
  const nlohmann::json document = {{"model", "m"}, {"modes", {{{"name", "cold"}, {"driver_cache", "warm"}}}}};
  const std::string csv = benchCsv(document);
  EXPECT_NE(csv.find("\"m\",\"\",cold,warm,0,,,,,,,,\n"), std::string::npos) << csv;
  EXPECT_EQ(benchCsv(nlohmann::json::array()).find('\n') + 1, benchCsv(nlohmann::json::array()).size());
}

TEST(BenchReportWriters, WarningsForFewRunsAndHighVariation) {
  const nlohmann::json document = toJson(sampleReport());
  const auto& warnings = document["warnings"];
  ASSERT_EQ(warnings.size(), 2u) << warnings.dump();
  EXPECT_EQ(warnings[0].get<std::string>(),
            "2 runs per row: too few for p90 (needs 10), p95 (needs 20), p99 (needs 100), the median's 95% CI "
            "(needs 6) (use --runs 20 or more)");
  // cold's session creation is 10 and 30: CV 70.7%; epctx-file's samples are equal.
  EXPECT_NE(warnings[1].get<std::string>().find("cold/cold: CV above 10.0%: session create 70.7%, first result"),
            std::string::npos)
      << warnings[1];
  const std::string table = toTable(sampleReport());
  EXPECT_NE(table.find("warning: 2 runs per row"), std::string::npos) << table;
  EXPECT_NE(table.find("memory (MiB, median): peak resident 2.0;"), std::string::npos) << table;
}

TEST(BenchReportWriters, StatisticsLineLeavesOutWhatItCannotSay) {
  std::vector<double> values;
  for (int i = 1; i <= 10; ++i) values.push_back(i);
  EXPECT_EQ(statisticsLine(describeSamples(values)),
            "n 10, min 1.00, mean 5.50, median 5.50 (95% CI 2.00 to 9.00), p90 9.00, max 10.00, stddev 3.03, CV 55.0%");
  EXPECT_EQ(statisticsLine(describeSamples({0.5})), "n 1, min 0.500, mean 0.500, median 0.500, max 0.500");
  EXPECT_EQ(variationWarning("run", describeSamples({1, 1, 1})), "");
  EXPECT_NE(variationWarning("run", describeSamples(values)).find("run: CV 55.0% is above 10.0%"), std::string::npos);
}

TEST(BenchReportWriters, InputFileNamesAreSafe) {
  EXPECT_EQ(benchInputFileName("a/b c"), "input_a_b_c.npy");
}

}  // namespace
}  // namespace kiln::app
