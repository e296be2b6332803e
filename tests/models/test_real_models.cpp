// Real models against onnxruntime-node: PP-OCRv4 det (conv net, dynamic H/W) and Silero VAD v5 (If + LSTM, streamed),
// on the CPU EP and on the Vulkan EP (with the CPU EP as fallback; PP-OCRv4 det must be one Vulkan partition).
// Inputs and reference outputs come from tests/tools/fetch_models.sh --with-references (the `setup_models` fixture).
// Without that cache the tests skip, unless KILN_REQUIRE_MODELS=1 (CI), where a missing cache is a failure; the
// Vulkan cases skip without a device unless KILN_REQUIRE_VULKAN=1 (CI).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <iomanip>
#include <iostream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "gtest_requirements.h"
#include "kiln/device.h"
#include "kiln/partition_report.h"
#include "kiln/session.h"
#include "kiln/session_options.h"
#include "kiln/tensor_io.h"

namespace {

namespace fs = std::filesystem;

constexpr double kRelTolerance = 1e-3;
constexpr double kAbsToleranceOfRange = 1e-4;  // atol = this * max|reference|: scaled to the output's range
constexpr int kSileroSteps = 8;                // as kSileroSteps in tests/tools/ort_reference.mjs

using kiln::testing::modelCache;

// The EP a test case runs on: "cpu", or "vulkan" (Vulkan first, CPU EP for what Vulkan does not take).
class RealModels : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    if (GetParam() != "vulkan") return;
    REQUIRE_VULKAN();
  }
};

std::unique_ptr<kiln::Session> createSession(const fs::path& model, const std::string& ep) {
  kiln::SessionOptions options;
  EXPECT_TRUE(options.addConfigEntry("kiln.execution_providers", ep == "vulkan" ? "vulkan,cpu" : "cpu").isOk());
  EXPECT_TRUE(options.addConfigEntry("kiln.intra_op_num_threads", "2").isOk());
  auto session = kiln::Session::create(model.string(), options);
  EXPECT_TRUE(session.isOk()) << "creating a session for " << model << ": " << session.status().toString();
  return session.isOk() ? std::move(session).value() : nullptr;
}

kiln::Tensor readNpy(const fs::path& path) {
  auto tensor = kiln::readNpyFile(path.string());
  EXPECT_TRUE(tensor.isOk()) << path << ": " << tensor.status().toString();
  return tensor.isOk() ? std::move(tensor).value() : kiln::Tensor();
}

// Compares one float output with |actual - expected| <= atol + rtol * |expected| per element and reports the
// largest errors either way, so a passing run still shows how close it is.
::testing::AssertionResult matchesReference(const std::string& what, const kiln::Tensor& actual,
                                            const kiln::Tensor& expected) {
  if (actual.dtype() != expected.dtype() || actual.shape() != expected.shape()) {
    return ::testing::AssertionFailure() << what << ": got " << kiln::dataTypeName(actual.dtype()) << " "
                                         << kiln::shapeToString(actual.shape()) << ", reference is "
                                         << kiln::dataTypeName(expected.dtype()) << " "
                                         << kiln::shapeToString(expected.shape());
  }
  if (expected.dtype() != kiln::DataType::FLOAT) {
    const bool same = actual.byteSize() == expected.byteSize() &&
                      std::memcmp(actual.rawData(), expected.rawData(), expected.byteSize()) == 0;
    if (same) return ::testing::AssertionSuccess() << what << ": identical";
    return ::testing::AssertionFailure() << what << ": differs from the reference";
  }
  const float* a = actual.data<float>();
  const float* e = expected.data<float>();
  const int64_t count = expected.numel();
  double range = 0;
  for (int64_t i = 0; i < count; ++i) range = std::max(range, std::fabs(double(e[i])));
  const double atol = kAbsToleranceOfRange * range;
  double maxAbs = 0, maxRel = 0;
  int64_t worst = -1, violations = 0, nonFinite = 0;
  double worstExcess = 0;
  for (int64_t i = 0; i < count; ++i) {
    if (!std::isfinite(a[i])) ++nonFinite;
    const double diff = std::fabs(double(a[i]) - double(e[i]));
    maxAbs = std::max(maxAbs, diff);
    if (e[i] != 0) maxRel = std::max(maxRel, diff / std::fabs(double(e[i])));
    const double excess = diff - (atol + kRelTolerance * std::fabs(double(e[i])));
    if (excess > 0 || std::isnan(diff)) {
      ++violations;
      if (worst < 0 || excess > worstExcess) worst = i, worstExcess = excess;
    }
  }
  std::ostringstream report;
  report << what << " " << kiln::shapeToString(expected.shape()) << ": max abs error " << maxAbs
         << ", max rel error " << maxRel << " (atol " << atol << " = " << kAbsToleranceOfRange << " * max|ref| "
         << range << ", rtol " << kRelTolerance << ")";
  ::testing::Test::RecordProperty(what + ".max_abs_error", std::to_string(maxAbs));
  ::testing::Test::RecordProperty(what + ".max_rel_error", std::to_string(maxRel));
  std::cout << "[  ERRORS  ] " << report.str() << "\n";
  if (violations == 0 && nonFinite == 0) return ::testing::AssertionSuccess() << report.str();
  report << "; " << violations << " of " << count << " elements out of tolerance, " << nonFinite << " not finite";
  if (worst >= 0) {
    report << "; worst at flat index " << worst << ": got " << std::setprecision(9) << a[worst] << ", expected "
           << e[worst];
  }
  return ::testing::AssertionFailure() << report.str();
}

