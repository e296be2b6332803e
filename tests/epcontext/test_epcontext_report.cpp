// The partition report of a compiled (ctx) model: analyzePartitions and a session created from the ctx model give
// the same report, in which every EPContext node, bodies of If included, is one compiled partition of the Vulkan EP
// naming its context binary, and the other nodes run on the CPU EP.
#include <gtest/gtest.h>

#include <filesystem>
#include <sstream>

#include "epcontext_checks.h"
#include "epcontext_models.h"
#include "kiln/compiler.h"
#include "kiln/context_binary.h"
#include "kiln/epcontext.h"
#include "kiln/partition_report.h"
#include "test_models.h"
#include "gtest_requirements.h"

namespace kiln::testing {
namespace {

namespace fs = std::filesystem;

// Every field of the report, one line per fact, so that two reports compare as text.
std::string describe(const PartitionReport& report) {
  std::ostringstream out;
  for (const auto& ep : report.executionProviders) out << "ep " << ep << "\n";
  out << "level " << report.optimizationLevel << " " << report.nodesFolded << " " << report.nodesRemoved << "\n";
  for (const auto& graph : report.graphs) {
    out << "graph " << graph.path << "\n";
    for (const auto& p : graph.partitions) {
      out << " partition " << p.name << " " << p.executionProvider << " " << p.compiled << " binary=" << p.binary;
      for (const auto& n : p.nodes) out << " [" << n << "]";
      for (const auto& v : p.inputs) out << " <" << v;
      for (const auto& v : p.outputs) out << " >" << v;
      out << "\n";
    }
    for (const auto& n : graph.nodes) out << " node " << n.node << " " << n.opType << " " << n.executionProvider << "\n";
  }
  return out.str();
}

class EpContextReport : public ::testing::TestWithParam<bool> {
 protected:
  // Compiles the If model (partitions only inside its bodies) with embed mode GetParam(); returns the ctx path.
  std::string compileIfModel() {
    const SourceModel source = writeSourceModel(Topology::kIfBody, dir_.path().string(), "m", 0, false);
    ModelCompilationOptions options(vulkanOptions());
    options.setInputModelPath(source.path).setEpContextEmbedMode(GetParam());
    auto compiled = compileModel(options);
    EXPECT_TRUE(compiled.isOk()) << compiled.status().toString();
    return compiled.isOk() ? compiled->outputModelPath : std::string();
  }

