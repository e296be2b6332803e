// ONNX Runtime's EPContext error catalogue (reference 1.4, E1-E20 where they apply to Kiln), the Contracts' path
// rules for ep_cache_context, cancellation, and the promise that a failed or cancelled compile writes nothing and
// never damages an existing output. Tests that fail before any device work run without Vulkan.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <functional>
#include <tuple>

#include "epcontext_checks.h"
#include "epcontext_error_fixture.h"
#include "epcontext_models.h"
#include "kiln/compiler.h"
#include "model_builder.h"
#include "test_models.h"
#include "gtest_requirements.h"

namespace kiln::testing {
namespace {

// ---- E1: an output path naming a folder is INVALID_ARGUMENT, before any work (no device needed) ----

TEST_F(EpContextErrors, E01_SessionOptionFolderPathIsInvalidArgument) {
  const SourceModel m = source();
  fs::create_directories(root_ / "existing");
  const auto before = listFiles(root_);
  for (const std::string& path : {at("dir/"), at("dir/invalid_file"), at("existing")}) {
    SCOPED_TRACE(path);
    EXPECT_STATUS(createStatus(m.path, generating(0, {{"ep.context_file_path", path}})), StatusCode::INVALID_ARGUMENT,
                  "should not point to a folder");
  }
  EXPECT_EQ(listFiles(root_), before);
  EXPECT_FALSE(fs::exists(root_ / "dir"));
}

TEST_F(EpContextErrors, E01_CompileApiFolderPathIsInvalidArgument) {
  const SourceModel m = source();
  fs::create_directories(root_ / "existing");
  const auto before = listFiles(root_);
  for (const std::string& path : {at("dir/"), at("dir/invalid_file"), at("existing")}) {
    SCOPED_TRACE(path);
    ModelCompilationOptions options(vulkanOptions());
    options.setInputModelPath(m.path).setOutputModelPath(path);
    EXPECT_STATUS(compileModel(options).status(), StatusCode::INVALID_ARGUMENT, "should not point to a folder");
  }
  EXPECT_EQ(listFiles(root_), before);
}

// ---- E2: an existing output ----

// The session-option flow refuses by default, before compiling: neither the ctx model nor the binary is touched.
TEST_F(EpContextErrors, E02_SessionOptionFlowRefusesAnExistingOutput) {
  REQUIRE_VULKAN();
  const SourceModel m = source();
  for (const std::string& explicitPath : {std::string(), at("custom_ctx.onnx")}) {
    SCOPED_TRACE(explicitPath.empty() ? "default name" : explicitPath);
    const SessionOptions options =
        explicitPath.empty() ? generating() : generating(0, {{"ep.context_file_path", explicitPath}});
    ASSERT_TRUE(createStatus(m.path, options).isOk());
    const std::string ctx = explicitPath.empty() ? at("m_ctx.onnx") : explicitPath;
    const std::string binary = defaultContextBinaryPath(ctx);
    ASSERT_TRUE(fs::exists(ctx) && fs::exists(binary));
    ageFile(ctx);
    ageFile(binary);
    const Snapshot existing = Snapshot::of({ctx, binary});
    const auto before = listFiles(root_);
    EXPECT_STATUS(createStatus(m.path, options), StatusCode::FAIL, "exists already");
    existing.expectUnchanged();
    EXPECT_EQ(listFiles(root_), before);
  }
}

// The Compile API overwrites unless CompileFlags::ERROR_IF_OUTPUT_FILE_EXISTS is set.
TEST_F(EpContextErrors, E02_CompileApiFlagRefusesAnExistingOutputElseOverwrites) {
  REQUIRE_VULKAN();
  const SourceModel m = source();
  compile(m.path);
  const std::string ctx = at("m_ctx.onnx"), binary = at("m_vulkan.bin");
  ageFile(ctx);
  ageFile(binary);
  const Snapshot existing = Snapshot::of({ctx, binary});
  ModelCompilationOptions options(vulkanOptions());
  options.setInputModelPath(m.path).setFlags(CompileFlags::ERROR_IF_OUTPUT_FILE_EXISTS);
  EXPECT_STATUS(compileModel(options).status(), StatusCode::FAIL, "exists already");
  existing.expectUnchanged();

  options.setFlags(CompileFlags::NONE);
  ASSERT_TRUE(compileModel(options).isOk());
  EXPECT_NE(modificationTime(ctx), existing.files.at(ctx).second) << "the ctx model was not overwritten";
  EXPECT_NE(modificationTime(binary), existing.files.at(binary).second) << "the binary was not overwritten";
}

// ---- E3/E5/E6: the Compile API's argument checks (no device needed) ----

TEST_F(EpContextErrors, E05_InputFromBytesNeedsAnOutputLocation) {
  const SourceModel m = source();
  const std::vector<std::byte> bytes = readBytes(m.path);
  ModelCompilationOptions options(vulkanOptions());
  options.setInputModelFromBuffer(bytes);
  EXPECT_STATUS(compileModel(options).status(), StatusCode::INVALID_ARGUMENT, "require an input model path");
  // Bytes in, bytes out, embed mode 0: the binary needs setEpContextBinaryInformation.
  std::vector<std::byte> out;
  options.setOutputModelBuffer(&out);
  EXPECT_STATUS(compileModel(options).status(), StatusCode::INVALID_ARGUMENT, "setEpContextBinaryInformation");
  EXPECT_TRUE(out.empty());
}

TEST_F(EpContextErrors, E03_EmptyOutputsAreInvalidArgument) {
  const SourceModel m = source();
  const auto before = listFiles(root_);
  {
    ModelCompilationOptions options(vulkanOptions());
    options.setInputModelPath(m.path).setOutputModelPath("");
    EXPECT_STATUS(compileModel(options).status(), StatusCode::INVALID_ARGUMENT, "the path is empty");
  }
  {
    ModelCompilationOptions options(vulkanOptions());
    options.setInputModelPath(m.path).setOutputModelBuffer(nullptr);
    EXPECT_STATUS(compileModel(options).status(), StatusCode::INVALID_ARGUMENT, "null");
  }
  {
    ModelCompilationOptions options(vulkanOptions());
    options.setInputModelPath(m.path).setOutputModelWriteFunc(nullptr);
    EXPECT_STATUS(compileModel(options).status(), StatusCode::INVALID_ARGUMENT, "null");
  }
  EXPECT_EQ(listFiles(root_), before);
}

TEST_F(EpContextErrors, E06_CompileApiArgumentErrors) {
  const SourceModel m = source();
  const auto before = listFiles(root_);
  auto statusOf = [](const std::function<void(ModelCompilationOptions&)>& set) {
    ModelCompilationOptions options(vulkanOptions());
    set(options);
    return compileModel(options).status();
  };
  EXPECT_STATUS(statusOf([](auto&) {}), StatusCode::INVALID_ARGUMENT, "Input model to compile must be specified");
  EXPECT_STATUS(statusOf([&](auto& o) { o.setInputModelPath(""); }), StatusCode::INVALID_ARGUMENT, "path string is empty");
  EXPECT_STATUS(statusOf([&](auto& o) { o.setInputModelPath(at("missing.onnx")); }), StatusCode::INVALID_ARGUMENT,
                "does not exist");
  EXPECT_STATUS(statusOf([&](auto& o) { o.setInputModelFromBuffer({}); }), StatusCode::INVALID_ARGUMENT, "size 0");
  std::vector<std::byte> out;
  EXPECT_STATUS(statusOf([&](auto& o) { o.setInputModelPath(m.path).setOutputModelPath(at("x_ctx.onnx")).setOutputModelBuffer(&out); }),
                StatusCode::INVALID_ARGUMENT, "one output");
  EXPECT_STATUS(statusOf([&](auto& o) {
                  o.setInputModelPath(m.path).setOutputModelExternalInitializersFile("ext.bin").setOutputModelGetInitializerLocationFunc(
                      [](const std::string&, const Tensor&, const ExternalInitializerInfo*) { return InitializerLocation::embed(); });
                }),
                StatusCode::INVALID_ARGUMENT, "exclude each other");
  EXPECT_STATUS(statusOf([&](auto& o) { o.setInputModelPath(m.path).setOutputModelBuffer(&out).setEpContextBinaryInformation(root_.string(), ""); }),
                StatusCode::INVALID_ARGUMENT, "output_dir or model_name is empty");
  EXPECT_STATUS(statusOf([&](auto& o) { o.setInputModelPath(m.path).setOutputModelBuffer(&out).setEpContextBinaryInformation(m.path, "x.onnx"); }),
                StatusCode::INVALID_ARGUMENT, "not a valid directory");
  EXPECT_EQ(listFiles(root_), before);
}

// ---- E4: generation from bytes needs ep.context_file_path (no device needed) ----

TEST_F(EpContextErrors, E04_GenerationFromBytesNeedsContextFilePath) {
  const SourceModel m = source();
  const std::vector<std::byte> bytes = readBytes(m.path);
  const auto before = listFiles(root_);
  for (const SessionOptions& options : {generating(), generating(0, {{"ep.context_file_path", ""}})}) {
    auto session = Session::create(std::span<const std::byte>(bytes), options);
    ASSERT_FALSE(session.isOk());
    EXPECT_STATUS(session.status(), StatusCode::FAIL, "please specify a valid ep.context_file_path");
  }
  EXPECT_EQ(listFiles(root_), before);
}

// Not 0 or 1 (no device needed).
TEST_F(EpContextErrors, EmbedModeOtherThanZeroOrOneIsInvalidArgument) {
  const SourceModel m = source();
  EXPECT_STATUS(createStatus(m.path, withEntries(vulkanOptions(), {{"ep.context_enable", "1"}, {"ep.context_embed_mode", "2"}})),
                StatusCode::INVALID_ARGUMENT, "must be 0 or 1");
}

// ---- E7 / E8: nothing compiles ----

TEST_F(EpContextErrors, E07_ErrorIfNoNodesCompiledWritesNothing) {
  const SourceModel m = source();
  const auto before = listFiles(root_);
  ModelCompilationOptions options(withEntries({}, {{"kiln.execution_providers", "cpu"}}));
  options.setInputModelPath(m.path).setFlags(CompileFlags::ERROR_IF_NO_NODES_COMPILED);
  EXPECT_STATUS(compileModel(options).status(), StatusCode::FAIL, "Unable to compile any nodes");
  EXPECT_EQ(listFiles(root_), before);
}

TEST_F(EpContextErrors, E07_ModelWithoutVulkanNodesFailsWithTheFlag) {
  REQUIRE_VULKAN();
  ModelBuilder b(13);
  b.input("x", {2, 8}).output("y", {2, 8});
  b.initializer("M", {1, 8}, {1, 2, 3, 4, 5, 6, 7, 8});
  attrInt(b.node("Mod", {"x", "M"}, {"y"}, "mod"), "fmod", 1);  // no Vulkan kernel
  const std::string path = b.save(at("cpu_only.onnx"));
  const auto before = listFiles(root_);
  ModelCompilationOptions options(vulkanOptions());
  options.setInputModelPath(path).setFlags(CompileFlags::ERROR_IF_NO_NODES_COMPILED);
  EXPECT_STATUS(compileModel(options).status(), StatusCode::FAIL, "Unable to compile any nodes");
  EXPECT_EQ(listFiles(root_), before);
}

// The Compile API writes the plain optimized model; the session-option flow writes nothing (no device needed).
TEST_F(EpContextErrors, E08_NothingCompiledWritesPlainModelOrNothing) {
  const SourceModel m = source();
  const SessionOptions cpu = withEntries({}, {{"kiln.execution_providers", "cpu"}});
  auto reference = Session::create(m.path, cpu);
  ASSERT_TRUE(reference.isOk()) << reference.status().toString();
  const auto expected = runAll(**reference, inputSets(Topology::kTwoPartitions));

  const auto before = listFiles(root_);
  ASSERT_TRUE(createStatus(m.path, withEntries(cpu, {{"ep.context_enable", "1"}})).isOk());
  EXPECT_EQ(listFiles(root_), before) << "the session-option flow wrote a model with nothing compiled";

  ModelCompilationOptions options(cpu);
  options.setInputModelPath(m.path);
  auto result = compileModel(options);
  ASSERT_TRUE(result.isOk()) << result.status().toString();
  EXPECT_EQ(result->epContextNodes, 0);
  EXPECT_TRUE(result->binaryPath.empty());
  auto written = listFiles(root_);
  for (const auto& f : before) written.erase(f);
  EXPECT_EQ(written, std::set<std::string>{"m_ctx.onnx"});
  onnx::ModelProto plain = readModel(at("m_ctx.onnx"));
  EXPECT_TRUE(epContextNodes(plain).empty());
  auto session = Session::create(at("m_ctx.onnx"), cpu);
  ASSERT_TRUE(session.isOk()) << session.status().toString();
  expectSameOutputs(expected, runAll(**session, inputSets(Topology::kTwoPartitions)), "the plain model");
}

// ---- E9 / E10: an input that is compiled already ----

TEST_F(EpContextErrors, E09_CompileApiRefusesACompiledModel) {
  REQUIRE_VULKAN();
  const SourceModel m = source();
  compile(m.path);
  const auto before = listFiles(root_);
  ModelCompilationOptions options(vulkanOptions());
  options.setInputModelPath(at("m_ctx.onnx"));
  EXPECT_STATUS(compileModel(options).status(), StatusCode::INVALID_GRAPH, "not already compiled");
  EXPECT_EQ(listFiles(root_), before);
}

TEST_F(EpContextErrors, E10_SessionOptionFlowIgnoresACompiledModel) {
  REQUIRE_VULKAN();
  const SourceModel m = source();
  compile(m.path);
  const auto before = listFiles(root_);
  auto session = Session::create(at("m_ctx.onnx"), generating());
  ASSERT_TRUE(session.isOk()) << session.status().toString();
  expectNoCompileWork(**session, "ctx model with ep.context_enable=1");
  EXPECT_EQ(listFiles(root_), before);
}

// ---- E11: session.disable_model_compile ----

TEST_F(EpContextErrors, E11_DisabledCompileNeedsACompiledModel) {
  REQUIRE_VULKAN();
  const SourceModel m = source();
  const SessionOptions disabled = withEntries(vulkanOptions(), {{"session.disable_model_compile", "1"}});
  EXPECT_STATUS(createStatus(m.path, disabled), StatusCode::MODEL_REQUIRES_COMPILATION,
                "EP 'VulkanExecutionProvider' needs to compile");
  compile(m.path);
  EXPECT_TRUE(createStatus(at("m_ctx.onnx"), disabled).isOk()) << "a compiled model needs no compile";
  // Nothing to compile for the CPU EP alone.
  EXPECT_TRUE(createStatus(m.path, withEntries({}, {{"kiln.execution_providers", "cpu"},
                                                    {"session.disable_model_compile", "1"}})).isOk());
}

// ---- E12: EPContext nodes no EP of the session claims ----

TEST_F(EpContextErrors, E12_ForeignSourceOrNoVulkanEpIsNotImplemented) {
  REQUIRE_VULKAN();
  const SourceModel m = source();
  compile(m.path);
  const std::string ctx = at("m_ctx.onnx");
  editCtx(ctx, at("qnn_ctx.onnx"), [](onnx::ModelProto& model) {
    findAttribute(*epContextNodes(model)[0], "source")->set_s("QNNExecutionProvider");
  });
  onnx::ModelProto original = readModel(ctx);
  const std::string firstNode = epContextNodes(original)[0]->name();
  const Status foreign = createStatus(at("qnn_ctx.onnx"));
  EXPECT_STATUS(foreign, StatusCode::NOT_IMPLEMENTED, "generated by 'QNNExecutionProvider'");
  EXPECT_NE(foreign.message().find("EPContext node name: '" + firstNode + "'"), std::string::npos) << foreign.toString();

  const Status cpuOnly = createStatus(ctx, withEntries({}, {{"kiln.execution_providers", "cpu"}}));
  EXPECT_STATUS(cpuOnly, StatusCode::NOT_IMPLEMENTED, "generated by 'VulkanExecutionProvider'");
  EXPECT_NE(cpuOnly.message().find("[CPUExecutionProvider]"), std::string::npos) << cpuOnly.toString();

  // Claimed: the short name, and no source at all (written before the attribute existed).
  editCtx(ctx, at("short_ctx.onnx"), [](onnx::ModelProto& model) {
    for (auto* node : epContextNodes(model)) findAttribute(*node, "source")->set_s("Vulkan");
  });
  EXPECT_TRUE(createStatus(at("short_ctx.onnx")).isOk());
  editCtx(ctx, at("nosource_ctx.onnx"), [](onnx::ModelProto& model) {
    for (auto* node : epContextNodes(model)) {
      auto* attrs = node->mutable_attribute();
      attrs->erase(std::remove_if(attrs->begin(), attrs->end(), [](const auto& a) { return a.name() == "source"; }),
                   attrs->end());
    }
  });
  EXPECT_TRUE(createStatus(at("nosource_ctx.onnx")).isOk());
}

// ---- E13: the Contracts' path rules for ep_cache_context (embed mode 0) ----

class EpContextPathRules : public EpContextErrors {
 protected:
  void SetUp() override {
    EpContextErrors::SetUp();
    REQUIRE_VULKAN();
    const SourceModel m = source("m", Topology::kTwoPartitions, 0, "sub");
    compile(m.path);
    ctx_ = at("sub/m_ctx.onnx");
    binary_ = at("sub/m_vulkan.bin");
    ASSERT_TRUE(fs::exists(ctx_) && fs::exists(binary_));
  }
  // The ctx model with ep_cache_context = `reference`, from its path and (with ep.context_file_path) its bytes.
  void expectRefused(const std::string& name, const std::string& reference, const std::string& fragment) {
    SCOPED_TRACE(name + ": '" + reference + "'");
    const std::string edited = at("sub/" + name + "_ctx.onnx");
    editCtx(ctx_, edited, setCacheContext(reference));
    EXPECT_STATUS(createStatus(edited), StatusCode::INVALID_GRAPH, fragment);
    const std::vector<std::byte> bytes = readBytes(edited);
    auto fromBytes = Session::create(std::span<const std::byte>(bytes), withEntries(vulkanOptions(), {{"ep.context_file_path", edited}}));
    ASSERT_FALSE(fromBytes.isOk());
    EXPECT_STATUS(fromBytes.status(), StatusCode::INVALID_GRAPH, fragment);
  }
  void expectLoads(const std::string& name, const std::string& reference, bool keepContentId) {
    SCOPED_TRACE(name + ": '" + reference + "'");
    const std::string edited = at("sub/" + name + "_ctx.onnx");
    editCtx(ctx_, edited, [&](onnx::ModelProto& model) {
      setCacheContext(reference)(model);
      for (auto& entry : *model.mutable_metadata_props()) {
        if (keepContentId && entry.key() == "kiln.context_binary_hash.m_vulkan.bin") entry.set_key("kiln.context_binary_hash." + reference);
      }
    });
    auto session = Session::create(edited, vulkanOptions());
    ASSERT_TRUE(session.isOk()) << session.status().toString();
  }
  std::string ctx_, binary_;
};

TEST_F(EpContextPathRules, E13_EscapingEmptyAndMissingPathsAreInvalidGraph) {
  fs::copy_file(binary_, at("m_vulkan.bin"));   // a valid binary one folder up
  fs::copy_file(binary_, at("outside_vulkan.bin"));
  fs::create_symlink("../outside_vulkan.bin", at("sub/link_vulkan.bin"));
  expectRefused("parent", "../m_vulkan.bin", "ep_cache_context");
  expectRefused("dotdot_inside", "bins/../m_vulkan.bin", "ep_cache_context");
  expectRefused("absolute", binary_, "ep_cache_context");
  expectRefused("symlink", "link_vulkan.bin", "ep_cache_context");
  expectRefused("empty", "", "ep_cache_context");
  expectRefused("missing", "nothing_vulkan.bin", "does not exist");
  // Controls: the same machinery loads a subfolder path and a symlink that stays inside the folder.
  fs::create_directories(at("sub/bins"));
  fs::copy_file(binary_, at("sub/bins/m_vulkan.bin"));
  expectLoads("subfolder", "bins/m_vulkan.bin", true);
  fs::create_symlink("m_vulkan.bin", at("sub/inner_link.bin"));
  expectLoads("inner_symlink", "inner_link.bin", true);
}

TEST_F(EpContextPathRules, E13_DeletedBinaryIsInvalidGraph) {
  fs::remove(binary_);
  EXPECT_STATUS(createStatus(ctx_), StatusCode::INVALID_GRAPH, "does not exist");
}

// ---- E14: corrupt or replaced binaries ----

TEST_F(EpContextPathRules, E14_CorruptTruncatedOrSwappedBinaryIsInvalidGraph) {
  const std::vector<std::byte> good = readBytes(binary_);
  std::vector<std::byte> flipped = good;
  flipped[flipped.size() / 2] ^= std::byte{0xFF};
  writeFileBytes(binary_, flipped);
  EXPECT_EQ(createStatus(ctx_).code(), StatusCode::INVALID_GRAPH) << createStatus(ctx_).toString();
  writeFileBytes(binary_, std::span(good).first(good.size() / 2));
  EXPECT_EQ(createStatus(ctx_).code(), StatusCode::INVALID_GRAPH) << createStatus(ctx_).toString();

  // Another model's binary (same graph names, other weights) in its place: the recorded content id tells.
  const SourceModel other = source("m", Topology::kTwoPartitions, 1, "other");
  compile(other.path);
  fs::copy_file(at("other/m_vulkan.bin"), binary_, fs::copy_options::overwrite_existing);
  EXPECT_STATUS(createStatus(ctx_), StatusCode::INVALID_GRAPH, "does not match");
  writeFileBytes(binary_, good);
  EXPECT_TRUE(createStatus(ctx_).isOk()) << "control: the original binary loads";
}

TEST_F(EpContextErrors, E14_CorruptEmbeddedPayloadIsInvalidGraph) {
  REQUIRE_VULKAN();
  const SourceModel m = source();
  compile(m.path, 1);
  editCtx(at("m_ctx.onnx"), at("corrupt_ctx.onnx"), [](onnx::ModelProto& model) {
    std::string* payload = findAttribute(*epContextNodes(model)[0], "ep_cache_context")->mutable_s();
    (*payload)[payload->size() / 2] ^= 0x5A;
  });
  EXPECT_EQ(createStatus(at("corrupt_ctx.onnx")).code(), StatusCode::INVALID_GRAPH);
  // A main_context=0 node naming a graph no binary holds.
  editCtx(at("m_ctx.onnx"), at("unknown_graph_ctx.onnx"), [](onnx::ModelProto& model) {
    findAttribute(*epContextNodes(model)[1], "partition_name")->set_s("no_such_graph");
  });
  EXPECT_STATUS(createStatus(at("unknown_graph_ctx.onnx")), StatusCode::INVALID_GRAPH, "no_such_graph");
}

// On read a missing embed_mode is the schema default 1 (on write Kiln's default is 0).
TEST_F(EpContextErrors, MissingEmbedModeMeansEmbedded) {
  REQUIRE_VULKAN();
  auto dropEmbedMode = [](onnx::ModelProto& model) {
    for (auto* node : epContextNodes(model)) {
      auto* attrs = node->mutable_attribute();
      attrs->erase(std::remove_if(attrs->begin(), attrs->end(), [](const auto& a) { return a.name() == "embed_mode"; }),
                   attrs->end());
    }
  };
  const SourceModel embedded = source("e");
  compile(embedded.path, 1);
  editCtx(at("e_ctx.onnx"), at("e_noembed_ctx.onnx"), dropEmbedMode);
  EXPECT_TRUE(createStatus(at("e_noembed_ctx.onnx")).isOk());
  const SourceModel external = source("x");
  compile(external.path, 0);
  editCtx(at("x_ctx.onnx"), at("x_noembed_ctx.onnx"), dropEmbedMode);  // the path is read as a payload
  EXPECT_EQ(createStatus(at("x_noembed_ctx.onnx")).code(), StatusCode::INVALID_GRAPH);
}

// A binary cross-compiled for a device profile is `compatible`, so fail_on_suboptimal refuses it.
TEST_F(EpContextErrors, SuboptimalBinaryFailsWhenAskedTo) {
  REQUIRE_VULKAN();
  const SourceModel m = source();
  ModelCompilationOptions options(vulkanOptions());
  options.setInputModelPath(m.path).setTargetProfile(std::string(KILN_SOURCE_DIR) + "/resources/profiles/vulkan11_minimal.json");
  ASSERT_TRUE(compileModel(options).isOk());
  EXPECT_TRUE(createStatus(at("m_ctx.onnx")).isOk());
  EXPECT_STATUS(createStatus(at("m_ctx.onnx"), withEntries(vulkanOptions(), {{"session.fail_on_suboptimal_compiled_model", "1"}})),
                StatusCode::FAIL, "not optimal");
}

// Keeping a source's external file is possible only where the output model can refer to it.
TEST_F(EpContextErrors, KeepingAnOriginalOutsideTheOutputFolderIsInvalidArgument) {
  REQUIRE_VULKAN();
  const SourceModel m = writeSourceModel(Topology::kTwoPartitions, root_.string(), "m", 0, true);
  auto keep = [](const std::string&, const Tensor&, const ExternalInitializerInfo*) { return InitializerLocation::keepOriginal(); };
  ModelCompilationOptions options(vulkanOptions());
  options.setInputModelPath(m.path).setOutputModelPath(at("out/m_ctx.onnx")).setOutputModelGetInitializerLocationFunc(keep);
  EXPECT_STATUS(compileModel(options).status(), StatusCode::INVALID_ARGUMENT, "outside the output model's folder");
  // A source without external data has nothing to keep.
  const SourceModel inlineSource = source("inline");
  const auto beforeInline = listFiles(root_);
  ModelCompilationOptions inlineOptions(vulkanOptions());
  inlineOptions.setInputModelPath(inlineSource.path).setOutputModelGetInitializerLocationFunc(keep);
  EXPECT_STATUS(compileModel(inlineOptions).status(), StatusCode::INVALID_ARGUMENT, "no source external-data location");
  EXPECT_EQ(listFiles(root_), beforeInline);
  EXPECT_FALSE(fs::exists(root_ / "out")) << "a failed compile created its output folder";
}

// ---- E16: the write function's error is the compile's ----

TEST_F(EpContextErrors, E16_WriteFunctionErrorIsPropagatedAndNothingIsLeft) {
  REQUIRE_VULKAN();
  const SourceModel m = source();
  const auto before = listFiles(root_);
  ModelCompilationOptions options(vulkanOptions());
  int calls = 0;
  options.setInputModelPath(m.path).setEpContextBinaryInformation(root_.string(), "mem.onnx");
  options.setOutputModelWriteFunc([&](std::span<const std::byte>) {
    ++calls;
    return Status(StatusCode::NO_SUCHFILE, "the stream's disk is gone");
  });
  EXPECT_STATUS(compileModel(options).status(), StatusCode::NO_SUCHFILE, "the stream's disk is gone");
  EXPECT_EQ(calls, 1) << "writing goes on after an error";
  EXPECT_EQ(listFiles(root_), before) << "the binary of a failed compile was left behind";
}

// ONNX Runtime turns an exception from the write function into FAIL; it must not cross Kiln's API either.
TEST_F(EpContextErrors, E16_WriteFunctionExceptionIsFail) {
  REQUIRE_VULKAN();
  const SourceModel m = source();
  const auto before = listFiles(root_);
  ModelCompilationOptions options(vulkanOptions());
  options.setInputModelPath(m.path).setEpContextEmbedMode(true).setOutputModelWriteFunc(
      [](std::span<const std::byte>) -> Status { throw std::runtime_error("stream closed by the peer"); });
  EXPECT_STATUS(compileModel(options).status(), StatusCode::FAIL, "stream closed by the peer");
  EXPECT_EQ(listFiles(root_), before);
}

// ---- E17 / E20: sharing groups ----

TEST_F(EpContextErrors, E17_EmbedModeWithSharingIsInvalidArgument) {
  const SourceModel a = source("a"), b = source("b");
  const auto before = listFiles(root_);
  EXPECT_STATUS(createStatus(a.path, generating(1, {{"ep.share_ep_contexts", "1"}})), StatusCode::INVALID_ARGUMENT,
                "must be 0 if ep.share_ep_contexts is 1");
  ModelCompilationOptions options(vulkanOptions());
  options.setEpContextEmbedMode(true);
  EXPECT_STATUS(compileModelsSharingContext({a.path, b.path}, options).status(), StatusCode::INVALID_ARGUMENT,
                "must be 0 if ep.share_ep_contexts is 1");
  EXPECT_EQ(listFiles(root_), before);
}

TEST_F(EpContextErrors, E20_DuplicateGraphNamesInASharingGroupFail) {
  REQUIRE_VULKAN();
  const SourceModel a = source("a"), b = source("b", Topology::kTwoPartitions, 1);
  const auto before = listFiles(root_);
  ASSERT_TRUE(createStatus(a.path, generating(0, {{"ep.share_ep_contexts", "1"}})).isOk());
  EXPECT_STATUS(createStatus(b.path, generating(0, {{"ep.share_ep_contexts", "1"}, {"ep.stop_share_ep_contexts", "1"}})),
                StatusCode::FAIL, "duplicate graph name");
  EXPECT_EQ(listFiles(root_), before);
  // The refused session did not join, and did not end the group: a session with its own prefix still can.
  ASSERT_TRUE(createStatus(b.path, generating(0, {{"ep.share_ep_contexts", "1"}, {"ep.stop_share_ep_contexts", "1"},
                                                  {"ep.context_node_name_prefix", "b_"}})).isOk());
  auto written = listFiles(root_);
  for (const auto& f : before) written.erase(f);
  EXPECT_EQ(written, (std::set<std::string>{"a_ctx.onnx", "b_ctx.onnx", "a_vulkan.bin"}));
  for (const char* ctx : {"a_ctx.onnx", "b_ctx.onnx"}) EXPECT_TRUE(createStatus(at(ctx)).isOk()) << ctx;
  for (const char* ctx : {"a_ctx.onnx", "b_ctx.onnx", "a_vulkan.bin"}) fs::remove(at(ctx));

  EXPECT_STATUS(compileModelsSharingContext({a.path, b.path}, ModelCompilationOptions(vulkanOptions()), {"p_", "p_"}).status(),
                StatusCode::FAIL, "duplicate graph name");
  EXPECT_EQ(listFiles(root_), before);
}

// A group whose second model compiles nothing writes no file at all, and leaves an earlier group's files alone.
TEST_F(EpContextErrors, FailedSharingGroupWritesNothing) {
  REQUIRE_VULKAN();
  const SourceModel a = source("a"), b = source("b", Topology::kTwoPartitions, 1);
  ASSERT_TRUE(compileModelsSharingContext({a.path, b.path}, ModelCompilationOptions(vulkanOptions())).isOk());
  const std::vector<std::string> outputs = {at("a_ctx.onnx"), at("b_ctx.onnx"), at("a_vulkan.bin")};
  for (const auto& f : outputs) ageFile(f);
  const Snapshot existing = Snapshot::of(outputs);
  ModelBuilder cpuOnly(13);
  cpuOnly.input("x", {2, 8}).output("y", {2, 8});
  cpuOnly.initializer("M", {1, 8}, {1, 2, 3, 4, 5, 6, 7, 8});
  attrInt(cpuOnly.node("Mod", {"x", "M"}, {"y"}, "mod"), "fmod", 1);
  writeBytes(b.path, cpuOnly.build().SerializeAsString());
  const auto before = listFiles(root_);
  EXPECT_STATUS(compileModelsSharingContext({a.path, b.path}, ModelCompilationOptions(vulkanOptions())).status(),
                StatusCode::FAIL, "Unable to compile any nodes");
  EXPECT_EQ(listFiles(root_), before);
  existing.expectUnchanged();
}

// The session-option group with one external-initializer file name for both models: one file, both models right.
TEST_F(EpContextErrors, SessionOptionSharingGroupSharesOneExternalInitializerFile) {
  REQUIRE_VULKAN();
  std::vector<SourceModel> models = {source("a"), source("b", Topology::kTwoPartitions, 1)};
  std::vector<std::vector<std::vector<NamedTensor>>> expected;
  for (const auto& m : models) {
    auto reference = Session::create(m.path, vulkanOptions());
    ASSERT_TRUE(reference.isOk());
    expected.push_back(runAll(**reference, inputSets(Topology::kTwoPartitions)));
  }
  const auto before = listFiles(root_);
  for (size_t i = 0; i < models.size(); ++i) {
    std::map<std::string, std::string> entries = {{"ep.share_ep_contexts", "1"},
                                                  {"ep.context_node_name_prefix", i == 0 ? "a_" : "b_"},
                                                  {"ep.context_model_external_initializers_file_name", "ext.bin"}};
    if (i == 1) entries["ep.stop_share_ep_contexts"] = "1";
    const Status created = createStatus(models[i].path, generating(0, entries));
    ASSERT_TRUE(created.isOk()) << created.toString();
  }
  auto written = listFiles(root_);
  for (const auto& f : before) written.erase(f);
  EXPECT_EQ(written, (std::set<std::string>{"a_ctx.onnx", "b_ctx.onnx", "a_vulkan.bin", "ext.bin"}));
  for (size_t i = 0; i < models.size(); ++i) {
    auto session = Session::create(at(i == 0 ? "a_ctx.onnx" : "b_ctx.onnx"), vulkanOptions());
    ASSERT_TRUE(session.isOk()) << session.status().toString();
    expectSameOutputs(expected[i], runAll(**session, inputSets(Topology::kTwoPartitions)), models[i].path);
  }
}

// ---- Cancellation, and failures late in a compile: no output, existing outputs untouched ----

class EpContextCancel : public EpContextErrors, public ::testing::WithParamInterface<std::string> {};

// Cancels when the first progress event whose stage contains GetParam() arrives.
TEST_P(EpContextCancel, CompileApiCancelledLeavesExistingOutputsAlone) {
  REQUIRE_VULKAN();
  const SourceModel m = source();
  compile(m.path);
  const std::vector<std::string> outputs = {at("m_ctx.onnx"), at("m_vulkan.bin")};
  for (const auto& f : outputs) ageFile(f);
  const Snapshot existing = Snapshot::of(outputs);
  const auto before = listFiles(root_);

  SessionOptions options = vulkanOptions();
  options.progress.cancellation = std::make_shared<CancellationToken>();
  std::vector<std::string> stages;
  options.progress.onProgress = [&, token = options.progress.cancellation](const ProgressEvent& event) {
    stages.push_back(event.stage);
    if (event.stage.find(GetParam()) != std::string::npos) token->cancel();
  };
  ModelCompilationOptions compileOptions(options);
  compileOptions.setInputModelPath(m.path);
  auto result = compileModel(compileOptions);
  std::string seen;
  for (const auto& s : stages) seen += s + "; ";
  ASSERT_FALSE(result.isOk()) << "not cancelled; stages: " << seen;
  EXPECT_EQ(result.status().code(), StatusCode::CANCELLED) << result.status().toString();
  EXPECT_EQ(listFiles(root_), before);
  existing.expectUnchanged();
}

class EpContextCancelSessionOptions : public EpContextCancel {};

TEST_P(EpContextCancelSessionOptions, SessionOptionFlowCancelledWritesNothing) {
  REQUIRE_VULKAN();
  const SourceModel m = source();
  const auto before = listFiles(root_);
  SessionOptions options = generating();
  options.progress.cancellation = std::make_shared<CancellationToken>();
  options.progress.onProgress = [token = options.progress.cancellation](const ProgressEvent& event) {
    if (event.stage.find(GetParam()) != std::string::npos) token->cancel();
  };
  EXPECT_EQ(createStatus(m.path, options).code(), StatusCode::CANCELLED);
  EXPECT_EQ(listFiles(root_), before);
}

INSTANTIATE_TEST_SUITE_P(Stages, EpContextCancel,
                         ::testing::Values("load", "optimize", "partition", "glslang", "compile", "pipelines", "write"));
// The session-option flow has no write stage.
INSTANTIATE_TEST_SUITE_P(Stages, EpContextCancelSessionOptions,
                         ::testing::Values("load", "optimize", "partition", "glslang", "compile", "pipelines"));

TEST_F(EpContextErrors, CancelledBeforeStartWritesNothing) {
  const SourceModel m = source();
  const auto before = listFiles(root_);
  SessionOptions options = vulkanOptions();
  options.progress.cancellation = std::make_shared<CancellationToken>();
  options.progress.cancellation->cancel();
  ModelCompilationOptions compileOptions(options);
  compileOptions.setInputModelPath(m.path);
  EXPECT_EQ(compileModel(compileOptions).status().code(), StatusCode::CANCELLED);
  EXPECT_EQ(createStatus(m.path, withEntries(options, {{"ep.context_enable", "1"}})).code(), StatusCode::CANCELLED);
  EXPECT_EQ(listFiles(root_), before);
}

// Cancelled while writing into a folder that does not exist yet: no file and no folder is left.
TEST_F(EpContextErrors, CancelledCompileLeavesNoNewFolder) {
  REQUIRE_VULKAN();
  const SourceModel m = source();
  SessionOptions options = vulkanOptions();
  options.progress.cancellation = std::make_shared<CancellationToken>();
  options.progress.onProgress = [token = options.progress.cancellation](const ProgressEvent& event) {
    if (event.stage == "write") token->cancel();
  };
  ModelCompilationOptions compileOptions(options);
  compileOptions.setInputModelPath(m.path).setOutputModelPath(at("new/deeper/m_ctx.onnx"));
  EXPECT_EQ(compileModel(compileOptions).status().code(), StatusCode::CANCELLED);
  EXPECT_FALSE(fs::exists(root_ / "new")) << "the cancelled compile left the folders it created";
}

// A compile that fails after compiling (an initializer location outside the output folder) leaves the previous
// outputs as they were and no temporary file behind.
TEST_F(EpContextErrors, FailedCompileNeverDamagesAnExistingOutput) {
  REQUIRE_VULKAN();
  const SourceModel m = source();
  compile(m.path);
  const std::vector<std::string> outputs = {at("m_ctx.onnx"), at("m_vulkan.bin")};
  for (const auto& f : outputs) ageFile(f);
  const Snapshot existing = Snapshot::of(outputs);
  const auto before = listFiles(root_);
  ModelCompilationOptions options(vulkanOptions());
  options.setInputModelPath(m.path).setOutputModelGetInitializerLocationFunc(
      [](const std::string&, const Tensor&, const ExternalInitializerInfo*) { return InitializerLocation::inFile("../escape.bin"); });
  EXPECT_STATUS(compileModel(options).status(), StatusCode::INVALID_ARGUMENT, "../escape.bin");
  EXPECT_EQ(listFiles(root_), before);
  EXPECT_FALSE(fs::exists(root_.parent_path() / "escape.bin"));
  existing.expectUnchanged();
}

}  // namespace
}  // namespace kiln::testing
