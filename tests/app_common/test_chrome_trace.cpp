// The Chrome trace of a profiled run (app/common/chrome_trace.h): CPU nodes on the host track at their measured
// starts, fused nodes named by their anchor, a compiled partition's device steps on a track of their own placed at
// the partition's start, and a write that fails leaves nothing.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include <unistd.h>

#include "chrome_trace.h"

namespace kiln::app {
namespace {

RunProfile profileWithAPartition() {
  RunProfile profile;
  profile.runMs = 10;
  NodeTiming conv;
  conv.node = "conv1", conv.opType = "Conv", conv.graph = "main", conv.executionProvider = "CPUExecutionProvider";
  conv.totalMs = 1.5, conv.calls = 1, conv.startMs = 0.25;
  NodeTiming relu = conv;
  relu.node = "relu1", relu.opType = "Relu", relu.totalMs = 0, relu.fusedInto = "conv1";
  NodeTiming partition;
  partition.node = "vulkan_0", partition.opType = "KilnPartition", partition.graph = "main";
  partition.executionProvider = "VulkanExecutionProvider", partition.totalMs = 6, partition.calls = 1;
  partition.startMs = 2;
  partition.covers = {"'a' (Add)", "'b' (Mul)"};
  partition.deviceSpans = {{"'a' (Add)", 0, 1.0}, {"'f' (FusedElementwise)", 1.0, 2.5}};
  NodeTiming skipped = conv;
  skipped.node = "else_only", skipped.calls = 0, skipped.totalMs = 0;
  profile.nodes = {conv, relu, partition, skipped};
  return profile;
}

std::vector<nlohmann::json> completeEvents(const nlohmann::json& trace, const std::string& category = "") {
  std::vector<nlohmann::json> events;
  for (const auto& e : trace["traceEvents"]) {
    if (e["ph"] == "X" && (category.empty() || e["cat"] == category)) events.push_back(e);
  }
  return events;
}

TEST(ChromeTrace, NodesAtTheirStartsAndFusedNodesNamedByTheirAnchor) {
  const nlohmann::json trace = chromeTraceFromProfile(profileWithAPartition(), "m.onnx");
  EXPECT_EQ(trace["displayTimeUnit"], "ms");
  EXPECT_EQ(trace["otherData"]["model"], "m.onnx");
  const auto nodes = completeEvents(trace, "node");
  ASSERT_EQ(nodes.size(), 1u) << "relu1 ran inside conv1; else_only never ran";
  EXPECT_EQ(nodes[0]["name"], "conv1");
  EXPECT_DOUBLE_EQ(nodes[0]["ts"].get<double>(), 250.0);  // microseconds
  EXPECT_DOUBLE_EQ(nodes[0]["dur"].get<double>(), 1500.0);
  EXPECT_EQ(nodes[0]["args"]["fused"], nlohmann::json::array({"relu1"}));
}

TEST(ChromeTrace, DeviceStepsOnTheirOwnTrackFromThePartitionsStart) {
  const nlohmann::json trace = chromeTraceFromProfile(profileWithAPartition(), "m.onnx");
  const auto partitions = completeEvents(trace, "partition");
  ASSERT_EQ(partitions.size(), 1u);
  EXPECT_EQ(partitions[0]["args"]["covers"].size(), 2u);
  const auto dispatches = completeEvents(trace, "dispatch");
  ASSERT_EQ(dispatches.size(), 2u) << "every device step, the fused chain's included";
  EXPECT_EQ(dispatches[1]["name"], "'f' (FusedElementwise)");
  EXPECT_DOUBLE_EQ(dispatches[1]["ts"].get<double>(), 3000.0);  // partition start 2 ms + device offset 1 ms
  EXPECT_DOUBLE_EQ(dispatches[1]["dur"].get<double>(), 2500.0);
  EXPECT_NE(dispatches[0]["tid"], partitions[0]["tid"]);
  bool named = false;
  for (const auto& e : trace["traceEvents"]) {
    if (e["ph"] == "M" && e["tid"] == dispatches[0]["tid"]) named = e["args"]["name"] == "vulkan_0 (VulkanExecutionProvider device)";
  }
  EXPECT_TRUE(named) << "the device track says whose it is";
}

TEST(ChromeTrace, AnUnwritablePathIsAnErrorAndLeavesNothing) {
  namespace fs = std::filesystem;
  const fs::path folder = fs::temp_directory_path() / ("kiln_chrome_trace_" + std::to_string(::getpid()));
  fs::create_directories(folder);
  const std::string path = (folder / "missing" / "trace.json").string();
  const Status status = writeChromeTrace(path, chromeTraceFromProfile(profileWithAPartition(), "m.onnx"));
  EXPECT_EQ(status.code(), StatusCode::FAIL);
  EXPECT_NE(status.message().find("missing/trace.json"), std::string::npos) << status.message();
  EXPECT_FALSE(fs::exists(folder / "missing"));
  const std::string good = (folder / "trace.json").string();
  ASSERT_TRUE(writeChromeTrace(good, chromeTraceFromProfile(profileWithAPartition(), "m.onnx")).isOk());
  std::ifstream in(good);
  // The complete events plus three names: the process, the host track, the device track.
  EXPECT_EQ(nlohmann::json::parse(in)["traceEvents"].size(),
            completeEvents(chromeTraceFromProfile(profileWithAPartition(), "m.onnx")).size() + 3);
  EXPECT_EQ(std::distance(fs::directory_iterator(folder), {}), 1) << "no temporary left behind";
  fs::remove_all(folder);
}

}  // namespace
}  // namespace kiln::app
