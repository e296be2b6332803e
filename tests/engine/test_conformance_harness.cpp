// The conformance harness must catch wrong kernels and wrong data, not just run cases.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>

#include "conformance.h"
#include "onnx/tensor_proto.h"
#include "test_models.h"
#include "util/file_io.h"

namespace kiln {
namespace {

namespace fs = std::filesystem;
const fs::path kNodeCases = "/usr/share/libonnx-testdata/data/node";

// Copies one node case into `dir` and returns its folder.
fs::path copyCase(const testing::TempDir& dir, const std::string& name) {
  const fs::path target = dir.path() / name;
  fs::copy(kNodeCases / name, target, fs::copy_options::recursive);
  return target;
}

conformance::Options optionsFor(const testing::TempDir& dir) {
  conformance::Options options;
  options.directory = dir.path().string();
  options.isolate = false;
  return options;
}

class ConformanceHarness : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!fs::exists(kNodeCases / "test_add")) GTEST_SKIP() << "libonnx-testdata is not installed";
  }
};

TEST_F(ConformanceHarness, PassesACorrectCase) {
  testing::TempDir dir;
  copyCase(dir, "test_add");
  auto summary = conformance::runConformance(optionsFor(dir));
  ASSERT_TRUE(summary.isOk());
  EXPECT_EQ(summary->passed, 1);
  EXPECT_EQ(summary->failed, 0);
}

TEST_F(ConformanceHarness, CatchesADeliberatelyWrongKernel) {
  // Rewrite the case's Add node into Sub: the kernel that runs now computes the wrong function.
  testing::TempDir dir;
  const fs::path folder = copyCase(dir, "test_add");
  onnx::ModelProto model;
  auto bytes = readFileBytes((folder / "model.onnx").string());
  ASSERT_TRUE(bytes.isOk());
  ASSERT_TRUE(model.ParseFromArray(bytes->data(), static_cast<int>(bytes->size())));
  model.mutable_graph()->mutable_node(0)->set_op_type("Sub");
  testing::writeBytes((folder / "model.onnx").string(), model.SerializeAsString());
  auto summary = conformance::runConformance(optionsFor(dir));
  ASSERT_TRUE(summary.isOk());
  EXPECT_EQ(summary->failed, 1);
  EXPECT_NE(summary->cases[0].detail.find("elements differ"), std::string::npos) << summary->cases[0].detail;
}

TEST_F(ConformanceHarness, CatchesValueShapeTypeAndNanDifferences) {
  const Tensor expected = Tensor::fromVector<float>({2, 2}, {1, 2, NAN, 4});
  EXPECT_EQ(conformance::compareTensors(expected, expected, 1e-3, 1e-7), "");
  Tensor off = expected.clone();
  off.data<float>()[1] = 2.01f;
  EXPECT_NE(conformance::compareTensors(off, expected, 1e-3, 1e-7), "");
  Tensor nanMoved = expected.clone();
  nanMoved.data<float>()[2] = 3;
  EXPECT_NE(conformance::compareTensors(nanMoved, expected, 1e-3, 1e-7), "");
  EXPECT_NE(conformance::compareTensors(expected.reshaped({4}), expected, 1e-3, 1e-7), "");
  EXPECT_NE(conformance::compareTensors(Tensor(DataType::DOUBLE, {2, 2}), expected, 1e-3, 1e-7), "");
}

TEST_F(ConformanceHarness, ExpectedFailuresAreReportedNotCounted) {
  testing::TempDir dir;
  const fs::path folder = copyCase(dir, "test_add");
  onnx::TensorProto proto;
  auto bytes = readFileBytes((folder / "test_data_set_0/output_0.pb").string());
  ASSERT_TRUE(proto.ParseFromArray(bytes->data(), static_cast<int>(bytes->size())));
  auto tensor = onnx_io::tensorFromProto(proto);
  tensor->data<float>()[0] += 1;
  onnx_io::tensorToProto(*tensor, proto);
  testing::writeBytes((folder / "test_data_set_0/output_0.pb").string(), proto.SerializeAsString());

  conformance::Options options = optionsFor(dir);
  options.expectedFailures = conformance::parseExpectedFailures("# comment\ntest_add   corrupted on purpose\n");
  auto summary = conformance::runConformance(options);
  ASSERT_TRUE(summary.isOk());
  EXPECT_EQ(summary->failed, 0);
  EXPECT_EQ(summary->expectedFailures, 1);
  EXPECT_EQ(summary->cases[0].detail, "corrupted on purpose");
}

TEST_F(ConformanceHarness, IsolationTurnsAMissingModelIntoOneFailure) {
  testing::TempDir dir;
  const fs::path folder = copyCase(dir, "test_add");
  testing::writeBytes((folder / "model.onnx").string(), "garbage");
  conformance::Options options = optionsFor(dir);
  options.isolate = true;
  auto summary = conformance::runConformance(options);
  ASSERT_TRUE(summary.isOk());
  EXPECT_EQ(summary->failed, 1);
  EXPECT_NE(summary->cases[0].detail.find("INVALID_PROTOBUF"), std::string::npos);
}

TEST_F(ConformanceHarness, NonCpuEpSkipsACaseItCannotTakeWhole) {
  // An If node always stays on the CPU EP, so under --ep vulkan test_if is skipped (with the reason), never run.
  testing::TempDir dir;
  copyCase(dir, "test_if");
  conformance::Options options = optionsFor(dir);
  options.executionProvider = "vulkan";
  options.isolate = true;  // a device, if any, lives and dies in the child
  auto summary = conformance::runConformance(options);
  ASSERT_TRUE(summary.isOk());
  ASSERT_EQ(summary->cases.size(), 1u);
  const auto& result = summary->cases[0];
  if (result.outcome == conformance::Outcome::Failed && result.detail.find("EP_FAIL") != std::string::npos) {
    GTEST_SKIP() << "no Vulkan device: " << result.detail;
  }
  EXPECT_EQ(result.outcome, conformance::Outcome::Skipped) << result.detail;
  EXPECT_EQ(summary->skipped, 1);
  EXPECT_EQ(summary->failed, 0);
  EXPECT_NE(result.detail.find("disable_cpu_ep_fallback"), std::string::npos) << result.detail;
  EXPECT_NE(result.detail.find("(If)"), std::string::npos) << result.detail;
}

}  // namespace
}  // namespace kiln