// Runs the model on ref/<caseName>/inputs/<input>.npy and checks every output against ref/<caseName>/outputs.
void checkSingleRun(const std::string& modelFile, const std::string& caseName, const std::string& ep) {
  const fs::path model = modelCache() / modelFile;
  const fs::path caseDir = modelCache() / "ref" / caseName;
  REQUIRE_MODEL_FILE(model);
  REQUIRE_MODEL_FILE(caseDir / "outputs");
  auto session = createSession(model, ep);
  ASSERT_NE(session, nullptr);
  if (ep == "vulkan") {
    // The whole network is one Vulkan partition: no node falls back to the CPU EP.
    const auto& report = session->partitionReport();
    EXPECT_EQ(kiln::compiledPartitionCount(report), 1);
    const auto perEp = kiln::nodesPerExecutionProvider(report);
    EXPECT_EQ(perEp.count("CPUExecutionProvider"), 0u) << "nodes fell back to the CPU EP";
  }

  std::vector<kiln::NamedTensor> feeds;
  for (const auto& input : session->inputs()) {
    feeds.push_back({input.name, readNpy(caseDir / "inputs" / (input.name + ".npy"))});
    ASSERT_TRUE(feeds.back().tensor.defined()) << "input " << input.name;
  }
  auto outputs = session->run(feeds);
  ASSERT_TRUE(outputs.isOk()) << outputs.status().toString();
  ASSERT_EQ(outputs->size(), session->outputs().size());
  for (const auto& output : *outputs) {
    const kiln::Tensor expected = readNpy(caseDir / "outputs" / (output.name + ".npy"));
    ASSERT_TRUE(expected.defined()) << "reference for output " << output.name;
    EXPECT_TRUE(matchesReference(caseName + "." + output.name, output.tensor, expected));
  }
}

TEST_P(RealModels, PpOcrV4Det640) { checkSingleRun("ch_PP-OCRv4_det_infer.onnx", "ppocr_det", GetParam()); }

// A second, non-square shape through the same dynamic-shape model (and, on Vulkan, the same pipelines).
TEST_P(RealModels, PpOcrV4DetCrop256x416) {
  checkSingleRun("ch_PP-OCRv4_det_infer.onnx", "ppocr_det_crop", GetParam());
}

// Streams consecutive 512-sample chunks, feeding Kiln's own stateN back as the next state, as a VAD user does.
// Each step goes through the If branches and the LSTM again with a state that Kiln itself produced.
TEST_P(RealModels, SileroVadV5Streaming) {
  const fs::path model = modelCache() / "silero_vad_v5.onnx";
  const fs::path refDir = modelCache() / "ref" / "silero_vad";
  REQUIRE_MODEL_FILE(model);
  REQUIRE_MODEL_FILE(refDir / ("step" + std::to_string(kSileroSteps - 1)) / "outputs");
  auto session = createSession(model, GetParam());
  ASSERT_NE(session, nullptr);
  if (GetParam() == "vulkan") {
    // Its convolutions and LSTMs live inside If branches: partitions there are Vulkan partitions.
    EXPECT_GT(kiln::compiledPartitionCount(session->partitionReport()), 0);
  }

  kiln::Tensor state = readNpy(refDir / "step0" / "inputs" / "state.npy");
  const kiln::Tensor sampleRate = readNpy(refDir / "step0" / "inputs" / "sr.npy");
  ASSERT_TRUE(state.defined() && sampleRate.defined());
  for (int step = 0; step < kSileroSteps; ++step) {
    const fs::path stepDir = refDir / ("step" + std::to_string(step));
    const std::string label = "silero_vad.step" + std::to_string(step);
    const kiln::Tensor chunk = readNpy(stepDir / "inputs" / "input.npy");
    ASSERT_TRUE(chunk.defined());
    auto outputs = session->run({{"input", chunk}, {"state", state}, {"sr", sampleRate}});
    ASSERT_TRUE(outputs.isOk()) << label << ": " << outputs.status().toString();
    ASSERT_EQ(outputs->size(), 2u);
    for (const auto& output : *outputs) {
      const kiln::Tensor expected = readNpy(stepDir / "outputs" / (output.name + ".npy"));
      ASSERT_TRUE(expected.defined()) << label << " reference for " << output.name;
      EXPECT_TRUE(matchesReference(label + "." + output.name, output.tensor, expected));
      if (output.name == "stateN") state = output.tensor;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Ep, RealModels, ::testing::Values("cpu", "vulkan"),
                         [](const ::testing::TestParamInfo<std::string>& info) { return info.param; });

}  // namespace
