// Model packages (kiln/model_package.h) and compile identities (kiln compile's no-op): a package of two device
// profiles × two precisions loads on this device choosing the variant for it and the precision asked for, runs bit
// for bit as that variant's ctx model does and stores the weights once; a tampered file turns its variant
// UNSUPPORTED; hostile descriptors are refused; a compile with an unchanged identity writes nothing, a changed
// option or a damaged output compiles again, and two compiles of one output take turns.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <thread>

#include "epcontext_checks.h"
#include "gtest_requirements.h"
#include "kiln/compiler.h"
#include "kiln/model_package.h"
#include "model_builder.h"
#include "test_models.h"

namespace kiln::testing {
namespace {

namespace fs = std::filesystem;

std::vector<float> wave(size_t n, float scale) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = std::cos(static_cast<float>(i) * 0.29f) * scale;
  return v;
}

// Conv → Relu → Conv with weights big enough that sharing them is visible in the package's size.
onnx::ModelProto netModel() {
  ModelBuilder m(13);
  m.input("x", {1, 8, 16, 16});
  m.initializer("w1", {32, 8, 3, 3}, wave(32 * 8 * 9, 0.3f));
  m.initializer("w2", {8, 32, 3, 3}, wave(8 * 32 * 9, 0.2f));
  auto& conv1 = m.node("Conv", {"x", "w1"}, {"c1"}, "conv1");
  attrInts(conv1, "pads", {1, 1, 1, 1});
  m.node("Relu", {"c1"}, {"r1"}, "relu1");
  auto& conv2 = m.node("Conv", {"r1", "w2"}, {"y"}, "conv2");
  attrInts(conv2, "pads", {1, 1, 1, 1});
  m.output("y", {1, 8, 16, 16});
  return m.build();
}

std::vector<std::vector<NamedTensor>> netInputs() { return {{{"x", Tensor::fromVector<float>({1, 8, 16, 16}, wave(2048, 1.5f))}}}; }

// The names directly in `folder` (listFiles walks the whole tree).
std::set<std::string> topLevel(const fs::path& folder) {
  std::set<std::string> names;
  for (const auto& entry : fs::directory_iterator(folder)) names.insert(entry.path().filename().string());
  return names;
}

std::string profile(const char* name) { return std::string(KILN_SOURCE_DIR) + "/resources/profiles/" + name; }

class ModelPackages : public ::testing::Test {
 protected:
  void SetUp() override {
    REQUIRE_VULKAN();
    source_ = dir_.file("net.onnx");
    std::ofstream(source_, std::ios::binary) << netModel().SerializeAsString();
  }

  Result<ModelPackage> build(const std::string& folder) {
    PackageOptions options;
    options.sourceModel = source_;
    options.profiles = {profile("lavapipe.json"), profile("vulkan11_minimal.json")};
    options.precisions = {"fp32", "fp16"};
    options.outputFolder = folder;
    options.sessionOptions = vulkanOptions();
    return packageModel(options);
  }

