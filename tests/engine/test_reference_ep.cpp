// The framework knows no device: an EP that exists only in the tests (reference_ep.h) goes through generation
// (embed mode 0 and 1), loading, weight sharing, merge, inspect and check with no change to epcontext/ or
// context_binary/, and gives the CPU EP's answers element by element (it runs the CPU EP's kernels). Needs no
// Vulkan device: nothing here names one.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>

#include "binary_mutations.h"
#include "context_binary/context_binary.h"
#include "kiln/compatibility.h"
#include "kiln/compiler.h"
#include "kiln/context_binary.h"
#include "kiln/epcontext.h"
#include "kiln/model_info.h"
#include "kiln/session.h"
#include "model_builder.h"
#include "reference_ep.h"
#include "test_models.h"

namespace kiln {
namespace {

using testing::ModelBuilder;

std::vector<float> ramp(size_t count, float scale, float offset) {
  std::vector<float> values(count);
  for (size_t i = 0; i < count; ++i) values[i] = std::sin(offset + 0.61f * static_cast<float>(i)) * scale;
  return values;
}

// x[1,2,5,5] -> Conv 3x3 (pads 1) -> Relu -> Add(x) -> Sigmoid -> y: Conv, Relu and Add are the reference EP's,
// Sigmoid stays on the CPU EP.
std::string convNet(const testing::TempDir& dir, const std::string& file, float seed = 0) {
  ModelBuilder m(13);
  m.input("x", {1, 2, 5, 5});
  m.initializer("w", {2, 2, 3, 3}, ramp(36, 0.5f, seed));
  m.initializer("b", {2}, {0.1f, -0.2f});
  auto& conv = m.node("Conv", {"x", "w", "b"}, {"c"}, "conv");
  testing::attrInts(conv, "pads", {1, 1, 1, 1});
  m.node("Relu", {"c"}, {"r"}, "relu");
  m.node("Add", {"r", "x"}, {"a"}, "add");
  m.node("Sigmoid", {"a"}, {"y"}, "sigmoid");
  m.output("y", {1, 2, 5, 5});
  return m.save(dir.file(file));
}

Tensor input() { return Tensor::fromVector<float>({1, 2, 5, 5}, ramp(50, 2.0f, 0.3f)); }

SessionOptions withProviders(const std::string& list) {
  SessionOptions options;
  EXPECT_TRUE(options.addConfigEntry("kiln.execution_providers", list).isOk());
  return options;
}

SessionOptions referenceOptions() { return withProviders(testing::kReferenceShortName + ",cpu"); }

// The model's output on a fresh session of `options`.
Tensor outputOf(const std::string& model, const SessionOptions& options) {
  auto session = Session::create(model, options);
  EXPECT_TRUE(session.isOk()) << session.status().toString();
  if (!session.isOk()) return {};
  auto out = (*session)->run({{"x", input()}});
  EXPECT_TRUE(out.isOk()) << out.status().toString();
  return out.isOk() ? (*out)[0].tensor : Tensor();
}

void expectSameValues(const Tensor& expected, const Tensor& actual) {
  ASSERT_EQ(expected.shape(), actual.shape());
  ASSERT_EQ(expected.numel(), actual.numel());
  for (int64_t i = 0; i < expected.numel(); ++i) {
    EXPECT_EQ(expected.data<float>()[i], actual.data<float>()[i]) << "element " << i;
  }
}

class ReferenceEp : public ::testing::Test {
 protected:
  void SetUp() override { ASSERT_TRUE(testing::registerReferenceProvider().isOk()); }
};

Result<CompileResult> compileWithReference(const std::string& model, const std::string& output, bool embed) {
  ModelCompilationOptions compile(referenceOptions());
  compile.setInputModelPath(model);
  compile.setOutputModelPath(output);
  compile.setEpContextEmbedMode(embed);
  return compileModel(compile);
}

TEST_F(ReferenceEp, CompiledPartitionsRoundTripThroughAContextBinaryInBothEmbedModes) {
  testing::TempDir dir;
  const std::string model = convNet(dir, "net.onnx");
  const Tensor expected = outputOf(model, withProviders("cpu"));
  for (const bool embed : {false, true}) {
    SCOPED_TRACE(embed ? "embed mode 1" : "embed mode 0");
    const std::string ctx = dir.file(embed ? "embedded_ctx.onnx" : "net_ctx.onnx");
    auto compiled = compileWithReference(model, ctx, embed);
    ASSERT_TRUE(compiled.isOk()) << compiled.status().toString();
    EXPECT_EQ(compiled->binaryPath.empty(), embed);
    // The binary is named after the EP whose partitions it holds, not after the Vulkan EP.
    if (!embed) {
      EXPECT_EQ(compiled->binaryPath, dir.file("net_reference.bin"));
    }

    auto inspected = inspectEpContextModel(ctx);
    ASSERT_TRUE(inspected.isOk()) << inspected.status().toString();
    ASSERT_EQ(inspected->nodes.size(), 1u);
    EXPECT_EQ(inspected->nodes[0].source, testing::kReferenceProvider);
    EXPECT_TRUE(inspected->nodes[0].problem.empty()) << inspected->nodes[0].problem;

    const int loadsBefore = testing::ReferenceExecutionProvider::loads;
    expectSameValues(expected, outputOf(ctx, referenceOptions()));
    EXPECT_EQ(testing::ReferenceExecutionProvider::loads - loadsBefore, 1) << "the stored partition ran on the reference EP";
  }
}

// Data bound to a model (a profile, a comparison) finds it again by identity: a ctx model names its source by the
// content hash its compile record stores, and where the source is.
TEST_F(ReferenceEp, ACtxModelsIdentityNamesItsSourceByContentHash) {
  testing::TempDir dir;
  const std::string model = convNet(dir, "net.onnx");
  ASSERT_TRUE(compileWithReference(model, dir.file("net_ctx.onnx"), false).isOk());
  auto source = identifyModel(model);
  auto ctx = identifyModel(dir.file("net_ctx.onnx"));
  ASSERT_TRUE(source.isOk()) << source.status().toString();
  ASSERT_TRUE(ctx.isOk()) << ctx.status().toString();
  EXPECT_EQ(source->contentHash.size(), 16u);
  EXPECT_TRUE(source->sourceHash.empty() && source->sourceModel.empty()) << "a source names no source";
  EXPECT_NE(ctx->contentHash, source->contentHash);
  EXPECT_EQ(ctx->sourceHash, source->contentHash);
  EXPECT_EQ(std::filesystem::path(ctx->sourceModel), std::filesystem::path(model).lexically_normal());
  // Another model (other weights) is another identity; the same bytes are the same one.
  EXPECT_NE(identifyModel(convNet(dir, "other.onnx", 1.0f))->contentHash, source->contentHash);
  EXPECT_EQ(identifyModel(convNet(dir, "again.onnx"))->contentHash, source->contentHash);
  EXPECT_EQ(identifyModel(dir.file("missing.onnx")).status().code(), StatusCode::NO_SUCHFILE);
  std::ofstream(dir.file("junk.onnx"), std::ios::binary) << "not a model at all";
  EXPECT_FALSE(identifyModel(dir.file("junk.onnx")).isOk());
}

TEST_F(ReferenceEp, InspectShowsTheProviderDataAsTheEpDescribesIt) {
  testing::TempDir dir;
  const std::string model = convNet(dir, "net.onnx");
  auto compiled = compileWithReference(model, dir.file("net_ctx.onnx"), false);
  ASSERT_TRUE(compiled.isOk()) << compiled.status().toString();
  auto info = inspectContextBinary(compiled->binaryPath);
  ASSERT_TRUE(info.isOk()) << info.status().toString();
  ASSERT_EQ(info->graphs.size(), 1u);
  const ContextBinaryGraph& graph = info->graphs[0];
  EXPECT_EQ(graph.executionProvider, testing::kReferenceProvider);
  EXPECT_GT(graph.providerDataBytes, 0);
  const std::vector<std::pair<std::string, std::string>> described{{"format", testing::kReferenceFormat},
                                                                   {"kernels", "Conv, Relu, Add"}};
  EXPECT_EQ(graph.providerDetails, described);
  EXPECT_EQ(info->deviceName, testing::kReferenceDevice);
  EXPECT_EQ(info->spirvModules.size(), 0u);
  EXPECT_TRUE(std::any_of(info->sections.begin(), info->sections.end(),
                          [](const auto& s) { return s.kind == "provider_data" && s.items == 1; }));
  EXPECT_EQ(info->formatVersion, "1.4");
}

TEST_F(ReferenceEp, ASessionWithoutTheEpRefusesItsNodesAndNamesIt) {
  testing::TempDir dir;
  const std::string model = convNet(dir, "net.onnx");
  ASSERT_TRUE(compileWithReference(model, dir.file("net_ctx.onnx"), false).isOk());
  auto session = Session::create(dir.file("net_ctx.onnx"), withProviders("cpu"));
  ASSERT_FALSE(session.isOk());
  EXPECT_EQ(session.status().code(), StatusCode::NOT_IMPLEMENTED);
  EXPECT_NE(session.status().message().find(testing::kReferenceProvider), std::string::npos) << session.status().message();
}

TEST_F(ReferenceEp, ABinaryJudgedByTheEpThatWroteIt) {
  testing::TempDir dir;
  const std::string model = convNet(dir, "net.onnx");
  auto compiled = compileWithReference(model, dir.file("net_ctx.onnx"), false);
  ASSERT_TRUE(compiled.isOk()) << compiled.status().toString();
  auto verdict = checkContextBinary(compiled->binaryPath);
  ASSERT_TRUE(verdict.isOk()) << verdict.status().toString();
  EXPECT_EQ(verdict->compatibility, Compatibility::OPTIMAL);
  EXPECT_NE(verdict->against.find(testing::kReferenceDevice), std::string::npos) << verdict->against;
}

TEST_F(ReferenceEp, ACtxModelIsCheckedByItsEp) {
  testing::TempDir dir;
  const std::string model = convNet(dir, "net.onnx");
  ASSERT_TRUE(compileWithReference(model, dir.file("net_ctx.onnx"), false).isOk());
  auto checked = getModelCompatibility(dir.file("net_ctx.onnx"), CompatibilityQuery{});
  ASSERT_TRUE(checked.isOk()) << checked.status().toString();
  EXPECT_EQ(checked->fileKind, "ctx_model");
  EXPECT_EQ(checked->state, CompiledModelCompatibility::SUPPORTED_OPTIMAL) << checked->against;
  EXPECT_NE(checked->against.find(testing::kReferenceDevice), std::string::npos) << checked->against;
}

TEST_F(ReferenceEp, ModelsSharingOneBinaryStoreTheirWeightsOnceAndBothRun) {
  testing::TempDir dir;
  const std::string a = convNet(dir, "a.onnx");
  const std::string b = convNet(dir, "b.onnx");  // the same weights
  ModelCompilationOptions common(referenceOptions());
  auto results = compileModelsSharingContext({a, b}, common, {"a_", "b_"}, dir.file("out"));
  ASSERT_TRUE(results.isOk()) << results.status().toString();
  ASSERT_EQ(results->size(), 2u);
  EXPECT_EQ((*results)[0].binaryPath, (*results)[1].binaryPath);
  auto info = inspectContextBinary((*results)[0].binaryPath);
  ASSERT_TRUE(info.isOk()) << info.status().toString();
  EXPECT_EQ(info->graphs.size(), 2u);
  EXPECT_LT(info->weightBytes, info->weightBytesReferenced) << "the shared weights are stored once";
  const Tensor expected = outputOf(a, withProviders("cpu"));
  for (const auto& result : *results) expectSameValues(expected, outputOf(result.outputModelPath, referenceOptions()));
}

TEST_F(ReferenceEp, MergedCtxModelsKeepTheEpsPartitions) {
  testing::TempDir dir;
  const std::string a = convNet(dir, "a.onnx", 0);
  const std::string b = convNet(dir, "b.onnx", 1);
  ASSERT_TRUE(compileWithReference(a, dir.file("a_ctx.onnx"), false).isOk());
  ASSERT_TRUE(compileWithReference(b, dir.file("b_ctx.onnx"), false).isOk());
  auto merged = mergeEpContextModels({{dir.file("a_ctx.onnx"), "a_"}, {dir.file("b_ctx.onnx"), "b_"}},
                                     dir.file("merged_ctx.onnx"));
  ASSERT_TRUE(merged.isOk()) << merged.status().toString();
  ASSERT_EQ(merged->binary.graphs.size(), 2u);
  for (const auto& graph : merged->binary.graphs) EXPECT_EQ(graph.executionProvider, testing::kReferenceProvider);
  auto session = Session::create(dir.file("merged_ctx.onnx"), referenceOptions());
  ASSERT_TRUE(session.isOk()) << session.status().toString();
  auto out = (*session)->run({{"a_x", input()}, {"b_x", input()}});
  ASSERT_TRUE(out.isOk()) << out.status().toString();
  expectSameValues(outputOf(a, withProviders("cpu")), (*out)[0].tensor);
  expectSameValues(outputOf(b, withProviders("cpu")), (*out)[1].tensor);
}

// Bad input on the new paths: a provider_data section damaged behind fixed-up hashes (every mutation: INVALID_GRAPH
// where detectable, never a crash), a record that names a partition the binary lacks or another EP than the
// partition's (INVALID_GRAPH naming the section), and registrations that cannot be honoured (INVALID_ARGUMENT).
TEST_F(ReferenceEp, DamagedProviderDataAndBadRegistrationsAreClearErrors) {
  testing::TempDir dir;
  auto compiled = compileWithReference(convNet(dir, "net.onnx"), dir.file("net_ctx.onnx"), false);
  ASSERT_TRUE(compiled.isOk()) << compiled.status().toString();
  std::ifstream in(compiled->binaryPath, std::ios::binary);
  const std::vector<char> chars((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  std::vector<std::byte> original(chars.size());
  std::memcpy(original.data(), chars.data(), chars.size());
  std::vector<std::string> wrong;
  EXPECT_GT(testing::mutateContextBinary(original, [&](const std::string& what) { wrong.push_back(what); }), 0u);
  EXPECT_TRUE(wrong.empty()) << wrong.front();

  auto opened = ctxbin::ContextBinary::fromBytes(original, "net_reference.bin");
  ASSERT_TRUE(opened.isOk());
  uint64_t offset = 0;
  for (const auto& section : (*opened)->sections()) {
    if (section.kind == ctxbin::SectionKind::PROVIDER_DATA) offset = section.offset;
  }
  ASSERT_GT(offset, 0u);
  // The first record: u32 count, then the partition name and the EP name (u32 length + bytes each).
  auto damaged = [&](size_t stringIndex, const std::string& expected) {
    std::vector<std::byte> bytes = original;
    size_t at = offset + 4;
    for (size_t i = 0; i < stringIndex; ++i) {
      uint32_t length = 0;
      std::memcpy(&length, bytes.data() + at, 4);
      at += 4 + length;
    }
    bytes[at + 4] = std::byte{'#'};  // same length, another name
    testing::mutation_detail::rehash(bytes);
    auto binary = ctxbin::ContextBinary::fromBytes(bytes, "damaged");
    ASSERT_TRUE(binary.isOk()) << binary.status().toString();
    auto partitions = (*binary)->partitions();
    ASSERT_FALSE(partitions.isOk());
    EXPECT_EQ(partitions.status().code(), StatusCode::INVALID_GRAPH);
    EXPECT_NE(partitions.status().message().find(expected), std::string::npos) << partitions.status().message();
  };
  damaged(0, "which the binary does not hold");
  damaged(1, "which " + testing::kReferenceProvider + " compiled");

  EXPECT_EQ(registerExecutionProvider({"cpu", "X", [] { return std::make_unique<testing::ReferenceExecutionProvider>(); }, nullptr})
                .code(),
            StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(registerExecutionProvider({"other", "X", nullptr, nullptr}).code(), StatusCode::INVALID_ARGUMENT);
  auto unknown = Session::create(dir.file("net.onnx"), withProviders("nosuch,cpu"));
  ASSERT_FALSE(unknown.isOk());
  EXPECT_EQ(unknown.status().code(), StatusCode::INVALID_ARGUMENT);
  EXPECT_NE(unknown.status().message().find(testing::kReferenceShortName), std::string::npos)
      << "the known names list the registered EP: " << unknown.status().message();
}

}  // namespace
}  // namespace kiln