  TempDir dir_;
};

TEST_P(EpContextReport, EveryEpContextNodeIsACompiledPartitionNamingItsBinary) {
  REQUIRE_VULKAN();
  const std::string ctxPath = compileIfModel();
  ASSERT_FALSE(ctxPath.empty());
  onnx::ModelProto ctx = readModel(ctxPath);
  const auto ctxNodes = epContextNodes(ctx);
  ASSERT_EQ(ctxNodes.size(), static_cast<size_t>(expectedPartitions(Topology::kIfBody)));
  const std::string expectedBinary = GetParam() ? "embedded" : "m_vulkan.bin";

  auto analyzed = analyzePartitions(ctxPath, vulkanOptions());
  ASSERT_TRUE(analyzed.isOk()) << analyzed.status().toString();
  const PartitionReport& report = *analyzed;
  ASSERT_FALSE(report.graphs.empty());
  EXPECT_EQ(report.graphs.front().path, "main");
  EXPECT_EQ(report.optimizationLevel, "none");
  // The main graph holds the If only: it runs on the CPU EP, the bodies follow depth-first.
  ASSERT_EQ(report.graphs.front().nodes.size(), 1u);
  EXPECT_EQ(report.graphs.front().nodes[0].opType, "If");
  EXPECT_EQ(report.graphs.front().nodes[0].executionProvider, "CPUExecutionProvider");
  std::set<std::string> paths;
  for (const auto& graph : report.graphs) paths.insert(graph.path);
  EXPECT_EQ(paths, (std::set<std::string>{"main", "main/branch.then_branch", "main/branch.else_branch"}));

  // Each EPContext node of the ctx model: among its graph's nodes, and a compiled partition of its own.
  for (const onnx::NodeProto* node : ctxNodes) {
    const std::string label = "'" + node->name() + "' (EPContext)";
    int asNode = 0, asPartition = 0;
    for (const auto& graph : report.graphs) {
      for (const auto& placement : graph.nodes) {
        if (placement.node != label) continue;
        ++asNode;
        EXPECT_EQ(placement.opType, "EPContext");
        EXPECT_EQ(placement.executionProvider, "VulkanExecutionProvider");
        EXPECT_NE(graph.path, "main") << label;
      }
      for (const auto& partition : graph.partitions) {
        if (partition.nodes != std::vector<std::string>{label}) continue;
        ++asPartition;
        EXPECT_TRUE(partition.compiled);
        EXPECT_EQ(partition.executionProvider, "VulkanExecutionProvider");
        EXPECT_EQ(partition.binary, expectedBinary);
        EXPECT_FALSE(partition.outputs.empty());
      }
    }
    EXPECT_EQ(asNode, 1) << label;
    EXPECT_EQ(asPartition, 1) << label;
  }
  EXPECT_EQ(compiledPartitionCount(report), expectedPartitions(Topology::kIfBody));
  // The CPU-fallback nodes of the then-branch (Mod, ReverseSequence) form a run of CPU-EP nodes without a binary.
  const auto perEp = nodesPerExecutionProvider(report);
  EXPECT_EQ(perEp.at("VulkanExecutionProvider"), expectedPartitions(Topology::kIfBody));
  bool cpuRunInBody = false;
  for (const auto& graph : report.graphs) {
    for (const auto& partition : graph.partitions) {
      if (partition.compiled) continue;
      EXPECT_TRUE(partition.binary.empty());
      EXPECT_EQ(partition.executionProvider, "CPUExecutionProvider");
      EXPECT_EQ(partition.name.rfind("cpu_", 0), 0u);
      cpuRunInBody |= graph.path == "main/branch.then_branch";
    }
  }
  EXPECT_TRUE(cpuRunInBody) << describe(report);

  // A session over the ctx model reports the same, and partitions() lists the same partitions.
  auto session = Session::create(ctxPath, vulkanOptions());
  ASSERT_TRUE(session.isOk()) << session.status().toString();
  EXPECT_EQ(describe((*session)->partitionReport()), describe(report));
  EXPECT_EQ(static_cast<int64_t>((*session)->partitions().size()), partitionCount(report));
}

TEST_P(EpContextReport, SourceModelPartitionsNameNoBinary) {
  REQUIRE_VULKAN();
  const SourceModel source = writeSourceModel(Topology::kIfBody, dir_.path().string(), "m", 0, false);
  auto report = analyzePartitions(source.path, vulkanOptions());
  ASSERT_TRUE(report.isOk()) << report.status().toString();
  EXPECT_EQ(compiledPartitionCount(*report), expectedPartitions(Topology::kIfBody));
  for (const auto& graph : report->graphs) {
    for (const auto& partition : graph.partitions) EXPECT_TRUE(partition.binary.empty()) << partition.name;
  }
}

// A ctx model whose binary is gone cannot be reported: the error Session::create gives, before any device work.
TEST(EpContextReportErrors, MissingBinaryIsInvalidGraph) {
  REQUIRE_VULKAN();
  TempDir dir;
  const SourceModel source = writeSourceModel(Topology::kTwoPartitions, dir.path().string(), "m", 0, false);
  ModelCompilationOptions options(vulkanOptions());
  options.setInputModelPath(source.path);
  auto compiled = compileModel(options);
  ASSERT_TRUE(compiled.isOk()) << compiled.status().toString();
  fs::remove(compiled->binaryPath);
  auto report = analyzePartitions(compiled->outputModelPath, vulkanOptions());
  ASSERT_FALSE(report.isOk());
  EXPECT_EQ(report.status().code(), StatusCode::INVALID_GRAPH) << report.status().toString();
  EXPECT_NE(report.status().message().find("m_vulkan.bin"), std::string::npos) << report.status().toString();
}

// An embedded binary: the node says so and where its bytes lie in the .onnx file; the bytes inspect and judge as
// the binary they are, and the ctx model inspects from memory the same way.
TEST(EpContextPayload, EmbeddedBinaryIsLocatedAndInspectedInPlace) {
  REQUIRE_VULKAN();
  TempDir dir;
  const SourceModel source = writeSourceModel(Topology::kIfBody, dir.path().string(), "m", 0, false);
  ModelCompilationOptions options(vulkanOptions());
  options.setInputModelPath(source.path).setEpContextEmbedMode(true);
  auto compiled = compileModel(options);
  ASSERT_TRUE(compiled.isOk()) << compiled.status().toString();
  auto info = inspectEpContextModel(compiled->outputModelPath);
  ASSERT_TRUE(info.isOk()) << info.status().toString();
  const std::vector<std::byte> file = readBytes(compiled->outputModelPath);
  int embedded = 0;
  for (const auto& node : info->nodes) {
    if (!node.embedded) continue;
    ++embedded;
    ASSERT_TRUE(info->binaries.count(node.binary)) << node.name;
    const ContextBinaryInfo& binary = info->binaries.at(node.binary);
    ASSERT_EQ(node.payloadSize, binary.fileSize) << node.name;
    ASSERT_LE(node.payloadOffset + node.payloadSize, file.size());
    const std::span<const std::byte> payload(file.data() + node.payloadOffset, node.payloadSize);
    EXPECT_EQ(std::string(reinterpret_cast<const char*>(payload.data()), 8), "KILNVKCB") << node.name;
    auto inspected = inspectContextBinary(payload, node.binary);
    ASSERT_TRUE(inspected.isOk()) << inspected.status().toString();
    EXPECT_EQ(inspected->graphs.size(), binary.graphs.size());
    auto verdict = checkContextBinary(payload, node.binary, "");
    ASSERT_TRUE(verdict.isOk()) << verdict.status().toString();
    EXPECT_NE(verdict->compatibility, Compatibility::UNSUPPORTED);
  }
  EXPECT_GE(embedded, 1);

  auto fromMemory = inspectEpContextModel(std::span<const std::byte>(file), "");
  ASSERT_TRUE(fromMemory.isOk()) << fromMemory.status().toString();
  ASSERT_EQ(fromMemory->nodes.size(), info->nodes.size());
  for (size_t i = 0; i < info->nodes.size(); ++i) {
    EXPECT_EQ(fromMemory->nodes[i].payloadOffset, info->nodes[i].payloadOffset);
    EXPECT_EQ(fromMemory->nodes[i].problem, info->nodes[i].problem);
  }

  // Bad bytes: not a binary, not a model.
  const std::vector<std::byte> garbage(64, std::byte{0x5a});
  auto notBinary = inspectContextBinary(std::span<const std::byte>(garbage), "garbage");
  ASSERT_FALSE(notBinary.isOk());
  EXPECT_EQ(notBinary.status().code(), StatusCode::INVALID_GRAPH) << notBinary.status().toString();
  EXPECT_FALSE(checkContextBinary(std::span<const std::byte>(garbage), "garbage", "").isOk());
  EXPECT_FALSE(inspectEpContextModel(std::span<const std::byte>(garbage), "").isOk());
}

// A ctx model in memory whose node names a binary file, with no folder to find it in: the node's problem says so.
TEST(EpContextPayload, FileReferenceFromMemoryNeedsAFolder) {
  REQUIRE_VULKAN();
  TempDir dir;
  const SourceModel source = writeSourceModel(Topology::kTwoPartitions, dir.path().string(), "m", 0, false);
  ModelCompilationOptions options(vulkanOptions());
  options.setInputModelPath(source.path);
  auto compiled = compileModel(options);
  ASSERT_TRUE(compiled.isOk()) << compiled.status().toString();
  const std::vector<std::byte> file = readBytes(compiled->outputModelPath);
  auto withoutFolder = inspectEpContextModel(std::span<const std::byte>(file), "");
  ASSERT_TRUE(withoutFolder.isOk()) << withoutFolder.status().toString();
  for (const auto& node : withoutFolder->nodes) {
    EXPECT_FALSE(node.embedded);
    if (node.mainContext != 0) {
      EXPECT_NE(node.problem.find("read from memory"), std::string::npos) << node.problem;
    }
  }
  auto withFolder = inspectEpContextModel(std::span<const std::byte>(file), dir.path().string());
  ASSERT_TRUE(withFolder.isOk()) << withFolder.status().toString();
  for (const auto& node : withFolder->nodes) EXPECT_TRUE(node.problem.empty()) << node.problem;
}

INSTANTIATE_TEST_SUITE_P(EmbedMode, EpContextReport, ::testing::Bool(),
                         [](const ::testing::TestParamInfo<bool>& info) { return info.param ? "embedded" : "file"; });

}  // namespace
}  // namespace kiln::testing
