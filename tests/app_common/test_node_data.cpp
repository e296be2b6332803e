// Per-node data (app/common/node_data.h): a profile becomes one entry per node, the JSON reads back as written,
// and a document that is not node data is refused naming what is wrong.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "kiln/model_info.h"
#include "node_data.h"

namespace kiln::app {
namespace {

RunProfile sampleProfile() {
  RunProfile profile;
  profile.runMs = 4.5;
  profile.nodes.push_back({"conv1", "Conv", "main", "CPUExecutionProvider", 1.25, 1, "", {}});
  profile.nodes.push_back({"relu1", "Relu", "main", "CPUExecutionProvider", 0, 1, "conv1", {}});
  profile.nodes.push_back({"vulkan_0", "KilnPartition", "main/If_0.then_branch", "VulkanExecutionProvider", 3, 2, "",
                           {"'a' (Add)", "'b' (Mul)"}});
  return profile;
}

TEST(NodeData, ProfileEntriesCarryTimeCallsAndDetails) {
  const NodeData data = nodeDataFromProfile(sampleProfile(), "m.onnx");
  const nlohmann::json j = toJson(data);
  EXPECT_EQ(j["format"], kNodeDataFormat);
  EXPECT_EQ(j["version"], kNodeDataVersion);
  EXPECT_EQ(j["kind"], "profile");
  EXPECT_EQ(j["model"], "m.onnx");
  EXPECT_EQ(j["summary"]["run_ms"], 4.5);
  ASSERT_EQ(j["nodes"].size(), 3u);
  EXPECT_EQ(j["nodes"][0]["metrics"]["time_ms"], 1.25);
  EXPECT_EQ(j["nodes"][0]["calls"], 1);
  EXPECT_FALSE(j["nodes"][0].contains("fused_into"));
  EXPECT_EQ(j["nodes"][1]["fused_into"], "conv1");
  EXPECT_EQ(j["nodes"][2]["graph"], "main/If_0.then_branch");
  EXPECT_EQ(j["nodes"][2]["covers"].size(), 2u);
  EXPECT_EQ(j["nodes"][2]["execution_provider"], "VulkanExecutionProvider");
}

TEST(NodeData, ReadsBackWhatItWrites) {
  const NodeData written = nodeDataFromProfile(sampleProfile(), "m.onnx");
  auto read = nodeDataFromJson(toJson(written));
  ASSERT_TRUE(read.isOk()) << read.status().toString();
  ASSERT_EQ(read->nodes.size(), 3u);
  EXPECT_EQ(read->nodes[2].node, "vulkan_0");
  EXPECT_EQ(read->nodes[2].graph, "main/If_0.then_branch");
  EXPECT_EQ(read->nodes[2].metrics.at("time_ms"), 3);
  EXPECT_EQ(read->nodes[2].details["calls"], 2);
  EXPECT_EQ(toJson(*read), toJson(written));
}

// The data names its model's identity, so a reader can tell the model it belongs to from one with the same names.
TEST(NodeData, BindsToItsModelsContentHash) {
  const std::string model = std::string(KILN_TEST_MODELS_DIR) + "/tiny_cnn.onnx";
  const NodeData bound = nodeDataFromProfile(sampleProfile(), model);
  const Result<ModelIdentity> identity = identifyModel(model);
  ASSERT_TRUE(identity.isOk()) << identity.status().toString();
  EXPECT_EQ(bound.modelHash, identity->contentHash);
  EXPECT_TRUE(bound.modelSourceHash.empty());
  const nlohmann::json j = toJson(bound);
  EXPECT_EQ(j["model_hash"], identity->contentHash);
  EXPECT_FALSE(j.contains("model_source_hash"));
  auto read = nodeDataFromJson(j);
  ASSERT_TRUE(read.isOk()) << read.status().toString();
  EXPECT_EQ(read->modelHash, identity->contentHash);
  // A model that cannot be read leaves the data unbound, not refused; older files without the keys read as unbound.
  EXPECT_TRUE(nodeDataFromProfile(sampleProfile(), "m.onnx").modelHash.empty());
  EXPECT_FALSE(toJson(nodeDataFromProfile(sampleProfile(), "m.onnx")).contains("model_hash"));
}

TEST(NodeData, RefusesDocumentsThatAreNotNodeData) {
  const auto refused = [](const nlohmann::json& document, const std::string& mention) {
    auto read = nodeDataFromJson(document);
    ASSERT_FALSE(read.isOk());
    EXPECT_EQ(read.status().code(), StatusCode::INVALID_ARGUMENT);
    EXPECT_NE(read.status().message().find(mention), std::string::npos) << read.status().toString();
  };
  nlohmann::json good = toJson(nodeDataFromProfile(sampleProfile(), "m.onnx"));
  refused(nlohmann::json::array(), "format");
  refused({{"format", "something-else"}}, "format");
  nlohmann::json version = good;
  version["version"] = 2;
  refused(version, "version");
  nlohmann::json nodes = good;
  nodes["nodes"] = "x";
  refused(nodes, "\"nodes\"");
  nlohmann::json unnamed = good;
  unnamed["nodes"][1].erase("node");
  refused(unnamed, "nodes[1]");
  nlohmann::json metric = good;
  metric["nodes"][0]["metrics"]["time_ms"] = "slow";
  refused(metric, "nodes[0].metrics.time_ms");
}

TEST(NodeData, WritesWholeFilesAndReportsUnwritableFolders) {
  const auto folder = std::filesystem::temp_directory_path() / ("kiln_node_data_" + std::to_string(::testing::UnitTest::GetInstance()->random_seed()));
  std::filesystem::create_directories(folder);
  const auto path = (folder / "times.json").string();
  ASSERT_TRUE(writeNodeData(path, nodeDataFromProfile(sampleProfile(), "m.onnx")).isOk());
  std::ifstream in(path);
  auto read = nodeDataFromJson(nlohmann::json::parse(in));
  EXPECT_TRUE(read.isOk());
  EXPECT_EQ(std::distance(std::filesystem::directory_iterator(folder), {}), 1);  // no temporary left behind
  EXPECT_FALSE(writeNodeData((folder / "missing" / "times.json").string(), {}).isOk());
  std::filesystem::remove_all(folder);
}

}  // namespace
}  // namespace kiln::app
