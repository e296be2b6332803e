// Context-data callbacks (onnxruntime's experimental SetEpContextDataWriteFunc / SetEpContextDataReadFunc): a compile
// hands the context binary to the application, which encrypts it with a toy XOR key and keeps it in memory; a
// session gets it back through the read function and runs as the file-based one does. Nothing touches the disk but
// the ctx model; a failing, throwing or lying callback is a clear error and writes nothing. The chunked stream
// function gets the same bytes as consecutive chunks.
#include <gtest/gtest.h>

#include <filesystem>
#include <map>
#include <stdexcept>

#include "epcontext_checks.h"
#include "epcontext_models.h"
#include "gtest_requirements.h"
#include "kiln/compiler.h"
#include "test_models.h"
#include "util/file_io.h"

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

// The chunked stream function (onnxruntime's OrtWriteBufferFunc shape): consecutive chunks of at most 4 MiB, then
// one empty final call; the chunks are exactly the bytes a file compile writes, and they load back.
TEST_F(ContextDataCallbacks, StreamFunctionGetsTheBinaryInChunksThenAFinalCall) {
  // The file compile goes where the streamed one will (the binary's compile record names the source relative to
  // the ctx model's folder), then its files are removed.
  const std::string ctx = (dir_.path() / "m_ctx.onnx").string();
  ModelCompilationOptions toFile(vulkanOptions());
  toFile.setInputModelPath(source_.path).setOutputModelPath(ctx);
  auto written = compileModel(toFile);
  ASSERT_TRUE(written.isOk()) << written.status().toString();
  const auto fileBytes = readFileBytes(written->binaryPath);
  ASSERT_TRUE(fileBytes.isOk()) << fileBytes.status().toString();
  fs::remove(written->binaryPath);
  fs::remove(ctx);

  std::map<std::string, std::vector<std::byte>> store;
  std::vector<std::string> calls;  // "chunk" or "last" per call, with the name
  size_t largest = 0;
  ModelCompilationOptions options(vulkanOptions());
  options.setInputModelPath(source_.path).setOutputModelPath(ctx);
  options.setContextDataStreamFunction([&](const std::string& name, std::span<const std::byte> chunk, bool last) {
    calls.push_back(name + (last ? ":last" : ":chunk"));
    EXPECT_TRUE(!last || chunk.empty());
    largest = std::max(largest, chunk.size());
    auto& stored = store[name];
    stored.insert(stored.end(), chunk.begin(), chunk.end());
    return Status::ok();
  });
  auto compiled = compileModel(options);
  ASSERT_TRUE(compiled.isOk()) << compiled.status().toString();
  EXPECT_FALSE(fs::exists(dir_.path() / "m_vulkan.bin")) << "the binary must not also be written to disk";
  EXPECT_TRUE(compiled->binaryPath.empty());
  ASSERT_GE(calls.size(), 2u);
  EXPECT_EQ(calls.back(), "m_vulkan.bin:last");
  for (size_t i = 0; i + 1 < calls.size(); ++i) EXPECT_EQ(calls[i], "m_vulkan.bin:chunk");
  EXPECT_LE(largest, size_t{4} << 20);
  EXPECT_TRUE(store["m_vulkan.bin"] == fileBytes.value()) << "streamed bytes differ from the file compile's binary";

  SessionOptions loading = vulkanOptions();
  loading.setContextDataReadFunction([&](const std::string& name) -> Result<std::vector<std::byte>> { return store.at(name); });
  auto session = Session::create(ctx, loading);
  ASSERT_TRUE(session.isOk()) << session.status().toString();
  expectNoCompileWork(**session, "session from the streamed binary");

  // A stream function that fails mid-way (or throws) stops the compile, and nothing is written.
  fs::remove(ctx);
  options.setContextDataStreamFunction([](const std::string&, std::span<const std::byte>, bool last) {
    return last ? Status(StatusCode::FAIL, "upload aborted") : Status::ok();
  });
  auto failed = compileModel(options);
  ASSERT_FALSE(failed.isOk());
  EXPECT_NE(failed.status().message().find("upload aborted"), std::string::npos) << failed.status().toString();
  EXPECT_FALSE(fs::exists(ctx));
  options.setContextDataStreamFunction([](const std::string&, std::span<const std::byte>, bool) -> Status {
    throw std::runtime_error("socket closed");
  });
  auto threw = compileModel(options);
  ASSERT_FALSE(threw.isOk());
  EXPECT_NE(threw.status().message().find("socket closed"), std::string::npos) << threw.status().toString();
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
