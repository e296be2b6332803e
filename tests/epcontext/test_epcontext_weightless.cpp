// Weightless EPContext (ep.enable_weightless_ep_context_nodes=1, onnxruntime 1.29's ep.enable_weightless, kiln
// compile --weightless): the context binary stores no weight the source model holds (initializers and Constant
// node values, embedded or in an external-data file), a session takes them from the source, checks their hashes and
// prepacks again, and runs bit for bit as the regular ctx model does. A missing source is NO_SUCHFILE, a changed
// source or a weight that is not there INVALID_GRAPH, ep.context_source_model_path points at a moved source, and
// merging weightless ctx models is refused. Sharing groups and float16 storage stay weightless too.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <set>

#include "epcontext_checks.h"
#include "epcontext_models.h"
#include "gtest_requirements.h"
#include "kiln/compatibility.h"
#include "kiln/compiler.h"
#include "kiln/context_binary.h"
#include "kiln/epcontext.h"
#include "model_builder.h"
#include "test_models.h"

namespace kiln::testing {
namespace {

namespace fs = std::filesystem;

std::vector<float> ramp(size_t n, float scale) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = std::sin(static_cast<float>(i) * 0.37f) * scale;
  return v;
}

// Conv (weights from a Constant node) → BatchNormalization (folded at compile) → Relu → 1x1 Conv (weights from
// another Constant) → Add (an initializer the partition reads as is): Constant values, folded and prepacked weights.
onnx::ModelProto convModel(float weightScale) {
  ModelBuilder m(13);
  m.input("x", {1, 4, 8, 8});
  m.constant("w1", {8, 4, 3, 3}, ramp(288, 0.5f * weightScale), "w1_constant");
  m.initializer("b1", {8}, ramp(8, 0.1f));
  m.initializer("scale", {8}, {1.0f, 0.5f, 2.0f, 1.5f, 1.0f, 0.7f, 1.2f, 0.9f});
  m.initializer("shift", {8}, ramp(8, 0.2f));
  m.initializer("mean", {8}, ramp(8, 0.05f));
  m.initializer("var", {8}, {1.0f, 0.5f, 2.0f, 0.25f, 1.0f, 1.5f, 0.8f, 1.1f});
  m.constant("w2", {4, 8, 1, 1}, ramp(32, 0.25f), "w2_constant");
  m.initializer("offset", {1, 4, 8, 8}, ramp(256, 0.3f));
  auto& conv = m.node("Conv", {"x", "w1", "b1"}, {"c1"}, "conv1");
  attrInts(conv, "kernel_shape", {3, 3});
  attrInts(conv, "pads", {1, 1, 1, 1});
  m.node("BatchNormalization", {"c1", "scale", "shift", "mean", "var"}, {"n1"}, "bn1");
  m.node("Relu", {"n1"}, {"r1"}, "relu1");
  m.node("Conv", {"r1", "w2"}, {"c2"}, "conv2");
  m.node("Add", {"c2", "offset"}, {"y"}, "add");
  m.output("y", {1, 4, 8, 8});
  return m.build();
}

std::vector<std::vector<NamedTensor>> convInputs() {
  return {{{"x", Tensor::fromVector<float>({1, 4, 8, 8}, ramp(256, 2.0f))}}};
}

void save(const onnx::ModelProto& model, const std::string& path) {
  std::ofstream(path, std::ios::binary | std::ios::trunc) << model.SerializeAsString();
}

class Weightless : public ::testing::Test {
 protected:
  void SetUp() override { REQUIRE_VULKAN(); }

  // Compiles `source` into `ctx` (regular, or weightless through `key`).
  Result<CompileResult> compile(const std::string& source, const std::string& ctx, const std::string& key = "",
                                std::map<std::string, std::string> entries = {}) {
    if (!key.empty()) entries[key] = "1";
    ModelCompilationOptions options(withEntries(vulkanOptions(), entries));
    options.setInputModelPath(source).setOutputModelPath(ctx);
    return compileModel(options);
  }

  // Loads `ctx`, runs `inputs` and checks the outputs equal `expected` bit for bit.
  void expectRunsAs(const std::string& ctx, const std::vector<std::vector<NamedTensor>>& inputs,
                    const std::vector<std::vector<NamedTensor>>& expected, SessionOptions options = vulkanOptions()) {
    auto session = Session::create(ctx, options);
    ASSERT_TRUE(session.isOk()) << session.status().toString();
    expectSameOutputs(expected, runAll(**session, inputs), ctx);
    const WorkCounters& counters = (*session)->counters();
    EXPECT_EQ(counters.glslang_compiles, 0) << "a weightless load compiles no shader";
    EXPECT_GT(counters.weights_prepacked, 0) << "the prepacked constants are derived again at load";
  }

