// The partitioner's cost model (partition/partition_cost.h): the decisions on their own, then the Vulkan EP
// on small generated graphs where ReverseSequence (no Vulkan kernel, none planned) stands for the CPU nodes
// around a group: a scalar Equal between CPU ops stays on the CPU EP, a shape subgraph feeding a Conv runs on the
// host inside the Conv's partition, a small island between CPU ops is kept on the CPU EP with its reason, and a
// large one is offloaded.
#include <gtest/gtest.h>

#include <cmath>

#include "gtest_requirements.h"
#include "kiln/partition_report.h"
#include "kiln/session.h"
#include "model_builder.h"
#include "partition/partition_cost.h"
#include "test_models.h"

namespace kiln {
namespace {

using testing::ModelBuilder;

namespace cost = partition_cost;

onnx::TensorProto int64Tensor(const std::string& name, const std::vector<int64_t>& dims,
                              const std::vector<int64_t>& values) {
  onnx::TensorProto t;
  t.set_name(name);
  t.set_data_type(onnx::TensorProto::INT64);
  for (int64_t d : dims) t.add_dims(d);
  for (int64_t v : values) t.add_int64_data(v);
  return t;
}

void addInt64(ModelBuilder& m, const std::string& name, const std::vector<int64_t>& dims,
              const std::vector<int64_t>& values) {
  *m.proto().add_initializer() = int64Tensor(name, dims, values);
}

// A float initializer of `dims` filled with small varied values.
void addWeights(ModelBuilder& m, const std::string& name, const std::vector<int64_t>& dims) {
  int64_t n = 1;
  for (int64_t d : dims) n *= d;
  std::vector<float> values(static_cast<size_t>(n));
  for (size_t i = 0; i < values.size(); ++i)
    values[i] = static_cast<float>(static_cast<int>(i % 7) - 3) * 0.1f;
  m.initializer(name, dims, values);
}

const NodePlacement& nodeNamed(const PartitionReport& report, const std::string& name) {
  for (const auto& graph : report.graphs) {
    for (const auto& node : graph.nodes) {
      if (node.node.rfind("'" + name + "'", 0) == 0) return node;
    }
  }
  static const NodePlacement none;
  ADD_FAILURE() << "no node " << name;
  return none;
}

// ReverseSequence(in, lens) → out: the CPU-EP node of these graphs (the Vulkan EP has no kernel for it).
void addReverseSequence(ModelBuilder& m, const std::string& in, const std::string& lens, const std::string& out,
                        const std::string& name, int64_t batchAxis, int64_t timeAxis) {
  auto& node = m.node("ReverseSequence", {in, lens}, {out}, name);
  testing::attrInt(node, "batch_axis", batchAxis);
  testing::attrInt(node, "time_axis", timeAxis);
}

std::string allRejections(const NodePlacement& node) {
  std::string text;
  for (const auto& r : node.rejections) text += r + "\n";
  return text;
}

TEST(PartitionCost, NoWorkNearTheCpuEpStaysOnCpu) {
  cost::GroupCost c;
  c.nodes = 1;
  c.hostNodes = 1;
  c.transferBytes = 9;
  const auto kept = cost::decideOffload(c, {false, true, ""});
  EXPECT_FALSE(kept.offload);
  EXPECT_EQ(kept.reason,
            "kept on CPU: no device work in 1 node (1 host shape arithmetic, 0 data movement), so a "
            "partition would "
            "only add a submit and 9 bytes of transfers (0.100 ms)");
  // A graph with no CPU-EP node keeps it where the session was asked to run it.
  EXPECT_TRUE(cost::decideOffload(c, {false, false, ""}).offload);
  // The fallback switch keeps it offloaded and says what the model would have done.
  const auto forced = cost::decideOffload(c, {false, true, "session.disable_cpu_ep_fallback=1"});
  EXPECT_TRUE(forced.offload);
  EXPECT_EQ(forced.reason.rfind(
                "offloaded: session.disable_cpu_ep_fallback=1 (the cost model alone would have kept", 0),
            0u)
      << forced.reason;
}

TEST(PartitionCost, IslandIsOffloadedOnlyWhenWorkOutweighsTransfersAndSubmit) {
  cost::GroupCost small;
  small.nodes = 2;
  small.workFlops = 1000;
  small.transferBytes = 3 * 1024;
  const auto rejected = cost::decideOffload(small, {true, true, ""});
  EXPECT_FALSE(rejected.offload);
  EXPECT_EQ(rejected.reason,
            "kept on CPU: island of 2 nodes between CPU nodes, 3.0 KB of transfers and a submit (0.101 ms) "
            "outweigh "
            "0.000 ms of work");
  // The same group bordering the graph's inputs or outputs is not an island: offloaded.
  EXPECT_TRUE(cost::decideOffload(small, {false, true, ""}).offload);

  cost::GroupCost large = small;
  large.workFlops = 2.0 * cost::kWorkFlopsPerMs;  // 2 ms of work
  const auto kept = cost::decideOffload(large, {true, true, ""});
  EXPECT_TRUE(kept.offload);
  EXPECT_EQ(kept.reason, "offloaded: 2.000 ms of work outweighs 3.0 KB of transfers and a submit (0.101 ms)");
}

TEST(PartitionCost, FormatsBytes) {
  EXPECT_EQ(cost::formatBytes(1), "1 byte");
  EXPECT_EQ(cost::formatBytes(1023), "1023 bytes");
  EXPECT_EQ(cost::formatBytes(1536), "1.5 KB");
  EXPECT_EQ(cost::formatBytes(3 * 1024 * 1024), "3.0 MB");
}

// n (int64 [1, 1]) → ReverseSequence (CPU) → Equal(·, 16000) → If (CPU): the scalar Equal is no device work (Silero VAD's
// sample-rate test); then = Identity(x) (a Silero-style body that only moves data), else = Relu(x).
TEST(PartitionCostVulkan, ScalarEqualBetweenCpuOpsStaysOnCpu) {
  REQUIRE_VULKAN();
  testing::TempDir dir;
  ModelBuilder m(13);
  m.input("x", {2, 8});
  m.input("n", {1, 1}, onnx::TensorProto::INT64);
  addInt64(m, "lens", {1}, {1});
  addInt64(m, "rate", {1}, {16000});
  addReverseSequence(m, "n", "lens", "total", "reverse", 0, 1);
  m.node("Equal", {"total", "rate"}, {"is_rate"}, "equal");
  testing::GraphBuilder thenBranch("then"), elseBranch("else");
  thenBranch.node("Identity", {"x"}, {"then_y"}, "then_identity");
  thenBranch.output("then_y");
  elseBranch.node("Relu", {"x"}, {"else_y"}, "else_relu");
  elseBranch.output("else_y");
  auto& branch = m.node("If", {"is_rate"}, {"y"}, "branch");
  testing::attrGraph(branch, "then_branch", thenBranch.proto());
  testing::attrGraph(branch, "else_branch", elseBranch.proto());
  m.output("y");
  auto report = analyzePartitions(m.save(dir.file("scalar_equal.onnx")), testing::vulkanOptions());
  ASSERT_TRUE(report.isOk()) << report.status().toString();
  const NodePlacement& equal = nodeNamed(*report, "equal");
  EXPECT_EQ(equal.executionProvider, "CPUExecutionProvider");
  ASSERT_EQ(equal.rejections.size(), 1u);
  EXPECT_EQ(equal.rejections[0].rfind("VulkanExecutionProvider: kept on CPU: no device work in 1 node", 0),
            0u)
      << equal.rejections[0];
  // No partition of the main graph is compiled. In the bodies (their If runs on the CPU EP) the Identity only
  // moves data: it stays on the CPU EP too; the Relu is work and reads the outer x, so it is offloaded.
  for (const auto& graph : report->graphs) {
    for (const auto& p : graph.partitions) EXPECT_TRUE(graph.path != "main" || !p.compiled) << p.name;
  }
  const NodePlacement& identity = nodeNamed(*report, "then_identity");
  EXPECT_EQ(identity.executionProvider, "CPUExecutionProvider");
  ASSERT_EQ(identity.rejections.size(), 1u);
  EXPECT_NE(identity.rejections[0].find("(0 host shape arithmetic, 1 data movement)"), std::string::npos)
      << identity.rejections[0];
  EXPECT_EQ(nodeNamed(*report, "else_relu").executionProvider, "VulkanExecutionProvider");
  EXPECT_EQ(compiledPartitionCount(*report), 1);
}

// x (N×2×4×4) → ReverseSequence (CPU) → c; Shape(c) → Slice → Concat(·, [2, 8]) → Reshape(c) → Conv → y: the shape
// arithmetic runs on the host inside the Conv's partition and counts as Vulkan.
TEST(PartitionCostVulkan, ShapeSubgraphFeedingAConvPartitionIsAbsorbed) {
  REQUIRE_VULKAN();
  testing::TempDir dir;
  ModelBuilder m(13);
  m.input("x", {-1, 2, 4, 4});
  addInt64(m, "lens", {2}, {1, 1});  // batch axis 1 (2), time axis 0 (N ≥ 1)
  addInt64(m, "starts", {1}, {0});
  addInt64(m, "ends", {1}, {2});
  addInt64(m, "tail", {2}, {2, 8});
  addWeights(m, "W", {4, 2, 3, 3});
  addReverseSequence(m, "x", "lens", "c", "reverse", 1, 0);
  m.node("Shape", {"c"}, {"s"}, "shape");
  m.node("Slice", {"s", "starts", "ends"}, {"head"}, "slice");
  testing::attrInt(m.node("Concat", {"head", "tail"}, {"target"}, "concat"), "axis", 0);
  m.node("Reshape", {"c", "target"}, {"r"}, "reshape");
  testing::attrInts(m.node("Conv", {"r", "W"}, {"y"}, "conv"), "pads", {1, 1, 1, 1});
  m.output("y");
  auto report = analyzePartitions(m.save(dir.file("shape_conv.onnx")), testing::vulkanOptions());
  ASSERT_TRUE(report.isOk()) << report.status().toString();
  for (const char* name : {"shape", "slice", "concat", "reshape", "conv"}) {
    EXPECT_EQ(nodeNamed(*report, name).executionProvider, "VulkanExecutionProvider") << name;
  }
  ASSERT_EQ(compiledPartitionCount(*report), 1);
  const auto& main = report->graphs[0];
  const auto compiled = std::find_if(main.partitions.begin(), main.partitions.end(),
                                     [](const ReportedPartition& p) { return p.compiled; });
  ASSERT_NE(compiled, main.partitions.end());
  EXPECT_EQ(compiled->nodes.size(), 5u);
  EXPECT_NE(compiled->reason.find("3 shape-arithmetic nodes run on the host inside it"), std::string::npos)
      << compiled->reason;
}

// x → ReverseSequence (CPU) → op → ReverseSequence (CPU) → y, with `op` a Relu on 2×8 (loses) or a 16→32 3×3 Conv on 64×64
// (wins).
std::string islandModel(const testing::TempDir& dir, bool large) {
  ModelBuilder m(13);
  m.input("x", large ? std::vector<int64_t>{1, 16, 64, 64} : std::vector<int64_t>{2, 8});
  // Batch axis 0, time axis 1: each row reverses its whole time axis (the channels of the large model).
  addInt64(m, "lens_in", large ? std::vector<int64_t>{1} : std::vector<int64_t>{2},
           large ? std::vector<int64_t>{16} : std::vector<int64_t>{8, 8});
  addInt64(m, "lens_out", large ? std::vector<int64_t>{1} : std::vector<int64_t>{2},
           large ? std::vector<int64_t>{32} : std::vector<int64_t>{8, 8});
  addReverseSequence(m, "x", "lens_in", "a", "reverse_in", 0, 1);
  if (large) {
    addWeights(m, "W", {32, 16, 3, 3});
    testing::attrInts(m.node("Conv", {"a", "W"}, {"b"}, "island"), "pads", {1, 1, 1, 1});
  } else {
    m.node("Relu", {"a"}, {"b"}, "island");
  }
  addReverseSequence(m, "b", "lens_out", "y", "reverse_out", 0, 1);
  m.output("y");
  return m.save(dir.file(large ? "large_island.onnx" : "small_island.onnx"));
}

TEST(PartitionCostVulkan, SmallIslandBetweenCpuOpsIsKeptOnCpuWithItsReason) {
  REQUIRE_VULKAN();
  testing::TempDir dir;
  auto report = analyzePartitions(islandModel(dir, false), testing::vulkanOptions());
  ASSERT_TRUE(report.isOk()) << report.status().toString();
  EXPECT_EQ(compiledPartitionCount(*report), 0);
  EXPECT_EQ(partitionCount(*report), 1);  // one run of CPU nodes
  const NodePlacement& island = nodeNamed(*report, "island");
  EXPECT_EQ(island.executionProvider, "CPUExecutionProvider");
  ASSERT_EQ(island.rejections.size(), 1u) << allRejections(island);
  // 2×8 floats in and out (128 bytes), 16 operations.
  EXPECT_EQ(island.rejections[0],
            "VulkanExecutionProvider: kept on CPU: island of 1 node between CPU nodes, 128 bytes of "
            "transfers and a "
            "submit (0.100 ms) outweigh 0.000 ms of work");
}

TEST(PartitionCostVulkan, LargeIslandBetweenCpuOpsIsOffloaded) {
  REQUIRE_VULKAN();
  testing::TempDir dir;
  auto report = analyzePartitions(islandModel(dir, true), testing::vulkanOptions());
  ASSERT_TRUE(report.isOk()) << report.status().toString();
  ASSERT_EQ(compiledPartitionCount(*report), 1);
  const NodePlacement& island = nodeNamed(*report, "island");
  EXPECT_EQ(island.executionProvider, "VulkanExecutionProvider");
  EXPECT_TRUE(island.rejections.empty()) << allRejections(island);
  const auto& partitions = report->graphs[0].partitions;
  ASSERT_EQ(partitions.size(), 3u);
  // 2 × 32×64×64 outputs × 16·3·3 multiply-adds = 37.7 MFLOP; 16 + 32 channels of 64×64 floats cross the
  // border.
  EXPECT_EQ(partitions[1].reason,
            "offloaded: 3.775 ms of work outweighs 768.0 KB of transfers and a submit (0.297 ms)");
}

// Silero VAD legacy's shape, smallest: the If bodies convolve with weights that are initializers of the main graph.
// Their type was unknown inside the body ("input 1 is undefined"), so every such Conv fell back to the CPU EP and the
// bodies split into dozens of partitions. Outer-scope initializers are constants of the body's partitions.
TEST(PartitionCostVulkan, BodyConvReadsOuterScopeWeightsOnVulkan) {
  REQUIRE_VULKAN();
  testing::TempDir dir;
  ModelBuilder m(13);
  m.input("x", {1, 2, 16, 16});
  m.input("flag", {}, onnx::TensorProto::BOOL);
  addWeights(m, "W", {8, 2, 3, 3});
  addWeights(m, "W2", {4, 8, 3, 3});
  testing::GraphBuilder thenBranch("then"), elseBranch("else");
  thenBranch.node("Conv", {"x", "W"}, {"then_c"}, "then_conv");
  thenBranch.node("Relu", {"then_c"}, {"then_r"}, "then_relu");
  thenBranch.node("Conv", {"then_r", "W2"}, {"then_y"}, "then_conv2");
  thenBranch.output("then_y");
  elseBranch.node("Conv", {"x", "W"}, {"else_c"}, "else_conv");
  elseBranch.node("Sigmoid", {"else_c"}, {"else_s"}, "else_sigmoid");
  elseBranch.node("Conv", {"else_s", "W2"}, {"else_y"}, "else_conv2");
  elseBranch.output("else_y");
  auto& branch = m.node("If", {"flag"}, {"y"}, "branch");
  testing::attrGraph(branch, "then_branch", thenBranch.proto());
  testing::attrGraph(branch, "else_branch", elseBranch.proto());
  m.output("y");
  const std::string path = m.save(dir.file("outer_weights.onnx"));
  auto report = analyzePartitions(path, testing::vulkanOptions());
  ASSERT_TRUE(report.isOk()) << report.status().toString();
  for (const char* name : {"then_conv", "then_conv2", "else_conv", "else_conv2"}) {
    const NodePlacement& conv = nodeNamed(*report, name);
    EXPECT_EQ(conv.executionProvider, "VulkanExecutionProvider") << name << ": " << allRejections(conv);
  }
  EXPECT_EQ(compiledPartitionCount(*report), 2);  // one per body

  SessionOptions cpuOptions;
  ASSERT_TRUE(cpuOptions.addConfigEntry("kiln.execution_providers", "cpu").isOk());
  auto cpu = Session::create(path, cpuOptions);
  auto vulkan = Session::create(path, testing::vulkanOptions());
  ASSERT_TRUE(cpu.isOk() && vulkan.isOk()) << vulkan.status().toString();
  std::vector<float> x(2 * 16 * 16);
  for (size_t i = 0; i < x.size(); ++i) x[i] = std::sin(0.37f * static_cast<float>(i));
  for (bool flag : {true, false}) {
    const std::vector<NamedTensor> inputs = {{"x", Tensor::fromVector<float>({1, 2, 16, 16}, x)},
                                             {"flag", Tensor::fromVector<bool>({}, {flag})}};
    auto expected = (*cpu)->run(inputs);
    auto actual = (*vulkan)->run(inputs);
    ASSERT_TRUE(expected.isOk() && actual.isOk()) << actual.status().toString();
    const Tensor& e = (*expected)[0].tensor;
    const Tensor& a = (*actual)[0].tensor;
    ASSERT_EQ(e.shape(), a.shape());
    for (int64_t i = 0; i < e.numel(); ++i) {
      EXPECT_NEAR(a.data<float>()[i], e.data<float>()[i], 1e-4f) << "flag " << flag << " [" << i << "]";
    }
  }
}

}  // namespace
}  // namespace kiln
