// Vulkan EP: a mixed graph (an op without a Vulkan kernel in the middle) against the CPU EP and the partition
// report, concurrent runs, the in-process pipeline registry, shader-compile errors, device selection, cancel.
// Skips without a Vulkan device unless KILN_REQUIRE_VULKAN=1 (CI), where a missing device fails.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <atomic>
#include <cstring>
#include <thread>

#include "ep/vulkan/shader_library.h"
#include "ep/vulkan/vulkan_device.h"
#include "kiln/device.h"
#include "kiln/partition_report.h"
#include "kiln/session.h"
#include "model_builder.h"
#include "test_models.h"
#include "gtest_requirements.h"

namespace kiln {
namespace {

using testing::ModelBuilder;

using testing::vulkanOptions;

// Relu → ReverseSequence (no Vulkan kernel) → Sigmoid → Add: Vulkan, CPU, Vulkan.
std::string mixedModel(const testing::TempDir& dir) {
  ModelBuilder m(13);
  m.input("x", {2, 8});
  m.initializer("b", {1, 8}, {1, 2, 3, 4, 5, 6, 7, 8});
  onnx::TensorProto lens;  // row 0 reverses all 8 columns, row 1 its first 5
  lens.set_name("lens");
  lens.set_data_type(onnx::TensorProto::INT64);
  lens.add_dims(2);
  lens.add_int64_data(8);
  lens.add_int64_data(5);
  *m.proto().add_initializer() = lens;
  m.node("Relu", {"x"}, {"r"}, "relu");
  auto& reverse = m.node("ReverseSequence", {"r", "lens"}, {"reversed"}, "reverse");
  testing::attrInt(reverse, "batch_axis", 0);
  testing::attrInt(reverse, "time_axis", 1);
  m.node("Sigmoid", {"reversed"}, {"s"}, "sigmoid");
  m.node("Add", {"s", "b2"}, {"y"}, "add");
  m.initializer("b2", {1, 8}, {10, 20, 30, 40, 50, 60, 70, 80});
  m.output("y", {2, 8});
  return m.save(dir.file("mixed.onnx"));
}

Tensor input2x8() {
  std::vector<float> values(16);
  for (size_t i = 0; i < values.size(); ++i) values[i] = std::sin(static_cast<float>(i)) * 3.0f;
  return Tensor::fromVector<float>({2, 8}, values);
}

TEST(VulkanEp, MixedGraphMatchesCpuAndReportsFallback) {
  REQUIRE_VULKAN();
  testing::TempDir dir;
  const std::string path = mixedModel(dir);
  SessionOptions cpuOptions;
  ASSERT_TRUE(cpuOptions.addConfigEntry("kiln.execution_providers", "cpu").isOk());
  auto cpu = Session::create(path, cpuOptions);
  ASSERT_TRUE(cpu.isOk()) << cpu.status().toString();
  auto vulkan = Session::create(path, vulkanOptions());
  ASSERT_TRUE(vulkan.isOk()) << vulkan.status().toString();

  auto expected = (*cpu)->run({{"x", input2x8()}});
  auto actual = (*vulkan)->run({{"x", input2x8()}});
  ASSERT_TRUE(expected.isOk() && actual.isOk());
  const Tensor& e = (*expected)[0].tensor;
  const Tensor& a = (*actual)[0].tensor;
  ASSERT_EQ(e.shape(), a.shape());
  for (int64_t i = 0; i < e.numel(); ++i) EXPECT_NEAR(e.data<float>()[i], a.data<float>()[i], 1e-5) << i;

  const PartitionReport& report = (*vulkan)->partitionReport();
  ASSERT_FALSE(report.graphs.empty());
  const auto perEp = nodesPerExecutionProvider(report);
  EXPECT_EQ(perEp.at("VulkanExecutionProvider"), 3);
  EXPECT_EQ(perEp.at("CPUExecutionProvider"), 1);
  EXPECT_EQ(compiledPartitionCount(report), 2);  // Relu | ReverseSequence | Sigmoid+Add
  bool sawReverse = false;
  for (const auto& node : report.graphs[0].nodes) {
    if (node.opType != "ReverseSequence") continue;
    sawReverse = true;
    EXPECT_EQ(node.executionProvider, "CPUExecutionProvider");
    ASSERT_EQ(node.rejections.size(), 1u);
    EXPECT_NE(node.rejections[0].find("no Vulkan kernel for ReverseSequence"), std::string::npos)
        << node.rejections[0];
  }
  EXPECT_TRUE(sawReverse);
}

// HardSwish as exporters write it (x * clip(x + 3, 0, 6) / 6) plus a Sigmoid: the chain becomes one fused
// dispatch on the device and must give the CPU EP's numbers.
TEST(VulkanEp, FusedElementwiseChainMatchesCpu) {
  REQUIRE_VULKAN();
  testing::TempDir dir;
  ModelBuilder m(13);
  m.input("x", {2, 8});
  m.initializer("three", {}, {3});
  m.initializer("zero", {}, {0});
  m.initializer("six", {}, {6});
  m.node("Add", {"x", "three"}, {"a"});
  m.node("Clip", {"a", "zero", "six"}, {"c"});
  m.node("Mul", {"x", "c"}, {"m"});
  m.node("Div", {"m", "six"}, {"d"});
  m.node("Sigmoid", {"d"}, {"y"});
  m.output("y", {2, 8});
  const std::string path = m.save(dir.file("hardswish.onnx"));
  SessionOptions cpuOptions;
  ASSERT_TRUE(cpuOptions.addConfigEntry("kiln.execution_providers", "cpu").isOk());
  auto cpu = Session::create(path, cpuOptions);
  SessionOptions options = vulkanOptions();
  ASSERT_TRUE(options.addConfigEntry("session.disable_cpu_ep_fallback", "1").isOk());
  auto vulkan = Session::create(path, options);
  ASSERT_TRUE(cpu.isOk() && vulkan.isOk()) << vulkan.status().toString();
  auto expected = (*cpu)->run({{"x", input2x8()}});
  auto actual = (*vulkan)->run({{"x", input2x8()}});
  ASSERT_TRUE(expected.isOk() && actual.isOk()) << actual.status().toString();
  for (int64_t i = 0; i < 16; ++i) {
    EXPECT_NEAR((*expected)[0].tensor.data<float>()[i], (*actual)[0].tensor.data<float>()[i], 1e-6) << i;
  }
}

// kiln.vulkan.autotune=1 times the Conv tile candidates on the first run and keeps the fastest: same numbers as
// the default tiles, and the time shows up as autotune_ms.
TEST(VulkanEp, AutotuneKeepsResultsAndReportsItsTime) {
  REQUIRE_VULKAN();
  const std::string model = std::string(KILN_SOURCE_DIR) + "/resources/models/tiny_cnn.onnx";
  SessionOptions tuned = vulkanOptions();
  ASSERT_TRUE(tuned.addConfigEntry("kiln.vulkan.autotune", "1").isOk());
  auto plain = Session::create(model, vulkanOptions());
  auto autotuned = Session::create(model, tuned);
  ASSERT_TRUE(plain.isOk() && autotuned.isOk()) << autotuned.status().toString();
  Tensor x(DataType::FLOAT, {1, 3, 32, 32});
  for (int64_t i = 0; i < x.numel(); ++i) x.data<float>()[i] = std::cos(static_cast<float>(i) * 0.01f);
  const std::string input = (*plain)->inputs()[0].name;
  auto expected = (*plain)->run({{input, x}});
  auto actual = (*autotuned)->run({{input, x}});
  ASSERT_TRUE(expected.isOk() && actual.isOk()) << actual.status().toString();
  const Tensor& e = (*expected)[0].tensor;
  for (int64_t i = 0; i < e.numel(); ++i) EXPECT_NEAR(e.data<float>()[i], (*actual)[0].tensor.data<float>()[i], 1e-5);
  EXPECT_GT((*autotuned)->timings().autotune_ms, 0.0);
  EXPECT_EQ((*plain)->timings().autotune_ms, 0.0);
}

TEST(VulkanEp, DisabledFallbackNamesTheNode) {
  REQUIRE_VULKAN();
  testing::TempDir dir;
  SessionOptions options = vulkanOptions();
  ASSERT_TRUE(options.addConfigEntry("session.disable_cpu_ep_fallback", "1").isOk());
  auto session = Session::create(mixedModel(dir), options);
  ASSERT_FALSE(session.isOk());
  EXPECT_EQ(session.status().code(), StatusCode::FAIL);
  EXPECT_NE(session.status().message().find("'reverse' (ReverseSequence)"), std::string::npos)
      << session.status().message();
}

TEST(VulkanEp, ConcurrentRunsOnOneSessionAgree) {
  REQUIRE_VULKAN();
  testing::TempDir dir;
  auto session = Session::create(mixedModel(dir), vulkanOptions());
  ASSERT_TRUE(session.isOk()) << session.status().toString();
  auto reference = (*session)->run({{"x", input2x8()}});
  ASSERT_TRUE(reference.isOk());
  std::vector<std::thread> threads;
  std::atomic<int> mismatches{0};
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&] {
      for (int r = 0; r < 10; ++r) {
        auto out = (*session)->run({{"x", input2x8()}});
        if (!out.isOk() || std::memcmp(out->at(0).tensor.rawData(), reference->at(0).tensor.rawData(),
                                       reference->at(0).tensor.byteSize()) != 0) {
          ++mismatches;
        }
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(mismatches.load(), 0);
}

TEST(VulkanEp, SecondSessionReusesPipelinesAndSpirv) {
  REQUIRE_VULKAN();
  testing::TempDir dir;
  const std::string path = mixedModel(dir);
  auto first = Session::create(path, vulkanOptions());
  ASSERT_TRUE(first.isOk()) << first.status().toString();
  auto second = Session::create(path, vulkanOptions());
  ASSERT_TRUE(second.isOk());
  EXPECT_EQ((*second)->counters().glslang_compiles, 0);
  EXPECT_EQ((*second)->counters().pipelines_created, 0);
  EXPECT_GT((*second)->counters().spirv_cache_hits, 0);
}

TEST(VulkanEp, ShaderCompileErrorIsEpFailNamingTheShader) {
  REQUIRE_VULKAN();
  auto device = vk::selectDevice("", true);
  ASSERT_TRUE(device.isOk());
  vk::ShaderVariant variant{"unary", {}, 2, 64};
  variant.define("OP(v)", "(no_such_function(v))");
  auto result = vk::compileShader(variant, *device);
  ASSERT_FALSE(result.isOk());
  EXPECT_EQ(result.status().code(), StatusCode::EP_FAIL);
  EXPECT_NE(result.status().message().find("shader 'unary'"), std::string::npos) << result.status().message();
  EXPECT_NE(result.status().message().find("no_such_function"), std::string::npos) << result.status().message();
}

TEST(VulkanEp, UnknownDeviceSelectorIsInvalidArgument) {
  REQUIRE_VULKAN();
  testing::TempDir dir;
  SessionOptions options;
  ASSERT_TRUE(options.addConfigEntry("kiln.vulkan.device", "no-such-gpu").isOk());
  auto session = Session::create(mixedModel(dir), options);
  ASSERT_FALSE(session.isOk());
  EXPECT_EQ(session.status().code(), StatusCode::INVALID_ARGUMENT);
  EXPECT_NE(session.status().message().find("no-such-gpu"), std::string::npos);
}

// Tools draw progress from the step, never from the display text: each event carries its kind, and the per-partition
// steps name their partition (the display text is "<partition>: <step>").
TEST(VulkanEp, ProgressEventsCarryTheirStepAndPartition) {
  REQUIRE_VULKAN();
  testing::TempDir dir;
  SessionOptions options = vulkanOptions();
  std::vector<ProgressEvent> events;
  options.progress.onProgress = [&](const ProgressEvent& event) { events.push_back(event); };
  ASSERT_TRUE(Session::create(mixedModel(dir), options).isOk());
  ASSERT_FALSE(events.empty());
  EXPECT_EQ(events.front().step, ProgressStep::LOAD);
  int lastTopLevel = -1;
  bool sawGlslang = false, sawPipelines = false, sawCompile = false;
  for (const ProgressEvent& e : events) {
    switch (e.step) {
      case ProgressStep::LOAD:
      case ProgressStep::OPTIMIZE:
      case ProgressStep::PARTITION:
      case ProgressStep::COMPILE: {
        // The top-level steps come in order (a step may report again, e.g. "compile" around each partition).
        EXPECT_GE(static_cast<int>(e.step), lastTopLevel) << e.stage;
        lastTopLevel = std::max(lastTopLevel, static_cast<int>(e.step));
        EXPECT_EQ(e.stage, progressStepName(e.step));
        EXPECT_TRUE(e.partition.empty()) << e.stage;
        sawCompile |= e.step == ProgressStep::COMPILE;
        break;
      }
      case ProgressStep::GLSLANG:
      case ProgressStep::PIPELINES:
        EXPECT_FALSE(e.partition.empty()) << e.stage;
        EXPECT_EQ(e.stage, e.partition + ": " + progressStepName(e.step));
        sawGlslang |= e.step == ProgressStep::GLSLANG;
        sawPipelines |= e.step == ProgressStep::PIPELINES;
        break;
      default:
        ADD_FAILURE() << "unexpected step in a session creation: " << e.stage;
    }
  }
  EXPECT_TRUE(sawCompile && sawGlslang && sawPipelines);
}

TEST(VulkanEp, CancelDuringCompileIsCancelled) {
  REQUIRE_VULKAN();
  testing::TempDir dir;
  SessionOptions options = vulkanOptions();
  auto token = std::make_shared<CancellationToken>();
  options.progress.cancellation = token;
  options.progress.onProgress = [token](const ProgressEvent& event) {
    if (event.stage.find("glslang") != std::string::npos || event.stage.find("pipelines") != std::string::npos) {
      token->cancel();
    }
  };
  auto session = Session::create(mixedModel(dir), options);
  ASSERT_FALSE(session.isOk());
  EXPECT_EQ(session.status().code(), StatusCode::CANCELLED) << session.status().toString();
}

// ScatterND with constant index tuples out of range: refused as on the CPU EP, not skipped on the device.
TEST(VulkanEp, ScatterNDRefusesConstantIndicesOutOfRange) {
  REQUIRE_VULKAN();
  testing::TempDir dir;
  for (int64_t index : {int64_t(4), int64_t(-5), int64_t(-4)}) {
    ModelBuilder m(18);
    m.input("data", {4, 3});
    m.input("updates", {1, 3});
    onnx::TensorProto indices;
    indices.set_name("indices");
    indices.set_data_type(onnx::TensorProto::INT64);
    indices.add_dims(1);
    indices.add_dims(1);
    indices.add_int64_data(index);
    *m.proto().add_initializer() = indices;
    m.node("Add", {"data", "data"}, {"doubled"});
    m.node("ScatterND", {"doubled", "indices", "updates"}, {"y"});
    m.output("y", {4, 3});
    const std::string path = m.save(dir.file("scatter_" + std::to_string(index) + ".onnx"));
    auto session = Session::create(path, vulkanOptions());
    ASSERT_TRUE(session.isOk()) << session.status().toString();
    ASSERT_EQ((*session)->partitions().size(), 1u);
    auto out = (*session)->run({{"data", Tensor::fromVector<float>({4, 3}, std::vector<float>(12, 1.f))},
                                {"updates", Tensor::fromVector<float>({1, 3}, {7, 8, 9})}});
    if (index == -4) {  // row 0 counted from the end: in range
      ASSERT_TRUE(out.isOk()) << out.status().toString();
      EXPECT_EQ((*out)[0].tensor.data<float>()[0], 7.f);
      EXPECT_EQ((*out)[0].tensor.data<float>()[3], 2.f);
    } else {
      EXPECT_EQ(out.status().code(), StatusCode::INVALID_ARGUMENT) << index;
      EXPECT_NE(out.status().message().find("out of range"), std::string::npos) << out.status().message();
    }
  }
}

// GatherND with constant index tuples out of range: refused as on the CPU EP, not clamped on the device.
TEST(VulkanEp, GatherNDRefusesConstantIndicesOutOfRange) {
  REQUIRE_VULKAN();
  testing::TempDir dir;
  for (int64_t index : {int64_t(3), int64_t(-4), int64_t(-3)}) {
    ModelBuilder m(18);
    m.input("data", {3, 2});
    onnx::TensorProto indices;
    indices.set_name("indices");
    indices.set_data_type(onnx::TensorProto::INT64);
    indices.add_dims(1);
    indices.add_dims(1);
    indices.add_int64_data(index);
    *m.proto().add_initializer() = indices;
    m.node("Add", {"data", "data"}, {"doubled"});
    m.node("GatherND", {"doubled", "indices"}, {"y"});
    m.output("y", {1, 2});
    const std::string path = m.save(dir.file("gather_" + std::to_string(index) + ".onnx"));
    auto session = Session::create(path, vulkanOptions());
    ASSERT_TRUE(session.isOk()) << session.status().toString();
    ASSERT_EQ((*session)->partitions().size(), 1u);
    auto out = (*session)->run({{"data", Tensor::fromVector<float>({3, 2}, {1, 2, 3, 4, 5, 6})}});
    if (index == -3) {  // row 0 counted from the end: in range
      ASSERT_TRUE(out.isOk()) << out.status().toString();
      EXPECT_EQ((*out)[0].tensor.data<float>()[1], 4.f);
    } else {
      EXPECT_EQ(out.status().code(), StatusCode::INVALID_ARGUMENT) << index;
      EXPECT_NE(out.status().message().find("out of range"), std::string::npos) << out.status().message();
    }
  }
}

}  // namespace
}  // namespace kiln
