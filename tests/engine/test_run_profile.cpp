// RunOptions::setProfiling and Session::lastRunProfile: one entry per executed node with its graph path, call count
// and EP; Loop bodies count their iterations; unprofiled and failed runs leave the last profile alone.
#include <gtest/gtest.h>

#include <algorithm>

#include "gtest_requirements.h"
#include "kiln/provider_names.h"
#include "kiln/session.h"
#include "model_builder.h"

namespace kiln {
namespace {

using testing::ModelBuilder;

std::unique_ptr<Session> createCpuSession(const ModelBuilder& builder) {
  std::string bytes;
  builder.build().SerializeToString(&bytes);
  SessionOptions options;
  EXPECT_TRUE(options.addConfigEntry("kiln.execution_providers", "cpu").isOk());
  EXPECT_TRUE(options.addConfigEntry("kiln.graph_optimization_level", "none").isOk());
  auto session = Session::create(std::span(reinterpret_cast<const std::byte*>(bytes.data()), bytes.size()), options);
  EXPECT_TRUE(session.isOk()) << session.status().toString();
  return session.isOk() ? std::move(session).value() : nullptr;
}

// Y = Relu(X + 1), then V = Y + 3 via a Loop that adds 1 three times (body nodes "inc" and "keep").
ModelBuilder addThenLoop() {
  ModelBuilder b;
  b.input("X", {2});
  b.initializer("one", {2}, {1, 1});
  onnx::TensorProto count;
  count.set_name("M");
  count.set_data_type(onnx::TensorProto::INT64);
  count.add_int64_data(3);
  *b.proto().add_initializer() = count;
  b.node("Add", {"X", "one"}, {"S"}, "add");
  b.node("Relu", {"S"}, {"Y"}, "relu");
  testing::GraphBuilder body("body");
  body.input("i", {}, onnx::TensorProto::INT64);
  body.input("cond", {}, onnx::TensorProto::BOOL);
  body.input("v", {2});
  body.node("Identity", {"cond"}, {"cond_out"}, "keep");
  body.node("Add", {"v", "one"}, {"v_out"}, "inc");
  body.output("cond_out", {}, onnx::TensorProto::BOOL);
  body.output("v_out", {2});
  testing::attrGraph(b.node("Loop", {"M", "", "Y"}, {"V"}, "loop"), "body", body.proto());
  b.output("V", {2});
  return b;
}

const NodeTiming* find(const RunProfile& profile, const std::string& node) {
  auto it = std::find_if(profile.nodes.begin(), profile.nodes.end(), [&](const NodeTiming& t) { return t.node == node; });
  return it == profile.nodes.end() ? nullptr : &*it;
}

std::vector<NamedTensor> inputs() { return {{"X", Tensor::fromVector<float>({2}, {-5, 2})}}; }

TEST(RunProfile, EmptyUntilAProfiledRun) {
  auto session = createCpuSession(addThenLoop());
  ASSERT_TRUE(session);
  ASSERT_TRUE(session->run(inputs()).isOk());
  EXPECT_TRUE(session->lastRunProfile().nodes.empty());
}

TEST(RunProfile, EveryNodeOnceWithItsGraphPathAndLoopBodiesPerIteration) {
  auto session = createCpuSession(addThenLoop());
  ASSERT_TRUE(session);
  RunOptions options;
  options.setProfiling(true);
  auto outputs = session->run(inputs(), options);
  ASSERT_TRUE(outputs.isOk()) << outputs.status().toString();
  EXPECT_EQ((*outputs)[0].tensor.data<float>()[1], 6.0f);

  const RunProfile profile = session->lastRunProfile();
  EXPECT_GT(profile.runMs, 0);
  ASSERT_EQ(profile.nodes.size(), 5u);
  // First-execution order: the Loop's body nodes appear before the Loop finishes, after relu.
  EXPECT_EQ(profile.nodes[0].node, "add");
  EXPECT_EQ(profile.nodes[1].node, "relu");
  for (const char* name : {"add", "relu", "loop"}) {
    const NodeTiming* t = find(profile, name);
    ASSERT_NE(t, nullptr) << name;
    EXPECT_EQ(t->graph, "main") << name;
    EXPECT_EQ(t->calls, 1) << name;
    EXPECT_EQ(t->executionProvider, kCpuExecutionProvider) << name;
    EXPECT_GE(t->totalMs, 0) << name;
  }
  const NodeTiming* inc = find(profile, "inc");
  ASSERT_NE(inc, nullptr);
  EXPECT_EQ(inc->graph, "main/loop.body");
  EXPECT_EQ(inc->opType, "Add");
  EXPECT_EQ(inc->calls, 3);
  // A node that runs a body includes the body's time.
  EXPECT_GE(find(profile, "loop")->totalMs, inc->totalMs);
}

TEST(RunProfile, UnprofiledAndFailedRunsKeepTheLastProfile) {
  auto session = createCpuSession(addThenLoop());
  ASSERT_TRUE(session);
  RunOptions profiled;
  profiled.setProfiling(true);
  ASSERT_TRUE(session->run(inputs(), profiled).isOk());
  ASSERT_TRUE(session->run(inputs()).isOk());
  EXPECT_EQ(session->lastRunProfile().nodes.size(), 5u);
  RunOptions cancelled;
  cancelled.setProfiling(true);
  cancelled.setTerminate();
  EXPECT_FALSE(session->run(inputs(), cancelled).isOk());
  EXPECT_EQ(session->lastRunProfile().nodes.size(), 5u);
}

// X -> add (Add) -> relu (Relu) -> Y, on Vulkan; `vulkanProfile` sets kiln.vulkan.profile=1 (device timestamps).
std::unique_ptr<Session> createVulkanSession(bool vulkanProfile) {
  ModelBuilder b;
  b.input("X", {2});
  b.initializer("one", {2}, {1, 1});
  b.node("Add", {"X", "one"}, {"S"}, "add");
  b.node("Relu", {"S"}, {"Y"}, "relu");
  b.output("Y", {2});
  std::string bytes;
  b.build().SerializeToString(&bytes);
  SessionOptions options;
  EXPECT_TRUE(options.addConfigEntry("kiln.execution_providers", "vulkan").isOk());
  if (vulkanProfile) {
    EXPECT_TRUE(options.addConfigEntry("kiln.vulkan.profile", "1").isOk());
  }
  auto session = Session::create(std::span(reinterpret_cast<const std::byte*>(bytes.data()), bytes.size()), options);
  EXPECT_TRUE(session.isOk()) << session.status().toString();
  return session.isOk() ? std::move(session).value() : nullptr;
}

RunProfile profiledRun(Session& session) {
  RunOptions profiled;
  profiled.setProfiling(true);
  EXPECT_TRUE(session.run(inputs(), profiled).isOk());
  return session.lastRunProfile();
}

// A compiled partition is one entry, named as the partition report names it, listing the model nodes it runs.
TEST(RunProfile, CompiledPartitionIsOneEntryCoveringItsNodes) {
  REQUIRE_VULKAN();
  auto session = createVulkanSession(false);
  ASSERT_NE(session, nullptr);
  const RunProfile profile = profiledRun(*session);
  ASSERT_EQ(profile.nodes.size(), 1u);
  const NodeTiming& partition = profile.nodes[0];
  EXPECT_EQ(partition.opType, "KilnPartition");
  EXPECT_EQ(partition.executionProvider, kVulkanExecutionProvider);
  EXPECT_EQ(partition.node, session->partitions().at(0).name);
  EXPECT_EQ(partition.covers.size(), 2u);
  EXPECT_GT(partition.totalMs, 0);
  EXPECT_TRUE(partition.coveredMs.empty());  // no device timestamps without kiln.vulkan.profile=1
}

// With kiln.vulkan.profile=1 the partition's entry also gives each covered node its device time (timestamps around
// its dispatches): the Add dispatches (the Relu may be fused into it, then 0), and the device times fit in the
// partition's wall time.
TEST(RunProfile, VulkanProfileGivesEachCoveredNodeItsDeviceTime) {
  REQUIRE_VULKAN();
  auto session = createVulkanSession(true);
  ASSERT_NE(session, nullptr);
  const RunProfile profile = profiledRun(*session);
  ASSERT_EQ(profile.nodes.size(), 1u);
  const NodeTiming& partition = profile.nodes[0];
  ASSERT_EQ(partition.covers.size(), 2u);
  if (partition.coveredMs.empty()) GTEST_SKIP() << "the Vulkan device has no timestamp queries";
  ASSERT_EQ(partition.coveredMs.size(), partition.covers.size());
  EXPECT_EQ(partition.covers[0], "'add' (Add)");
  EXPECT_GT(partition.coveredMs[0], 0);
  double sum = 0;
  for (double ms : partition.coveredMs) {
    EXPECT_GE(ms, 0);
    sum += ms;
  }
  EXPECT_LE(sum, partition.totalMs);
}

}  // namespace
}  // namespace kiln