  TempDir dir_;
};

TEST_F(Weightless, BinaryRefersToConstantAndInitializerWeightsAndRunsBitForBit) {
  const std::string source = dir_.file("conv.onnx");
  save(convModel(1.0f), source);
  const std::string regular = dir_.file("regular_ctx.onnx"), weightless = dir_.file("light_ctx.onnx");
  auto plain = compile(source, regular);
  ASSERT_TRUE(plain.isOk()) << plain.status().toString();
  auto light = compile(source, weightless, "ep.enable_weightless_ep_context_nodes");
  ASSERT_TRUE(light.isOk()) << light.status().toString();

  auto info = inspectContextBinary(light->binaryPath);
  ASSERT_TRUE(info.isOk()) << info.status().toString();
  EXPECT_TRUE(info->weightless);
  EXPECT_EQ(info->weightSources, std::vector<std::string>{"conv.onnx"});
  EXPECT_GE(info->externalWeights, 3u) << "conv1's folded weights, w2 (a Constant) and offset at least";
  EXPECT_GT(info->derivedConstants, 0u);
  EXPECT_FALSE(info->compileRecord.empty()) << "the binary carries the compile record";
  std::set<std::string> referred;
  for (const auto& ref : info->weightRefs) referred.insert(ref.name + ":" + ref.transform);
  EXPECT_TRUE(referred.count("w2:none") && referred.count("offset:none")) << describe(referred);
  EXPECT_TRUE(referred.count("n1:bn_fold_weight")) << "conv1's weights with bn1 folded in: " << describe(referred);
  auto regularInfo = inspectContextBinary(plain->binaryPath);
  ASSERT_TRUE(regularInfo.isOk());
  EXPECT_FALSE(regularInfo->weightless);
  // The regular binary stores w1 and w2 prepacked plus offset (about 2.5 KB); the weightless one only what
  // BatchNormalization folding derived (the folded conv1 weights and bias).
  EXPECT_LT(info->weightBytes + info->externalWeightBytes / 2, regularInfo->weightBytes);
  EXPECT_LT(fs::file_size(light->binaryPath), fs::file_size(plain->binaryPath));

  auto reference = Session::create(regular, vulkanOptions());
  ASSERT_TRUE(reference.isOk()) << reference.status().toString();
  const auto expected = runAll(**reference, convInputs());
  expectRunsAs(weightless, convInputs(), expected);

  // Embedded in the EPContext node (embed mode 1): the source is found relative to the ctx model the same way.
  const std::string embedded = dir_.file("embedded_ctx.onnx");
  ModelCompilationOptions options(withEntries(vulkanOptions(), {{"ep.enable_weightless_ep_context_nodes", "1"}}));
  options.setInputModelPath(source).setOutputModelPath(embedded).setEpContextEmbedMode(true);
  auto embed = compileModel(options);
  ASSERT_TRUE(embed.isOk()) << embed.status().toString();
  EXPECT_LT(fs::file_size(embedded), fs::file_size(light->binaryPath) + fs::file_size(weightless) + 4096);
  expectRunsAs(embedded, convInputs(), expected);
}

TEST_F(Weightless, ExternalDataWeightsAndTheNewerKeyName) {
  const SourceModel source = writeSourceModel(Topology::kTwoPartitions, dir_.path().string(), "ext", 0, true);
  const std::string regular = dir_.file("regular_ctx.onnx"), weightless = dir_.file("ext_ctx.onnx");
  ASSERT_TRUE(compile(source.path, regular).isOk());
  auto light = compile(source.path, weightless, "ep.enable_weightless");
  ASSERT_TRUE(light.isOk()) << light.status().toString();
  auto info = inspectContextBinary(light->binaryPath);
  ASSERT_TRUE(info.isOk()) << info.status().toString();
  EXPECT_TRUE(info->weightless);
  EXPECT_GE(info->externalWeights, 1u) << "B (64 bytes, in ext_weights.bin)";

  auto reference = Session::create(regular, vulkanOptions());
  ASSERT_TRUE(reference.isOk()) << reference.status().toString();
  const auto inputs = inputSets(Topology::kTwoPartitions);
  auto session = Session::create(weightless, vulkanOptions());
  ASSERT_TRUE(session.isOk()) << session.status().toString();
  expectSameOutputs(runAll(**reference, inputs), runAll(**session, inputs), "weightless, external data");

  // B changed in the external-data file: the hash check says the source changed.
  size_t offsetOfB = 0;
  for (const auto& init : source.proto.graph().initializer()) {
    if (init.name() != "B") continue;
    for (const auto& entry : init.external_data()) {
      if (entry.key() == "offset") offsetOfB = std::stoul(entry.value());
    }
  }
  auto data = readBytes(source.dataFile);
  data.at(offsetOfB) ^= std::byte{0x40};
  writeFileBytes(source.dataFile, data);
  auto changed = Session::create(weightless, vulkanOptions());
  ASSERT_FALSE(changed.isOk());
  EXPECT_EQ(changed.status().code(), StatusCode::INVALID_GRAPH) << changed.status().toString();
  EXPECT_NE(changed.status().message().find("changed"), std::string::npos) << changed.status().message();
}

TEST_F(Weightless, MissingMovedChangedAndRenamedSources) {
  const std::string source = dir_.file("conv.onnx");
  save(convModel(1.0f), source);
  const std::string ctx = dir_.file("conv_ctx.onnx");
  ASSERT_TRUE(compile(source, ctx, "ep.enable_weightless_ep_context_nodes").isOk());
  auto reference = Session::create(source, vulkanOptions());
  ASSERT_TRUE(reference.isOk());
  const auto expected = runAll(**reference, convInputs());

  // Moved: NO_SUCHFILE naming the option that helps; the option then finds it.
  TempDir elsewhere;
  const std::string moved = elsewhere.file("conv.onnx");
  fs::rename(source, moved);
  auto missing = Session::create(ctx, vulkanOptions());
  ASSERT_FALSE(missing.isOk());
  EXPECT_EQ(missing.status().code(), StatusCode::NO_SUCHFILE) << missing.status().toString();
  EXPECT_NE(missing.status().message().find("ep.context_source_model_path"), std::string::npos);
  expectRunsAs(ctx, convInputs(), expected, withEntries(vulkanOptions(), {{"ep.context_source_model_path", moved}}));
  auto wrongOverride = Session::create(ctx, withEntries(vulkanOptions(), {{"ep.context_source_model_path", dir_.file("nope.onnx")}}));
  ASSERT_FALSE(wrongOverride.isOk());
  EXPECT_EQ(wrongOverride.status().code(), StatusCode::NO_SUCHFILE);
  // `kiln check` says so without a session: UNSUPPORTED while the source is missing, fine when given.
  auto unreachable = getModelCompatibility(ctx);
  ASSERT_TRUE(unreachable.isOk()) << unreachable.status().toString();
  EXPECT_EQ(unreachable->state, CompiledModelCompatibility::UNSUPPORTED);
  EXPECT_TRUE(std::any_of(unreachable->reasons.begin(), unreachable->reasons.end(), [](const std::string& reason) {
    return reason.find("weightless") != std::string::npos && reason.find("conv.onnx") != std::string::npos;
  })) << describe(std::set<std::string>(unreachable->reasons.begin(), unreachable->reasons.end()));
  CompatibilityQuery givenSource;
  givenSource.sourceModelPath = moved;
  auto reachable = getModelCompatibility(ctx, givenSource);
  ASSERT_TRUE(reachable.isOk()) << reachable.status().toString();
  EXPECT_EQ(reachable->state, CompiledModelCompatibility::SUPPORTED_OPTIMAL) << describe(std::set<std::string>(reachable->reasons.begin(), reachable->reasons.end()));

  // Changed weights: INVALID_GRAPH, "changed", recompile.
  save(convModel(1.5f), source);
  auto changed = Session::create(ctx, vulkanOptions());
  ASSERT_FALSE(changed.isOk());
  EXPECT_EQ(changed.status().code(), StatusCode::INVALID_GRAPH) << changed.status().toString();
  EXPECT_NE(changed.status().message().find("changed"), std::string::npos) << changed.status().message();

  // A weight renamed away: INVALID_GRAPH naming it.
  onnx::ModelProto renamed = convModel(1.0f);
  for (auto& node : *renamed.mutable_graph()->mutable_node()) {
    for (auto* names : {node.mutable_input(), node.mutable_output()}) {
      for (auto& name : *names) {
        if (name == "w2") name = "w2_renamed";
      }
    }
  }
  save(renamed, source);
  auto gone = Session::create(ctx, vulkanOptions());
  ASSERT_FALSE(gone.isOk());
  EXPECT_EQ(gone.status().code(), StatusCode::INVALID_GRAPH) << gone.status().toString();
  EXPECT_NE(gone.status().message().find("'w2'"), std::string::npos) << gone.status().message();

  // The source back as it was: loads again.
  save(convModel(1.0f), source);
  expectRunsAs(ctx, convInputs(), expected);

  // Merging needs the weights in the binaries: refused, nothing written.
  auto merged = mergeEpContextModels({{ctx, "a_"}, {ctx, "b_"}}, dir_.file("merged_ctx.onnx"));
  ASSERT_FALSE(merged.isOk());
  EXPECT_EQ(merged.status().code(), StatusCode::INVALID_ARGUMENT) << merged.status().toString();
  EXPECT_NE(merged.status().message().find("weightless"), std::string::npos);
  EXPECT_FALSE(fs::exists(dir_.file("merged_ctx.onnx")));
}

TEST_F(Weightless, SessionOptionGenerationWritesAWeightlessBinary) {
  const std::string source = dir_.file("conv.onnx");
  save(convModel(1.0f), source);
  const std::string ctx = dir_.file("gen_ctx.onnx");
  auto generating = Session::create(source, withEntries(vulkanOptions(), {{"ep.context_enable", "1"},
                                                                          {"ep.context_file_path", ctx},
                                                                          {"ep.enable_weightless_ep_context_nodes", "1"}}));
  ASSERT_TRUE(generating.isOk()) << generating.status().toString();
  auto info = inspectContextBinary(dir_.file("gen_vulkan.bin"));
  ASSERT_TRUE(info.isOk()) << info.status().toString();
  EXPECT_TRUE(info->weightless);
  EXPECT_FALSE(info->compileRecord.empty());
  expectRunsAs(ctx, convInputs(), runAll(**generating, convInputs()));
}

TEST_F(Weightless, ModelFromMemoryNeedsTheSourcePathAndWritesNothing) {
  save(convModel(1.0f), dir_.file("conv.onnx"));
  const auto bytes = readBytes(dir_.file("conv.onnx"));
  const std::string ctx = dir_.file("mem_ctx.onnx");
  ModelCompilationOptions options(withEntries(vulkanOptions(), {{"ep.enable_weightless_ep_context_nodes", "1"}}));
  options.setInputModelFromBuffer(bytes).setOutputModelPath(ctx);
  auto refused = compileModel(options);
  ASSERT_FALSE(refused.isOk());
  EXPECT_EQ(refused.status().code(), StatusCode::INVALID_ARGUMENT) << refused.status().toString();
  EXPECT_FALSE(fs::exists(ctx));
  EXPECT_FALSE(fs::exists(dir_.file("mem_vulkan.bin")));
}

TEST_F(Weightless, SharingGroupAndFloat16StorageStayWeightless) {
  save(convModel(1.0f), dir_.file("a.onnx"));
  save(convModel(0.5f), dir_.file("b.onnx"));
  ModelCompilationOptions options(withEntries(vulkanOptions(), {{"ep.enable_weightless_ep_context_nodes", "1"}}));
  auto group = compileModelsSharingContext({dir_.file("a.onnx"), dir_.file("b.onnx")}, options, {}, dir_.path().string());
  ASSERT_TRUE(group.isOk()) << group.status().toString();
  auto info = inspectContextBinary(group->front().binaryPath);
  ASSERT_TRUE(info.isOk()) << info.status().toString();
  EXPECT_TRUE(info->weightless);
  EXPECT_EQ(info->weightSources, (std::vector<std::string>{"a.onnx", "b.onnx"}));
  for (const char* name : {"a", "b"}) {
    auto reference = Session::create(dir_.file(std::string(name) + ".onnx"), vulkanOptions());
    ASSERT_TRUE(reference.isOk());
    SCOPED_TRACE(name);
    expectRunsAs(group->at(name[0] == 'a' ? 0 : 1).outputModelPath, convInputs(), runAll(**reference, convInputs()),
                 withEntries(vulkanOptions(), {{"ep.share_ep_contexts", "1"}}));
  }

  const std::string half = dir_.file("half_ctx.onnx"), halfRegular = dir_.file("halfreg_ctx.onnx");
  ASSERT_TRUE(compile(dir_.file("a.onnx"), halfRegular, "", {{"kiln.vulkan.fp16", "1"}}).isOk());
  auto light = compile(dir_.file("a.onnx"), half, "ep.enable_weightless_ep_context_nodes", {{"kiln.vulkan.fp16", "1"}});
  ASSERT_TRUE(light.isOk()) << light.status().toString();
  auto halfInfo = inspectContextBinary(light->binaryPath);
  ASSERT_TRUE(halfInfo.isOk());
  EXPECT_TRUE(halfInfo->weightless);
  auto reference = Session::create(halfRegular, vulkanOptions());
  ASSERT_TRUE(reference.isOk()) << reference.status().toString();
  expectRunsAs(half, convInputs(), runAll(**reference, convInputs()));
}

}  // namespace
}  // namespace kiln::testing
