// The conformance harness must catch wrong kernels and wrong data, not just run cases.
#include <gtest/gtest.h>

#include <sys/stat.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "conformance.h"
#include "worker.h"
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

// Isolated runs re-execute kiln: ctest gives its path in KILN_CLI (tests/CMakeLists.txt).
conformance::Options isolatedOptionsFor(const testing::TempDir& dir) {
  conformance::Options options = optionsFor(dir);
  options.isolate = true;
  const char* kiln = std::getenv("KILN_CLI");
  options.workerProgram = kiln ? kiln : "";
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
  conformance::Options options = isolatedOptionsFor(dir);
  ASSERT_FALSE(options.workerProgram.empty()) << "KILN_CLI is not set";
  auto summary = conformance::runConformance(options);
  ASSERT_TRUE(summary.isOk()) << summary.status().toString();
  EXPECT_EQ(summary->failed, 1);
  EXPECT_NE(summary->cases[0].detail.find("INVALID_PROTOBUF"), std::string::npos);
}

TEST_F(ConformanceHarness, NonCpuEpSkipsACaseItCannotTakeWhole) {
  // An If node always stays on the CPU EP, so under --ep vulkan test_if is skipped (with the reason), never run.
  testing::TempDir dir;
  copyCase(dir, "test_if");
  conformance::Options options = isolatedOptionsFor(dir);
  ASSERT_FALSE(options.workerProgram.empty()) << "KILN_CLI is not set";
  options.executionProvider = "vulkan";  // a device, if any, lives and dies in the worker
  auto summary = conformance::runConformance(options);
  ASSERT_TRUE(summary.isOk()) << summary.status().toString();
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

TEST(ConformanceWorker, ResultLinesRoundTripAnyDetail) {
  const conformance::CaseRun run{conformance::Outcome::Skipped, "nodes:\n  a\tb \\ c"};
  const std::string line = conformance::formatWorkerLine("/cases/test_x\ty", run, 12.5);
  EXPECT_EQ(line.find('\n'), std::string::npos);
  std::string directory;
  conformance::CaseRun parsed;
  double ms = 0;
  // Output without a newline may precede the line on the worker's stdout.
  ASSERT_TRUE(conformance::parseWorkerLine("stray output" + line, directory, parsed, ms));
  EXPECT_EQ(directory, "/cases/test_x\ty");
  EXPECT_EQ(parsed.outcome, conformance::Outcome::Skipped);
  EXPECT_EQ(parsed.detail, run.detail);
  EXPECT_DOUBLE_EQ(ms, 12.5);
  EXPECT_FALSE(conformance::parseWorkerLine("kiln-conformance-case X 1 /a\t", directory, parsed, ms));
  EXPECT_FALSE(conformance::parseWorkerLine("kiln-conformance-case P one /a\t", directory, parsed, ms));
  EXPECT_FALSE(conformance::parseWorkerLine("something else", directory, parsed, ms));
}

TEST(ConformanceWorker, ACrashFailsOneCaseAndTheBatchGoesOnInANewWorker) {
  // A stand-in for kiln: reports every case as passed, except that it dies on a case named *crash*.
  testing::TempDir dir;
  for (const char* name : {"test_a", "test_b_crash", "test_c", "test_d"}) {
    fs::create_directories(dir.path() / name);
    testing::writeBytes((dir.path() / name / "model.onnx").string(), "unused");
  }
  const fs::path worker = dir.path() / "fake_kiln.sh";
  testing::writeBytes(worker.string(),
                      "#!/bin/sh\n"
                      "echo \"$@\" >> \"$(dirname \"$0\")/invocations\"\n"
                      "shift 4  # conformance --ep cpu --worker\n"
                      "for dir in \"$@\"; do\n"
                      "  case \"$dir\" in *crash*) kill -SEGV $$ ;; esac\n"
                      "  printf 'kiln-conformance-case P 1.5 %s\\t\\n' \"$dir\"\n"
                      "done\n");
  ASSERT_EQ(chmod(worker.c_str(), 0755), 0);
  conformance::Options options = optionsFor(dir);
  options.isolate = true;
  options.workerProgram = worker.string();
  options.workerBatchSize = 3;
  auto summary = conformance::runConformance(options);
  ASSERT_TRUE(summary.isOk()) << summary.status().toString();
  ASSERT_EQ(summary->cases.size(), 4u);
  EXPECT_EQ(summary->passed, 3);
  EXPECT_EQ(summary->failed, 1);
  EXPECT_EQ(summary->cases[1].name, "test_b_crash");
  EXPECT_EQ(summary->cases[1].outcome, conformance::Outcome::Failed);
  EXPECT_NE(summary->cases[1].detail.find("crashed with signal 11"), std::string::npos) << summary->cases[1].detail;
  EXPECT_DOUBLE_EQ(summary->cases[0].milliseconds, 1.5);
  // Batches of 3: [a b_crash c] dies at b_crash, and a new worker takes the cases after it, [c d].
  std::ifstream invocations(dir.path() / "invocations");
  const std::string text((std::istreambuf_iterator<char>(invocations)), std::istreambuf_iterator<char>());
  EXPECT_EQ(std::count(text.begin(), text.end(), '\n'), 2) << text;
}

TEST(ConformanceWorker, AMissingWorkerProgramIsAnError) {
  testing::TempDir dir;
  fs::create_directories(dir.path() / "test_a");
  testing::writeBytes((dir.path() / "test_a" / "model.onnx").string(), "unused");
  conformance::Options options = optionsFor(dir);
  options.isolate = true;
  EXPECT_EQ(conformance::runConformance(options).status().code(), StatusCode::INVALID_ARGUMENT);
  options.workerProgram = (dir.path() / "no_such_kiln").string();
  EXPECT_EQ(conformance::runConformance(options).status().code(), StatusCode::FAIL);
}

}  // namespace
}  // namespace kiln