  TempDir dir_;
  std::string source_;
};

TEST_F(ModelPackages, ChoosesTheVariantForThisDeviceAndRunsItBitForBit) {
  const std::string folder = dir_.file("net.kilnpkg");
  auto package = build(folder);
  ASSERT_TRUE(package.isOk()) << package.status().toString();
  ASSERT_EQ(package->variants.size(), 4u);
  EXPECT_EQ(package->variants[0].name, "lavapipe-fp32");
  EXPECT_EQ(package->variants[3].name, "vulkan11_minimal-fp16");
  EXPECT_TRUE(isModelPackage(folder));
  EXPECT_EQ(topLevel(dir_.path()), (std::set<std::string>{"net.onnx", "net.kilnpkg"})) << "no staging folder left";

  // Weights stored once: the package is smaller than its variants compiled one by one with their weights.
  uint64_t standalone = 0;
  for (const char* name : {"lavapipe.json", "vulkan11_minimal.json"}) {
    for (bool fp16 : {false, true}) {
      ModelCompilationOptions options(withEntries(vulkanOptions(), {{"kiln.vulkan.fp16", fp16 ? "1" : "0"}}));
      const std::string ctx = dir_.file(std::string("alone_") + name + (fp16 ? "16" : "32") + "_ctx.onnx");
      options.setInputModelPath(source_).setOutputModelPath(ctx).setTargetProfile(profile(name));
      auto compiled = compileModel(options);
      ASSERT_TRUE(compiled.isOk()) << compiled.status().toString();
      standalone += fs::file_size(ctx) + fs::file_size(compiled->binaryPath);
    }
  }
  EXPECT_LT(package->totalBytes, standalone) << "package " << package->totalBytes << " B, variants alone " << standalone << " B";

  auto read = readModelPackage(folder);
  ASSERT_TRUE(read.isOk()) << read.status().toString();
  ASSERT_EQ(read->variants.size(), 4u);
  EXPECT_EQ(read->variants[1].precision, "fp16");
  EXPECT_EQ(read->variants[1].compileIdentity, package->variants[1].compileIdentity);
  EXPECT_EQ(read->sourceFiles.size(), 1u);

  for (const char* fp16 : {"0", "1"}) {
    const SessionOptions options = withEntries(vulkanOptions(), {{"kiln.vulkan.fp16", fp16}});
    auto choice = choosePackageVariant(*read, options);
    ASSERT_TRUE(choice.isOk()) << choice.status().toString();
    ASSERT_GE(choice->chosen, 0) << choice->summary;
    const PackageVariant& chosen = read->variants[static_cast<size_t>(choice->chosen)];
    EXPECT_EQ(chosen.name, std::string("lavapipe-") + (fp16[0] == '1' ? "fp16" : "fp32")) << choice->summary;
    // The package's session runs exactly as a session of the chosen ctx model.
    auto direct = Session::create((fs::path(folder) / chosen.ctxModel).string(), options);
    ASSERT_TRUE(direct.isOk()) << direct.status().toString();
    auto viaPackage = Session::create(folder, options);
    ASSERT_TRUE(viaPackage.isOk()) << viaPackage.status().toString();
    expectSameOutputs(runAll(**direct, netInputs()), runAll(**viaPackage, netInputs()), chosen.name);
    EXPECT_EQ((*viaPackage)->counters().glslang_compiles, 0) << "a packaged variant loads without compiling";
  }

  // One byte of the chosen variant's binary changed: that variant is UNSUPPORTED, saying why, and another is chosen.
  const PackageVariant& first = read->variants[0];
  std::string binary;
  for (const auto& file : first.files) {
    if (file.path.ends_with(".bin")) binary = (fs::path(folder) / file.path).string();
  }
  ASSERT_FALSE(binary.empty());
  {
    std::fstream edit(binary, std::ios::in | std::ios::out | std::ios::binary);
    edit.seekp(static_cast<std::streamoff>(fs::file_size(binary) / 2));
    edit.put('\x5a');
  }
  auto tampered = choosePackageVariant(*read, vulkanOptions());
  ASSERT_TRUE(tampered.isOk()) << tampered.status().toString();
  EXPECT_EQ(tampered->judged[0].state, CompiledModelCompatibility::UNSUPPORTED);
  ASSERT_FALSE(tampered->judged[0].reasons.empty());
  EXPECT_NE(tampered->judged[0].reasons[0].find("does not match its digest"), std::string::npos) << tampered->judged[0].reasons[0];
  ASSERT_GE(tampered->chosen, 1);
  EXPECT_EQ(read->variants[static_cast<size_t>(tampered->chosen)].precision, "fp32") << tampered->summary;
  auto stillRuns = Session::create(folder, vulkanOptions());
  EXPECT_TRUE(stillRuns.isOk()) << stillRuns.status().toString();
}

TEST_F(ModelPackages, NoFittingVariantCompilesTheSourceUnlessCompilingIsDisabled) {
  const std::string folder = dir_.file("net.kilnpkg");
  ASSERT_TRUE(build(folder).isOk());
  auto package = readModelPackage(folder);
  ASSERT_TRUE(package.isOk());
  for (const auto& variant : package->variants) fs::remove(fs::path(folder) / variant.ctxModel);
  auto choice = choosePackageVariant(*package, vulkanOptions());
  ASSERT_TRUE(choice.isOk()) << choice.status().toString();
  EXPECT_EQ(choice->chosen, -1);
  EXPECT_EQ(fs::path(choice->modelPath).filename(), "net.onnx");
  auto compiled = Session::create(folder, vulkanOptions());
  EXPECT_TRUE(compiled.isOk()) << compiled.status().toString();
  auto refused = Session::create(folder, withEntries(vulkanOptions(), {{"session.disable_model_compile", "1"}}));
  ASSERT_FALSE(refused.isOk());
  EXPECT_EQ(refused.status().code(), StatusCode::MODEL_REQUIRES_COMPILATION) << refused.status().toString();
  EXPECT_NE(refused.status().message().find("no variant fits"), std::string::npos) << refused.status().toString();
}

TEST_F(ModelPackages, ExistingFolderInvalidPrecisionAndAFailedVariantLeaveNothing) {
  const std::string folder = dir_.file("net.kilnpkg");
  ASSERT_TRUE(build(folder).isOk());
  auto again = build(folder);
  ASSERT_FALSE(again.isOk());
  EXPECT_EQ(again.status().code(), StatusCode::INVALID_ARGUMENT);
  PackageOptions options;
  options.sourceModel = source_;
  options.precisions = {"int3"};
  options.outputFolder = dir_.file("other.kilnpkg");
  EXPECT_EQ(packageModel(options).status().code(), StatusCode::INVALID_ARGUMENT);
  options.precisions = {"fp32"};
  options.profiles = {dir_.file("no_such_profile.json")};
  EXPECT_FALSE(packageModel(options).isOk());
  EXPECT_EQ(topLevel(dir_.path()), (std::set<std::string>{"net.onnx", "net.kilnpkg"})) << "a failed package leaves nothing";
}

// The steps kiln package --plan / kiln batch / --assemble take: a plan, its compiles run elsewhere (here: one by
// one through the Compile API, as the jobs file's compile jobs do), then the package assembled; a plan whose
// compiles have not all run is refused, naming them, and publishes nothing.
TEST_F(ModelPackages, PlanCompileElsewhereThenAssemble) {
  PackageOptions options;
  options.sourceModel = source_;
  options.profiles = {profile("lavapipe.json")};
  options.precisions = {"fp32", "fp16"};
  options.outputFolder = dir_.file("net.kilnpkg");
  const std::string planFolder = dir_.file("net.plan");
  auto plan = planPackage(options, planFolder);
  ASSERT_TRUE(plan.isOk()) << plan.status().toString();
  ASSERT_EQ(plan->variants.size(), 2u);
  EXPECT_EQ(planPackage(options, planFolder).status().code(), StatusCode::INVALID_ARGUMENT) << "the plan folder exists";
  auto early = assemblePackage(planFolder, false);
  ASSERT_FALSE(early.isOk());
  EXPECT_NE(early.status().message().find("lavapipe-fp32, lavapipe-fp16"), std::string::npos) << early.status().toString();
  EXPECT_FALSE(fs::exists(options.outputFolder));
  std::vector<std::string> identities;
  for (const auto& variant : plan->variants) {
    ModelCompilationOptions compile(withEntries(vulkanOptions(), variant.config));
    compile.setInputModelPath(variant.sourceModel).setOutputModelPath(variant.ctxModel).setTargetProfile(variant.profile);
    auto compiled = compileModel(compile);
    ASSERT_TRUE(compiled.isOk()) << compiled.status().toString();
    identities.push_back(compiled->compileIdentity);
  }
  auto package = assemblePackage(planFolder, false);
  ASSERT_TRUE(package.isOk()) << package.status().toString();
  EXPECT_FALSE(fs::exists(planFolder)) << "the plan folder goes once the package is published";
  auto read = readModelPackage(options.outputFolder);
  ASSERT_TRUE(read.isOk()) << read.status().toString();
  ASSERT_EQ(read->variants.size(), 2u);
  EXPECT_EQ(read->variants[0].compileIdentity, identities[0]);
  EXPECT_EQ(read->variants[1].compileIdentity, identities[1]);
  EXPECT_EQ(read->variants[0].files.front().path, "models/net/lavapipe-fp32/net_ctx.onnx");
  auto choice = choosePackageVariant(*read, vulkanOptions());
  ASSERT_TRUE(choice.isOk()) << choice.status().toString();
  EXPECT_EQ(choice->chosen, 0) << choice->summary;
}

// Writes `text` to `folder`/`relative`.
void put(const fs::path& folder, const std::string& relative, const std::string& text) {
  fs::create_directories((folder / relative).parent_path());
  std::ofstream(folder / relative, std::ios::binary | std::ios::trunc) << text;
}

TEST(ModelPackageDescriptors, HostilePackagesAreRefusedWithTheReason) {
  TempDir dir;
  const fs::path root = dir.path() / "evil.kilnpkg";
  const std::string manifest = R"({"schema_version": 1, "components": ["m"]})";
  const std::string digest = "sha256:" + std::string(64, '0');
  auto metadata = [&](const std::string& variantName, const std::string& sourceModel) {
    return R"({"component_name": "m", "variants": {")" + variantName + R"(": {}}, "kiln": {"source": {"model": ")" +
           sourceModel + R"(", "files": []}}})";
  };
  auto variant = [&](const std::string& file) {
    return R"({"files": [{"filename": ")" + file + R"("}], "kiln": {"files": [{"filename": ")" + file +
           R"(", "digest": ")" + digest + R"(", "size": 1}]}})";
  };
  struct Case {
    std::string what, manifest, metadata, variant, expected;
  };
  const std::vector<Case> cases = {
      {"a file outside the package", manifest, metadata("v", "source/m.onnx"), variant("../../../etc/passwd"), "'..'"},
      {"an absolute file", manifest, metadata("v", "source/m.onnx"), variant("/etc/passwd"), "absolute"},
      {"a source outside", manifest, metadata("v", "../../outside.onnx"), variant("m_ctx.onnx"), "'..'"},
      {"a variant name with a slash", manifest, metadata("../v", "source/m.onnx"), variant("m_ctx.onnx"), "plain file name"},
      {"a component escaping", R"({"schema_version": 1, "components": ["../m"]})", "", "", "plain file name"},
      {"another schema", R"({"schema_version": 9, "components": ["m"]})", "", "", "schema_version 9"},
      {"not JSON", "{", "", "", "not a JSON object"},
      {"no components", R"({"schema_version": 1, "components": []})", "", "", "no components"},
      {"a huge manifest", manifest + std::string(2 << 20, ' '), "", "", "larger than"},
      {"no metadata", manifest, "", "", "metadata.json is missing"},
      {"no variant descriptor", manifest, metadata("v", "source/m.onnx"), "", "variant.json is missing"},
      {"a digest that is not sha256", manifest, metadata("v", "source/m.onnx"),
       R"({"files": [{"filename": "m_ctx.onnx"}], "kiln": {"files": [{"filename": "m_ctx.onnx", "digest": "md5:00", "size": 1}]}})",
       "no sha256 digest"},
  };
  for (const auto& c : cases) {
    fs::remove_all(root);
    put(root, "manifest.json", c.manifest);
    if (!c.metadata.empty()) put(root, "models/m/metadata.json", c.metadata);
    if (!c.variant.empty()) put(root, "models/m/v/variant.json", c.variant);
    auto read = readModelPackage(root.string());
    ASSERT_FALSE(read.isOk()) << c.what;
    EXPECT_EQ(read.status().code(), StatusCode::INVALID_ARGUMENT) << c.what << ": " << read.status().toString();
    EXPECT_NE(read.status().message().find(c.expected), std::string::npos) << c.what << ": " << read.status().toString();
  }
  fs::remove_all(root);
  fs::create_directories(root);
  EXPECT_FALSE(isModelPackage(root.string()));
  EXPECT_EQ(readModelPackage(root.string()).status().code(), StatusCode::NO_SUCHFILE);
}

