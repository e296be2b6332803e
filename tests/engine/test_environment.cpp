// kiln/environment.h: the process-wide state (open Vulkan devices, shared thread pools, the pending weight-sharing
// group) is visible, and releaseUnusedDevices() closes only the devices no live session holds.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>

#include "kiln/environment.h"
#include "kiln/session.h"
#include "model_builder.h"
#include "test_models.h"
#include "gtest_requirements.h"

namespace kiln {
namespace {

using testing::ModelBuilder;

bool contains(const auto& list, const auto& item) { return std::find(list.begin(), list.end(), item) != list.end(); }

// Y = Relu(X) + B: runs on the Vulkan EP when asked for.
std::string reluAddModel(const testing::TempDir& dir) {
  ModelBuilder m(13);
  m.input("X", {2, 4});
  m.initializer("B", {1, 4}, {1, 2, 3, 4});
  m.node("Relu", {"X"}, {"R"});
  m.node("Add", {"R", "B"}, {"Y"});
  m.output("Y", {2, 4});
  return m.save(dir.file("relu_add.onnx"));
}

TEST(Environment, ReleaseUnusedDevicesClosesOnlyDevicesNoSessionHolds) {
  REQUIRE_VULKAN();
  testing::TempDir dir;
  const std::string path = reluAddModel(dir);
  auto session = Session::create(path, testing::vulkanOptions());
  ASSERT_TRUE(session.isOk()) << session.status().toString();
  ASSERT_EQ((*session)->partitions().front().executionProvider, "VulkanExecutionProvider");
  const auto open = openVulkanDevices();
  ASSERT_EQ(open.size(), 1u) << "one session on one device";
  const uint32_t device = open.front();

  releaseUnusedDevices();  // the live session keeps its device
  EXPECT_TRUE(contains(openVulkanDevices(), device));
  EXPECT_TRUE((*session)->run({{"X", Tensor::fromVector<float>({2, 4}, {-1, 1, -1, 1, 0, 0, 0, 0})}}).isOk());

  session.value().reset();  // the last session using the device goes
  EXPECT_TRUE(contains(openVulkanDevices(), device)) << "kept open for reuse until released";
  releaseUnusedDevices();
  EXPECT_FALSE(contains(openVulkanDevices(), device));

  // A later session opens it again and runs.
  auto again = Session::create(path, testing::vulkanOptions());
  ASSERT_TRUE(again.isOk()) << again.status().toString();
  EXPECT_TRUE(contains(openVulkanDevices(), device));
  auto outputs = (*again)->run({{"X", Tensor::fromVector<float>({2, 4}, {-1, 1, -1, 1, 0, 0, 0, 0})}});
  ASSERT_TRUE(outputs.isOk()) << outputs.status().toString();
  EXPECT_EQ((*outputs)[0].tensor.data<float>()[1], 3.f);
}

TEST(Environment, ThreadPoolsLiveAsLongAsTheirSessions) {
  testing::TempDir dir;
  const std::string path = reluAddModel(dir);
  SessionOptions options;
  ASSERT_TRUE(options.addConfigEntry("kiln.execution_providers", "cpu").isOk());
  ASSERT_TRUE(options.addConfigEntry("kiln.intra_op_num_threads", "3").isOk());
  EXPECT_FALSE(contains(liveThreadPools(), 3));
  {
    auto first = Session::create(path, options);
    auto second = Session::create(path, options);
    ASSERT_TRUE(first.isOk() && second.isOk()) << first.status().toString();
    const auto pools = liveThreadPools();
    EXPECT_EQ(std::count(pools.begin(), pools.end(), 3), 1) << "sessions asking for one count share one pool";
  }
  EXPECT_FALSE(contains(liveThreadPools(), 3));
}

TEST(Environment, PendingShareGroupCanBeDiscarded) {
  REQUIRE_VULKAN();
  testing::TempDir dir;
  const std::string path = reluAddModel(dir);
  SessionOptions options = testing::vulkanOptions();
  ASSERT_TRUE(options.addConfigEntry("ep.context_enable", "1").isOk());
  ASSERT_TRUE(options.addConfigEntry("ep.share_ep_contexts", "1").isOk());
  ASSERT_TRUE(options.addConfigEntry("ep.context_file_path", dir.file("shared_ctx.onnx")).isOk());
  EXPECT_EQ(pendingShareGroupMembers(), 0u);
  auto session = Session::create(path, options);
  ASSERT_TRUE(session.isOk()) << session.status().toString();
  EXPECT_EQ(pendingShareGroupMembers(), 1u);
  discardPendingShareGroup();
  EXPECT_EQ(pendingShareGroupMembers(), 0u);
  EXPECT_FALSE(std::filesystem::exists(dir.file("shared_ctx.onnx"))) << "a discarded group writes nothing";
}

}  // namespace
}  // namespace kiln
