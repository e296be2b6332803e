// The pipeline_users section (format 1.2): which nodes dispatch each SPIR-V module. Recorded by the Vulkan EP at
// compile, written by every writer path (one producer in PreparedContextBinary), read back onto the partitions and
// into the public description; a binary without it (written before 1.2) reads fine and says it records no users; a
// truncated or corrupt section is INVALID_GRAPH naming the section.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>

#include "binary_mutations.h"
#include "context_binary/context_binary.h"
#include "context_binary/pipeline_users_section.h"
#include "device/device_profile.h"
#include "ep/vulkan/vulkan_context_hooks.h"
#include "kiln/context_binary.h"
#include "kiln/context_binary_parts.h"
#include "kiln/session.h"
#include "session/inference_session.h"
#include "test_models.h"
#include "util/file_io.h"
#include "gtest_requirements.h"

namespace kiln {
namespace {

const std::string kModel = std::string(KILN_SOURCE_DIR) + "/resources/models/tiny_cnn.onnx";

// A SPIR-V module of just a header and a LocalSize execution mode (what the header scan needs).
std::vector<uint32_t> spirvModule() {
  std::vector<uint32_t> words{0x07230203, 0x00010300, 0, 8, 0};
  words.insert(words.end(), {(2u << 16) | 17u, 1});
  words.insert(words.end(), {(6u << 16) | 16u, 1, 17, 64, 1, 1});
  return words;
}

// Two nodes ("first_relu", "second_relu"), three pipelines: one used by both nodes, one by each.
CompiledPartition syntheticPartition(const std::string& name) {
  auto graph = std::make_shared<ir::Graph>();
  graph->name = name;
  for (const char* node : {"first_relu", "second_relu"}) {
    ir::Node n;
    n.name = node;
    n.opType = "Relu";
    n.inputs = {std::string(node) + "_in"};
    n.outputs = {std::string(node) + "_out"};
    graph->nodes.push_back(n);
  }
  CompiledPartition p;
  p.name = name;
  p.executionProvider = "VulkanExecutionProvider";
  p.graph = graph;
  p.opsets = {{"", 17}};
  p.nodes.resize(2);
  p.spirv = {{"relu|shared", spirvModule()}, {"relu|a", spirvModule()}, {"relu|b", spirvModule()}};
  p.pipelineUsers = {{"relu|shared", {0, 1}}, {"relu|a", {0}}, {"relu|b", {1}}};
  return p;
}

std::vector<std::byte> encode(const std::vector<CompiledPartition>& partitions) {
  ctxbin::BinaryContents contents;
  contents.partitions = partitions;
  contents.targetKind = ctxbin::TargetKind::PROFILE;
  auto target = vk::readDeviceProfile(std::string(KILN_SOURCE_DIR) + "/resources/profiles/vulkan11_minimal.json");
  EXPECT_TRUE(target.isOk()) << target.status().toString();
  if (target.isOk()) contents.target = target.value();
  auto bytes = ctxbin::encodeContextBinary(contents);
  EXPECT_TRUE(bytes.isOk()) << bytes.status().toString();
  return bytes.isOk() ? std::move(bytes).value() : std::vector<std::byte>();
}

const ctxbin::SectionEntry* findSection(const ctxbin::ParsedHeader& parsed, ctxbin::SectionKind kind) {
  for (const auto& s : parsed.sections) {
    if (s.kind == kind) return &s;
  }
  return nullptr;
}

// "partition/node" for every node of `pipeline`.
std::vector<std::string> userNames(const ContextBinaryPipeline& pipeline) {
  std::vector<std::string> names;
  for (const auto& n : pipeline.nodes) names.push_back(n.graph + "/" + n.node);
  return names;
}

TEST(PipelineUsers, SectionRoundTrip) {
  const std::vector<CompiledPartition> partitions = {syntheticPartition("model_vulkan_0"), syntheticPartition("model_vulkan_1")};
  uint64_t records = 0;
  const auto section = ctxbin::encodePipelineUsersSection(partitions, &records);
  EXPECT_EQ(records, 2u);
  auto decoded = ctxbin::decodePipelineUsersSection(section);
  ASSERT_TRUE(decoded.isOk()) << decoded.status().toString();
  ASSERT_EQ(decoded->size(), 2u);
  const auto& shared = decoded->at("model_vulkan_1").at("relu|shared");
  ASSERT_EQ(shared.size(), 2u);
  EXPECT_EQ(shared[0].node, 0u);
  EXPECT_EQ(shared[0].name, "first_relu");
  EXPECT_EQ(shared[1].name, "second_relu");

  // Through a whole binary: the section is written, the partitions read it back, the description lists it.
  const auto bytes = encode(partitions);
  auto binary = ctxbin::ContextBinary::fromBytes(bytes, "synthetic.bin");
  ASSERT_TRUE(binary.isOk()) << binary.status().toString();
  EXPECT_TRUE(binary.value()->hasPipelineUsers());
  auto read = binary.value()->partitions();
  ASSERT_TRUE(read.isOk()) << read.status().toString();
  ASSERT_EQ(read->size(), 2u);
  EXPECT_EQ(read->at(0).pipelineUsers, partitions[0].pipelineUsers);
  EXPECT_EQ(read->at(1).pipelineUsers, partitions[1].pipelineUsers);

  auto info = inspectContextBinary(bytes, "synthetic.bin");
  ASSERT_TRUE(info.isOk()) << info.status().toString();
  EXPECT_EQ(info->formatVersion, "1." + std::to_string(ctxbin::kFormatMinor));
  EXPECT_TRUE(info->pipelineUsersRecorded);
  bool listed = false;
  for (const auto& s : info->sections) listed |= s.kind == "pipeline_users" && s.items == 2;
  EXPECT_TRUE(listed);
  ASSERT_EQ(info->pipelines.size(), 3u);  // the SPIR-V section stores each key once for both partitions
  for (const auto& pipeline : info->pipelines) {
    EXPECT_EQ(pipeline.bytes, spirvModule().size() * 4);
    EXPECT_EQ(pipeline.graphs, (std::vector<std::string>{"model_vulkan_0", "model_vulkan_1"}));
    if (pipeline.key == "relu|shared") {
      EXPECT_EQ(userNames(pipeline), (std::vector<std::string>{"model_vulkan_0/first_relu", "model_vulkan_0/second_relu",
                                                               "model_vulkan_1/first_relu", "model_vulkan_1/second_relu"}));
    } else if (pipeline.key == "relu|b") {
      EXPECT_EQ(userNames(pipeline), (std::vector<std::string>{"model_vulkan_0/second_relu", "model_vulkan_1/second_relu"}));
      EXPECT_EQ(pipeline.nodes[0].nodeIndex, 1);
    }
  }
  auto modules = readContextBinarySpirv(bytes, "synthetic.bin");
  ASSERT_TRUE(modules.isOk()) << modules.status().toString();
  for (const auto& m : *modules) EXPECT_FALSE(m.nodes.empty()) << m.key;
}

// A binary whose partitions record no users (what every binary before format 1.2 is) has no section and reads fine.
TEST(PipelineUsers, BinaryWithoutTheSectionReadsAndSaysSo) {
  std::vector<CompiledPartition> partitions = {syntheticPartition("old_vulkan_0")};
  partitions[0].pipelineUsers.clear();
  const auto bytes = encode(partitions);
  auto binary = ctxbin::ContextBinary::fromBytes(bytes, "old.bin");
  ASSERT_TRUE(binary.isOk()) << binary.status().toString();
  EXPECT_FALSE(binary.value()->hasPipelineUsers());
  auto info = inspectContextBinary(bytes, "old.bin");
  ASSERT_TRUE(info.isOk()) << info.status().toString();
  EXPECT_FALSE(info->pipelineUsersRecorded);
  for (const auto& s : info->sections) EXPECT_NE(s.kind, "pipeline_users");
  ASSERT_EQ(info->pipelines.size(), 3u);
  for (const auto& p : info->pipelines) {
    EXPECT_TRUE(p.nodes.empty()) << p.key;
    EXPECT_EQ(p.graphs, std::vector<std::string>{"old_vulkan_0"});
  }
}

TEST(PipelineUsers, TruncatedOrCorruptSectionIsInvalidGraphNamingIt) {
  const std::vector<CompiledPartition> partitions = {syntheticPartition("model_vulkan_0")};
  const auto section = ctxbin::encodePipelineUsersSection(partitions, nullptr);
  for (size_t cut = 0; cut < section.size(); ++cut) {
    auto decoded = ctxbin::decodePipelineUsersSection(std::span(section).first(cut));
    ASSERT_FALSE(decoded.isOk()) << "cut at " << cut;
    EXPECT_EQ(decoded.status().code(), StatusCode::INVALID_GRAPH);
    EXPECT_NE(decoded.status().message().find("pipeline_users section"), std::string::npos) << decoded.status().toString();
  }
  auto trailing = section;
  trailing.push_back(std::byte{0});
  EXPECT_NE(ctxbin::decodePipelineUsersSection(trailing).status().message().find("1 bytes after its last record"),
            std::string::npos);

  const auto original = encode(partitions);
  auto parsed = ctxbin::parseHeader(original);
  ASSERT_TRUE(parsed.isOk());
  const ctxbin::SectionEntry* users = findSection(*parsed, ctxbin::SectionKind::PIPELINE_USERS);
  ASSERT_NE(users, nullptr);

  // Damaged bytes: the hash says so, naming the section.
  auto flipped = original;
  flipped[users->offset + users->size / 2] ^= std::byte{0x10};
  auto opened = ctxbin::ContextBinary::fromBytes(flipped, "flipped");
  EXPECT_EQ(opened.status().code(), StatusCode::INVALID_GRAPH);
  EXPECT_NE(opened.status().message().find("pipeline_users section content hash mismatch"), std::string::npos)
      << opened.status().toString();

  // Damage with the hashes fixed up: the decoder's own checks answer.
  auto counted = original;
  const uint32_t huge = 0x7fffffff;
  std::memcpy(counted.data() + users->offset, &huge, 4);
  testing::mutation_detail::rehash(counted);
  auto reopened = ctxbin::ContextBinary::fromBytes(counted, "counted");
  ASSERT_TRUE(reopened.isOk()) << reopened.status().toString();
  auto read = reopened.value()->partitions();
  EXPECT_EQ(read.status().code(), StatusCode::INVALID_GRAPH);
  EXPECT_NE(read.status().message().find("pipeline_users section does not parse"), std::string::npos)
      << read.status().toString();
  EXPECT_EQ(inspectContextBinary(counted, "counted").status().code(), StatusCode::INVALID_GRAPH);
  const auto diagnosis = diagnoseContextBinary(counted, "counted");
  EXPECT_EQ(diagnosis.failedPart, "pipeline_users") << diagnosis.problem;

  // A name that is not the indexed node's (the writer takes names from the graph, so only damage does this).
  auto renamed = original;
  const std::string from = "first_relu", to = "FIRST_RELU";
  const auto at = std::search(renamed.begin() + static_cast<std::ptrdiff_t>(users->offset), renamed.end(),
                              reinterpret_cast<const std::byte*>(from.data()),
                              reinterpret_cast<const std::byte*>(from.data()) + from.size());
  ASSERT_NE(at, renamed.end());
  std::memcpy(&*at, to.data(), to.size());
  testing::mutation_detail::rehash(renamed);
  auto mismatch = ctxbin::ContextBinary::fromBytes(renamed, "renamed").value()->partitions();
  EXPECT_EQ(mismatch.status().code(), StatusCode::INVALID_GRAPH);
  EXPECT_NE(mismatch.status().message().find("which the graph names 'first_relu'"), std::string::npos)
      << mismatch.status().toString();
  EXPECT_EQ(diagnoseContextBinary(renamed, "renamed").failedPart, "pipeline_users");

  // Users the partitions cannot have: a node past the graph, a key with no SPIR-V, a partition the binary lacks.
  ctxbin::PipelineUsers outOfRange = {{"model_vulkan_0", {{"relu|a", {{7, "x"}}}}}};
  auto target = partitions;
  target[0].pipelineUsers.clear();
  EXPECT_NE(ctxbin::attachPipelineUsers(outOfRange, target).message().find("names node 7 of partition 'model_vulkan_0', which has 2 nodes"),
            std::string::npos);
  ctxbin::PipelineUsers noSpirv = {{"model_vulkan_0", {{"gone|", {{0, "first_relu"}}}}}};
  EXPECT_NE(ctxbin::attachPipelineUsers(noSpirv, target).message().find("which has no SPIR-V for it"), std::string::npos);
  ctxbin::PipelineUsers stranger = {{"other_vulkan_0", {}}};
  EXPECT_NE(ctxbin::attachPipelineUsers(stranger, target).message().find("names partition 'other_vulkan_0'"),
            std::string::npos);

  // Every other damage: INVALID_GRAPH or a valid file, never a crash.
  std::vector<std::string> failures;
  testing::mutateContextBinary(original, [&](const std::string& what) { failures.push_back(what); });
  for (size_t i = 0; i < failures.size() && i < 20; ++i) ADD_FAILURE() << failures[i];
}

// The Vulkan EP records, at compile, the nodes of each partition that dispatch each pipeline: every SPIR-V module
// the partition stores has users, the users are the partition graph's nodes, and the binary carries them.
TEST(PipelineUsers, RecordedAtCompileAndReadBackFromTheBinary) {
  REQUIRE_VULKAN();
  testing::TempDir dir;
  auto session = Session::create(kModel, testing::vulkanOptions());
  ASSERT_TRUE(session.isOk()) << session.status().toString();
  auto model = compiledModelOf(*session.value());
  ASSERT_TRUE(model.isOk()) << model.status().toString();
  size_t vulkanPartitions = 0;
  for (const auto& p : model->partitions) {
    if (p.spirv.empty()) continue;
    ++vulkanPartitions;
    EXPECT_EQ(p.pipelineUsers.size(), p.spirv.size()) << p.name;
    for (const auto& [key, nodes] : p.pipelineUsers) {
      EXPECT_TRUE(p.spirv.count(key)) << key;
      EXPECT_FALSE(nodes.empty()) << key;
      for (size_t node : nodes) EXPECT_LT(node, p.graph->nodes.size()) << key;
    }
  }
  ASSERT_GT(vulkanPartitions, 0u);

  auto contents = vk::vulkanContextHooks()->exportContext(model->partitions);
  ASSERT_TRUE(contents.isOk()) << contents.status().toString();
  ASSERT_TRUE(ctxbin::writeContextBinary(contents.value(), dir.file("tiny_vulkan.bin")).isOk());
  auto binary = ctxbin::ContextBinary::open(dir.file("tiny_vulkan.bin"));
  ASSERT_TRUE(binary.isOk()) << binary.status().toString();
  auto read = binary.value()->partitions();
  ASSERT_TRUE(read.isOk()) << read.status().toString();
  ASSERT_EQ(read->size(), model->partitions.size());
  for (size_t i = 0; i < read->size(); ++i) EXPECT_EQ(read->at(i).pipelineUsers, model->partitions[i].pipelineUsers);

  auto info = inspectContextBinary(dir.file("tiny_vulkan.bin"));
  ASSERT_TRUE(info.isOk()) << info.status().toString();
  EXPECT_TRUE(info->pipelineUsersRecorded);
  ASSERT_EQ(info->pipelines.size(), info->spirvModules.size());
  for (const auto& pipeline : info->pipelines) {
    EXPECT_FALSE(pipeline.nodes.empty()) << pipeline.key;
    for (const auto& ref : pipeline.nodes) {
      const auto p = std::find_if(model->partitions.begin(), model->partitions.end(),
                                  [&](const auto& c) { return c.name == ref.graph; });
      ASSERT_NE(p, model->partitions.end()) << ref.graph;
      EXPECT_EQ(p->graph->nodes.at(static_cast<size_t>(ref.nodeIndex)).name, ref.node);
    }
  }
}

}  // namespace
}  // namespace kiln