class CompileIdentity : public ModelPackages {};

TEST_F(CompileIdentity, AnUnchangedIdentityWritesNothingAndAChangeCompilesAgain) {
  const std::string ctx = dir_.file("net_ctx.onnx");
  auto compile = [&](const std::map<std::string, std::string>& entries) {
    ModelCompilationOptions options(withEntries(vulkanOptions(), entries));
    options.setInputModelPath(source_).setOutputModelPath(ctx).setReuseUpToDateOutputs(true);
    return compileModel(options);
  };
  auto first = compile({});
  ASSERT_TRUE(first.isOk()) << first.status().toString();
  EXPECT_FALSE(first->reused);
  EXPECT_EQ(first->compileIdentity.size(), 16u);
  const auto ctxTime = modificationTime(ctx), binaryTime = modificationTime(first->binaryPath);
  auto second = compile({});
  ASSERT_TRUE(second.isOk()) << second.status().toString();
  EXPECT_TRUE(second->reused);
  EXPECT_EQ(second->compileIdentity, first->compileIdentity);
  EXPECT_EQ(second->binaryPath, first->binaryPath);
  EXPECT_TRUE(second->filesWritten.empty());
  EXPECT_EQ(modificationTime(ctx), ctxTime);
  EXPECT_EQ(modificationTime(first->binaryPath), binaryTime);

  auto fp16 = compile({{"kiln.vulkan.fp16", "1"}});
  ASSERT_TRUE(fp16.isOk()) << fp16.status().toString();
  EXPECT_FALSE(fp16->reused);
  EXPECT_NE(fp16->compileIdentity, first->compileIdentity);
  ASSERT_EQ(fp16->recompileReasons.size(), 1u);
  EXPECT_NE(fp16->recompileReasons[0].find("kiln.vulkan.fp16"), std::string::npos) << fp16->recompileReasons[0];

  // A damaged binary is not reused, even with the same identity.
  {
    std::fstream edit(fp16->binaryPath, std::ios::in | std::ios::out | std::ios::binary);
    edit.seekp(static_cast<std::streamoff>(fs::file_size(fp16->binaryPath) - 100));
    edit.put('\x11');
  }
  auto repaired = compile({{"kiln.vulkan.fp16", "1"}});
  ASSERT_TRUE(repaired.isOk()) << repaired.status().toString();
  EXPECT_FALSE(repaired->reused);
  ASSERT_FALSE(repaired->recompileReasons.empty());
  EXPECT_NE(repaired->recompileReasons[0].find("EPContext node"), std::string::npos) << repaired->recompileReasons[0];
  auto runs = Session::create(ctx, vulkanOptions());
  EXPECT_TRUE(runs.isOk()) << runs.status().toString();

  // A changed source is a changed identity.
  onnx::ModelProto changed = netModel();
  changed.mutable_graph()->mutable_initializer(0)->mutable_float_data()->Set(0, 9.0f);
  std::ofstream(source_, std::ios::binary | std::ios::trunc) << changed.SerializeAsString();
  auto newSource = compile({{"kiln.vulkan.fp16", "1"}});
  ASSERT_TRUE(newSource.isOk()) << newSource.status().toString();
  EXPECT_FALSE(newSource->reused);
  ASSERT_FALSE(newSource->recompileReasons.empty());
  EXPECT_EQ(newSource->recompileReasons[0].rfind("stale: source changed", 0), 0u) << newSource->recompileReasons[0];
}

TEST_F(CompileIdentity, TwoCompilesOfOneOutputTakeTurnsAndTheSecondReuses) {
  const std::string ctx = dir_.file("net_ctx.onnx");
  std::vector<Result<CompileResult>> results(2, Status(StatusCode::FAIL, "not run"));
  std::vector<std::thread> threads;
  for (size_t i = 0; i < 2; ++i) {
    threads.emplace_back([&, i] {
      ModelCompilationOptions options(vulkanOptions());
      options.setInputModelPath(source_).setOutputModelPath(ctx).setReuseUpToDateOutputs(true);
      results[i] = compileModel(options);
    });
  }
  for (auto& thread : threads) thread.join();
  ASSERT_TRUE(results[0].isOk()) << results[0].status().toString();
  ASSERT_TRUE(results[1].isOk()) << results[1].status().toString();
  EXPECT_EQ(static_cast<int>(results[0]->reused) + static_cast<int>(results[1]->reused), 1)
      << "one compiled, the other waited and reused its outputs";
  EXPECT_EQ(topLevel(dir_.path()), (std::set<std::string>{"net.onnx", "net_ctx.onnx", "net_vulkan.bin"}));
}

}  // namespace
}  // namespace kiln::testing
