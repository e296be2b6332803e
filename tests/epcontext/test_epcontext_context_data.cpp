// Context-data callbacks (onnxruntime's experimental SetEpContextDataWriteFunc / SetEpContextDataReadFunc): a compile
// hands the context binary to the application, which encrypts it with a toy XOR key and keeps it in memory; a
// session gets it back through the read function and runs as the file-based one does. Nothing touches the disk but
// the ctx model; a failing, throwing or lying callback is a clear error and writes nothing.
#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <stdexcept>

#include "epcontext_checks.h"
#include "epcontext_models.h"
#include "gtest_requirements.h"
#include "kiln/compiler.h"
#include "test_models.h"

namespace kiln::testing {
namespace {

namespace fs = std::filesystem;

constexpr std::byte kKey{0x5a};

std::vector<std::byte> xorred(std::span<const std::byte> bytes) {
  std::vector<std::byte> out(bytes.begin(), bytes.end());
  for (auto& b : out) b ^= kKey;
  return out;
}

class ContextDataCallbacks : public ::testing::Test {
 protected:
  void SetUp() override {
    REQUIRE_VULKAN();
    source_ = writeSourceModel(Topology::kTwoPartitions, dir_.path().string(), "m", 0, false);
  }

  Result<CompileResult> compileInto(const std::string& ctx, ContextDataWriteFunc write) {
    ModelCompilationOptions options(vulkanOptions());
    options.setInputModelPath(source_.path).setOutputModelPath(ctx).setContextDataWriteFunction(std::move(write));
    return compileModel(options);
  }

  TempDir dir_;
  SourceModel source_;
};

TEST_F(ContextDataCallbacks, XorEncryptedBinaryRoundTripsThroughTheCallbacks) {
  std::map<std::string, std::vector<std::byte>> store;
  const std::string ctx = (dir_.path() / "m_ctx.onnx").string();
  auto compiled = compileInto(ctx, [&](const std::string& name, std::span<const std::byte> bytes) {
    store[name] = xorred(bytes);
    return Status::ok();
  });
  ASSERT_TRUE(compiled.isOk()) << compiled.status().toString();
  ASSERT_EQ(store.size(), 1u);
  EXPECT_EQ(store.begin()->first, "m_vulkan.bin");  // the ep_cache_context the ctx model records
  EXPECT_FALSE(fs::exists(dir_.path() / "m_vulkan.bin")) << "the binary must not also be written to disk";
  EXPECT_TRUE(compiled->binaryPath.empty());

  // Without the read function the model names a file that is not there.
  EXPECT_FALSE(Session::create(ctx, vulkanOptions()).isOk());

  SessionOptions options = vulkanOptions();
  std::vector<std::string> asked;
  options.setContextDataReadFunction([&](const std::string& name) -> Result<std::vector<std::byte>> {
    asked.push_back(name);
    auto it = store.find(name);
    if (it == store.end()) return Status(StatusCode::NO_SUCHFILE, "not in the store");
    return xorred(it->second);
  });
  auto session = Session::create(ctx, options);
  ASSERT_TRUE(session.isOk()) << session.status().toString();
  EXPECT_EQ(asked, std::vector<std::string>{"m_vulkan.bin"});
  expectNoCompileWork(**session, "session from the read function");

  auto reference = Session::create(source_.path, vulkanOptions());
  ASSERT_TRUE(reference.isOk()) << reference.status().toString();
  const auto inputs = inputSets(Topology::kTwoPartitions);
  expectSameOutputs(runAll(**reference, inputs), runAll(**session, inputs), "callback-loaded ctx model");
}

TEST_F(ContextDataCallbacks, FailingOrThrowingWriteFunctionWritesNothing) {
  const std::string ctx = (dir_.path() / "m_ctx.onnx").string();
  auto failed = compileInto(ctx, [](const std::string&, std::span<const std::byte>) {
    return Status(StatusCode::FAIL, "store is full");
  });
  ASSERT_FALSE(failed.isOk());
  EXPECT_NE(failed.status().message().find("store is full"), std::string::npos) << failed.status().toString();
  EXPECT_FALSE(fs::exists(ctx));
  auto threw = compileInto(ctx, [](const std::string&, std::span<const std::byte>) -> Status {
    throw std::runtime_error("disk on fire");
  });
  ASSERT_FALSE(threw.isOk());
  EXPECT_NE(threw.status().message().find("disk on fire"), std::string::npos) << threw.status().toString();
  EXPECT_FALSE(fs::exists(ctx));
}

TEST_F(ContextDataCallbacks, ReadFunctionErrorsAndWrongBytesAreRefused) {
  std::map<std::string, std::vector<std::byte>> store;
  const std::string ctx = (dir_.path() / "m_ctx.onnx").string();
  ASSERT_TRUE(compileInto(ctx, [&](const std::string& name, std::span<const std::byte> bytes) {
                store[name] = xorred(bytes);
                return Status::ok();
              }).isOk());
  auto create = [&](ContextDataReadFunc read) {
    SessionOptions options = vulkanOptions();
    options.setContextDataReadFunction(std::move(read));
    auto session = Session::create(ctx, options);
    return session.isOk() ? Status::ok() : session.status();
  };
  Status missing = create([](const std::string&) -> Result<std::vector<std::byte>> {
    return Status(StatusCode::NO_SUCHFILE, "key vault unreachable");
  });
  EXPECT_EQ(missing.code(), StatusCode::INVALID_GRAPH) << missing.toString();
  EXPECT_NE(missing.message().find("key vault unreachable"), std::string::npos) << missing.toString();
  Status threw = create([](const std::string&) -> Result<std::vector<std::byte>> { throw std::runtime_error("boom"); });
  EXPECT_NE(threw.message().find("boom"), std::string::npos) << threw.toString();
  // The wrong key: still encrypted bytes are no context binary.
  Status wrongKey = create([&](const std::string& name) -> Result<std::vector<std::byte>> { return store.at(name); });
  EXPECT_EQ(wrongKey.code(), StatusCode::INVALID_GRAPH) << wrongKey.toString();
}

}  // namespace
}  // namespace kiln::testing
