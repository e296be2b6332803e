// Session API: create from file and buffer, metadata, run, input validation, config keys, cancellation, timings.
#include <gtest/gtest.h>

#include "kiln/config_keys.h"
#include "kiln/session.h"
#include "test_models.h"

namespace kiln {
namespace {

using testing::TempDir;

std::string modelFile(const TempDir& dir) {
  std::string bytes;
  testing::makeAddModel().SerializeToString(&bytes);
  testing::writeBytes(dir.file("add.onnx"), bytes);
  return dir.file("add.onnx");
}

TEST(Session, RunsFromFileWithMetadataAndTimings) {
  TempDir dir;
  auto session = Session::create(modelFile(dir));
  ASSERT_TRUE(session.isOk()) << session.status().toString();
  ASSERT_EQ((*session)->inputs().size(), 1u);
  EXPECT_EQ((*session)->inputs()[0].name, "X");
  EXPECT_EQ((*session)->inputs()[0].shape[0].param, "N");
  EXPECT_EQ((*session)->inputs()[0].shape[1].value, 4);
  auto outputs = (*session)->run({{"X", Tensor::fromVector<float>({2, 4}, {0, 0, 0, 0, 10, 10, 10, 10})}});
  ASSERT_TRUE(outputs.isOk()) << outputs.status().toString();
  ASSERT_EQ(outputs->size(), 1u);
  EXPECT_EQ((*outputs)[0].name, "Y");
  EXPECT_EQ((*outputs)[0].tensor.data<float>()[7], 14.f);
  EXPECT_GT((*session)->timings().session_total_ms, 0);
  EXPECT_GT((*session)->timings().first_run_ms, 0);
  EXPECT_EQ((*session)->partitions().size(), 1u);
  EXPECT_EQ((*session)->partitions()[0].executionProvider, "CPUExecutionProvider");
}

TEST(Session, RunsFromBuffer) {
  std::string bytes;
  testing::makeAddModel().SerializeToString(&bytes);
  auto session = Session::create(std::as_bytes(std::span(bytes.data(), bytes.size())));
  ASSERT_TRUE(session.isOk()) << session.status().toString();
  auto outputs = (*session)->run({{"X", Tensor::fromVector<float>({1, 4}, {1, 1, 1, 1})}});
  ASSERT_TRUE(outputs.isOk());
  EXPECT_EQ((*outputs)[0].tensor.data<float>()[0], 2.f);
}

TEST(Session, RejectsBadInputsWithClearMessages) {
  TempDir dir;
  auto session = Session::create(modelFile(dir));
  ASSERT_TRUE(session.isOk());
  auto wrongName = (*session)->run({{"Z", Tensor(DataType::FLOAT, {1, 4})}});
  EXPECT_EQ(wrongName.status().code(), StatusCode::INVALID_ARGUMENT);
  auto missing = (*session)->run({});
  EXPECT_EQ(missing.status().code(), StatusCode::INVALID_ARGUMENT);
  auto wrongShape = (*session)->run({{"X", Tensor(DataType::FLOAT, {1, 5})}});
  ASSERT_EQ(wrongShape.status().code(), StatusCode::INVALID_ARGUMENT);
  EXPECT_NE(wrongShape.status().message().find("expects shape Nx4, got 1x5"), std::string::npos)
      << wrongShape.status().message();
  auto wrongType = (*session)->run({{"X", Tensor(DataType::INT64, {1, 4})}});
  EXPECT_EQ(wrongType.status().code(), StatusCode::INVALID_ARGUMENT);
}

TEST(Session, ConfigKeys) {
  SessionOptions options;
  EXPECT_EQ(options.addConfigEntry("kiln.no_such_key", "1").code(), StatusCode::INVALID_ARGUMENT);
  EXPECT_TRUE(options.addConfigEntry("session.unknown_but_tolerated", "1").isOk());
  EXPECT_TRUE(options.addConfigEntry("kiln.intra_op_num_threads", "2").isOk());
  EXPECT_TRUE(options.addConfigEntry("kiln.free_dim_override.batch", "1").isOk());
  EXPECT_EQ(options.configEntryOr("kiln.intra_op_num_threads", ""), "2");
}

TEST(Session, FreeDimOverrideFixesASymbolicDimension) {
  TempDir dir;
  SessionOptions options;
  ASSERT_TRUE(options.addConfigEntry("kiln.free_dim_override.N", "2").isOk());
  auto session = Session::create(modelFile(dir), options);
  ASSERT_TRUE(session.isOk());
  EXPECT_EQ((*session)->inputs()[0].shape[0].value, 2);
  EXPECT_TRUE((*session)->run({{"X", Tensor(DataType::FLOAT, {2, 4})}}).isOk());
  auto wrong = (*session)->run({{"X", Tensor(DataType::FLOAT, {3, 4})}});
  ASSERT_EQ(wrong.status().code(), StatusCode::INVALID_ARGUMENT);
  EXPECT_NE(wrong.status().message().find("expects shape 2x4, got 3x4"), std::string::npos);
}

TEST(Session, UnknownExecutionProviderIsInvalidArgument) {
  TempDir dir;
  SessionOptions options;
  ASSERT_TRUE(options.addConfigEntry("kiln.execution_providers", "tpu,cpu").isOk());
  EXPECT_EQ(Session::create(modelFile(dir), options).status().code(), StatusCode::INVALID_ARGUMENT);
}

TEST(Session, CancelledCreationReturnsCancelled) {
  TempDir dir;
  SessionOptions options;
  options.progress.cancellation = std::make_shared<CancellationToken>();
  options.progress.cancellation->cancel();
  EXPECT_EQ(Session::create(modelFile(dir), options).status().code(), StatusCode::CANCELLED);
}

TEST(Session, ReportsProgress) {
  TempDir dir;
  SessionOptions options;
  std::vector<std::string> stages;
  options.progress.onProgress = [&](const ProgressEvent& e) { stages.push_back(e.stage); };
  ASSERT_TRUE(Session::create(modelFile(dir), options).isOk());
  EXPECT_EQ(stages.front(), "load");
  EXPECT_NE(std::find(stages.begin(), stages.end(), "compile"), stages.end());
}

TEST(Session, GraphOptimizationLevelSpellings) {
  for (auto level : {GraphOptimizationLevel::NONE, GraphOptimizationLevel::BASIC, GraphOptimizationLevel::ALL}) {
    auto parsed = parseGraphOptimizationLevel(graphOptimizationLevelName(level));
    ASSERT_TRUE(parsed.isOk());
    EXPECT_EQ(*parsed, level);
  }
  auto bad = parseGraphOptimizationLevel("max");
  ASSERT_EQ(bad.status().code(), StatusCode::INVALID_ARGUMENT);
  EXPECT_NE(bad.status().message().find("kiln.graph_optimization_level must be none, basic or all, got 'max'"),
            std::string::npos);
}

TEST(Session, ConfigKeyTableHasEveryKnownKeyWithItsDefault) {
  EXPECT_EQ(config::defaultValue(config::kExecutionProviders), "vulkan,cpu");
  EXPECT_EQ(config::defaultValue(config::kGraphOptimizationLevel), "basic");
  EXPECT_EQ(config::defaultValue("kiln.no_such_key"), "");
  EXPECT_EQ(knownConfigKeys().size(), config::knownKeys().size());
  for (const auto& info : config::knownKeys()) EXPECT_EQ(knownConfigKeys().count(info.key), 1u) << info.key;
}

}  // namespace
}  // namespace kiln
