// Hostile input never crashes the engine: each case a mutation campaign found against the CLI (issue 18), at the
// depth it was fixed: regular files only, graph validation at load, window attributes checked before ONNX shape
// inference, size limits checked where sizes are computed, no recursion whose depth a model controls.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <string>

#include "context_binary/graphs_section.h"
#include "ep/vulkan/device_fusions.h"
#include "kiln/partition_report.h"
#include "kiln/session.h"
#include "kiln/tensor_io.h"
#include "kiln/tensor_size.h"
#include "model_builder.h"
#include "onnx/model_loader.h"
#include "test_models.h"
#include "util/file_io.h"
#include "util/mapped_file.h"

namespace kiln {
namespace {

using testing::ModelBuilder;
using testing::TempDir;

constexpr int64_t kTwoTo40 = int64_t{1} << 40;

std::string serialized(const ModelBuilder& builder) {
  std::string bytes;
  builder.build().SerializeToString(&bytes);
  return bytes;
}

Status loadStatus(const ModelBuilder& builder) {
  const std::string bytes = serialized(builder);
  return onnx_io::loadModelBuffer(std::as_bytes(std::span(bytes.data(), bytes.size()))).status();
}

void expectStatus(const Status& status, StatusCode code, const std::vector<std::string>& fragments) {
  EXPECT_EQ(status.code(), code) << status.toString();
  for (const auto& fragment : fragments) {
    EXPECT_NE(status.message().find(fragment), std::string::npos) << "'" << fragment << "' not in " << status.toString();
  }
}

// ---- regular files only ----

TEST(HostileFiles, AFolderIsNotARegularFileEverywhere) {
  TempDir dir;
  const std::string folder = dir.path().string();
  expectStatus(readFileBytes(folder).status(), StatusCode::INVALID_ARGUMENT, {"not a regular file", "folder"});
  expectStatus(MappedFile::open(folder).status(), StatusCode::INVALID_ARGUMENT, {"not a regular file"});
  expectStatus(Session::create(folder).status(), StatusCode::INVALID_ARGUMENT, {"not a regular file"});
  expectStatus(readNpyFile(folder).status(), StatusCode::INVALID_ARGUMENT, {"not a regular file"});
  EXPECT_EQ(readFileBytes(dir.file("missing.onnx")).status().code(), StatusCode::NO_SUCHFILE);
}

TEST(HostileFiles, AFifoIsRefusedWithoutBlocking) {
  TempDir dir;
  const std::string fifo = dir.file("model.onnx");
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  // Before the fix these opens blocked forever (no writer ever comes); ctest's timeout would fail the test.
  expectStatus(readFileBytes(fifo).status(), StatusCode::INVALID_ARGUMENT, {"not a regular file", "FIFO"});
  expectStatus(MappedFile::open(fifo).status(), StatusCode::INVALID_ARGUMENT, {"not a regular file"});
  expectStatus(Session::create(fifo).status(), StatusCode::INVALID_ARGUMENT, {"not a regular file"});
}

// A ctx model's ep_cache_context naming a FIFO or a folder: named as such (it said "does not exist"), never opened.
// The models are tests/fuzz/corpus/ctx_model's, whose binary names were edited (fuzz_ctx_model's folder layout).
TEST(HostileFiles, ACtxModelBinaryThatIsAFifoOrAFolderIsNamedSo) {
  TempDir dir;
  ASSERT_EQ(::mkfifo(dir.file("fifo.bin").c_str(), 0600), 0);
  std::filesystem::create_directory(dir.path() / "sub");
  const std::filesystem::path corpus = std::filesystem::path(KILN_SOURCE_DIR) / "tests/fuzz/corpus/ctx_model";
  for (const auto& [model, kind] : {std::pair{"path_fifo_ctx.onnx", "FIFO"}, std::pair{"path_folder_ctx.onnx", "folder"}}) {
    std::filesystem::copy_file(corpus / model, dir.path() / model);
    expectStatus(analyzePartitions(dir.file(model)).status(), StatusCode::INVALID_GRAPH,
                 {"ep_cache_context", "not a regular file", kind});
  }
}

// Found by fuzz_context_binary (tests/fuzz/regressions/context_binary): a SPIR-V module of 0 words in a re-sealed
// binary reached memcpy with a null destination (UBSan); it is refused as corrupt.
TEST(HostileFiles, AnEmptySpirvModuleInAContextBinaryIsCorrupt) {
  ctxbin::SpirvTableWriter writer;
  writer.add("empty", {});
  writer.add("fine", {0x07230203u, 0x00010000u, 0u, 1u, 0u});
  expectStatus(ctxbin::decodeSpirvSection(writer.encode()).status(), StatusCode::INVALID_GRAPH,
               {"SPIR-V module 'empty' is empty"});
}

// ---- graph validation at load ----

TEST(HostileGraphs, ANodeReadingItsOwnOutputIsACycle) {
  ModelBuilder m(17);
  m.input("x", {1, 4}).output("s", {1, 4});
  m.node("Add", {"x", "s"}, {"s"}, "loop_add");
  expectStatus(loadStatus(m), StatusCode::INVALID_GRAPH, {"cycle", "loop_add"});
}

TEST(HostileGraphs, TwoProducersOfOneValueNameTheSecond) {
  ModelBuilder m(17);
  m.input("x", {1, 4}).output("y", {1, 4});
  m.node("Relu", {"x"}, {"y"}, "first");
  m.node("Neg", {"x"}, {"y"}, "second");
  expectStatus(loadStatus(m), StatusCode::INVALID_GRAPH, {"'second'", "'first'", "'y'"});
}

TEST(HostileGraphs, ANodeOutputRedefiningAGraphInputOrInitializerIsRefused) {
  ModelBuilder input(17);
  input.input("x", {1, 4}).output("y", {1, 4});
  input.node("Relu", {"x"}, {"y"}, "relu");
  input.node("Neg", {"y"}, {"x"}, "overwrites_input");
  expectStatus(loadStatus(input), StatusCode::INVALID_GRAPH, {"overwrites_input", "'x'", "graph input"});

  ModelBuilder initializer(17);
  initializer.input("x", {1, 4}).output("y", {1, 4}).initializer("b", {4}, {1, 2, 3, 4});
  initializer.node("Add", {"x", "b"}, {"y"}, "add");
  initializer.node("Neg", {"x"}, {"b"}, "overwrites_b");
  expectStatus(loadStatus(initializer), StatusCode::INVALID_GRAPH, {"overwrites_b", "'b'", "initializer"});
}

TEST(HostileGraphs, ARequiredInputNamedEmptyIsRefusedAtLoad) {
  ModelBuilder m(17);
  m.input("x", {1, 1, 8, 8}).output("y");
  testing::attrInts(m.node("Conv", {"x", ""}, {"y"}, "conv"), "kernel_shape", {3, 3});
  expectStatus(loadStatus(m), StatusCode::INVALID_GRAPH, {"'conv'", "required input 1", "is empty"});
}

TEST(HostileGraphs, AnOptionalInputNamedEmptyStaysValid) {
  ModelBuilder m(17);
  m.input("x", {1, 1, 4, 4}).output("y").initializer("w", {1, 1, 1, 1}, {2});
  m.node("Conv", {"x", "w", ""}, {"y"}, "conv");  // B is optional
  EXPECT_TRUE(loadStatus(m).isOk()) << loadStatus(m).toString();
}

// ---- window attributes before ONNX shape inference (libonnx divides by strides: SIGFPE) ----

TEST(HostileAttributes, ZeroStridesAreRefusedBeforeShapeInference) {
  ModelBuilder m(17);
  m.input("x", {1, 1, 4, 4}).output("y");
  auto& pool = m.node("MaxPool", {"x"}, {"y"}, "pool");
  testing::attrInts(pool, "kernel_shape", {2, 2});
  testing::attrInts(pool, "strides", {0, 0});
  expectStatus(loadStatus(m), StatusCode::INVALID_GRAPH, {"'pool'", "strides", "positive"});
}

TEST(HostileAttributes, BadDilationsKernelShapeGroupAndPadsAreRefused) {
  const std::vector<std::pair<std::string, std::vector<int64_t>>> bad = {
      {"dilations", {1, -1}}, {"kernel_shape", {0, 1}}, {"pads", {0, 0, -1, 0}}};
  for (const auto& [name, values] : bad) {
    ModelBuilder m(17);
    m.input("x", {1, 1, 4, 4}).output("y").initializer("w", {1, 1, 1, 1}, {2});
    testing::attrInts(m.node("Conv", {"x", "w"}, {"y"}, "conv"), name, values);
    expectStatus(loadStatus(m), StatusCode::INVALID_GRAPH, {"'conv'", name});
  }
  ModelBuilder group(17);
  group.input("x", {1, 1, 4, 4}).output("y").initializer("w", {1, 1, 1, 1}, {2});
  testing::attrInt(group.node("Conv", {"x", "w"}, {"y"}, "conv"), "group", 0);
  expectStatus(loadStatus(group), StatusCode::INVALID_GRAPH, {"group", "positive"});
}

TEST(HostileAttributes, BadStridesInsideASubgraphAreFound) {
  testing::GraphBuilder body("then");
  body.output("y");
  auto& pool = body.node("MaxPool", {"x"}, {"y"}, "inner_pool");
  testing::attrInts(pool, "kernel_shape", {2, 2});
  testing::attrInts(pool, "strides", {1, 0});
  testing::GraphBuilder other("else");
  other.output("y");
  other.node("Identity", {"x"}, {"y"}, "pass");
  ModelBuilder m(17);
  m.input("c", {}, onnx::TensorProto::BOOL).input("x", {1, 1, 4, 4}).output("y");
  auto& branch = m.node("If", {"c"}, {"y"}, "if");
  testing::attrGraph(branch, "then_branch", body.proto());
  testing::attrGraph(branch, "else_branch", other.proto());
  expectStatus(loadStatus(m), StatusCode::INVALID_GRAPH, {"inner_pool", "strides"});
}

// ---- size limits where sizes are computed ----

TEST(HostileSizes, CheckedTensorBytesNeverOverflows) {
  EXPECT_EQ(checkedTensorBytes(DataType::FLOAT, {2, 3}, kDefaultMaxTensorBytes, "t").value(), 24u);
  EXPECT_EQ(checkedTensorBytes(DataType::FLOAT, {kTwoTo40, 0}, kDefaultMaxTensorBytes, "t").value(), 0u);
  // 2^40 x 2^40 x 4 wraps a 64-bit count: must still be refused.
  expectStatus(checkedTensorBytes(DataType::FLOAT, {kTwoTo40, kTwoTo40}, UINT64_MAX, "input 'x'").status(),
               StatusCode::INVALID_ARGUMENT, {"input 'x'", "1099511627776x1099511627776"});
  expectStatus(checkedTensorBytes(DataType::FLOAT, {kTwoTo40}, kDefaultMaxTensorBytes, "input 'x'").status(),
               StatusCode::INVALID_ARGUMENT, {"1099511627776", "2147483648"});
  expectStatus(checkedTensorBytes(DataType::FLOAT, {-3}, kDefaultMaxTensorBytes, "t").status(),
               StatusCode::INVALID_ARGUMENT, {"negative"});
}

TEST(HostileSizes, MaxTensorBytesIsAValidatedConfigKey) {
  SessionOptions options;
  EXPECT_TRUE(options.addConfigEntry("kiln.max_tensor_bytes", "1024").isOk());
  for (const std::string bad : {"", "-1", "0", "12x", "99999999999999999999999"}) {
    expectStatus(options.addConfigEntry("kiln.max_tensor_bytes", bad), StatusCode::INVALID_ARGUMENT,
                 {"kiln.max_tensor_bytes"});
  }
}

TEST(HostileSizes, ADeclaredInputOverTheLimitIsRefusedAtCreation) {
  ModelBuilder huge(17);
  huge.input("x", {kTwoTo40}).output("y", {kTwoTo40});
  huge.node("Relu", {"x"}, {"y"}, "relu");
  const std::string bytes = serialized(huge);
  const auto span = std::as_bytes(std::span(bytes.data(), bytes.size()));
  expectStatus(Session::create(span).status(), StatusCode::INVALID_GRAPH, {"input 'x'", "1099511627776", "2147483648"});

  ModelBuilder small(17);
  small.input("x", {1, 4}).output("y", {1, 4});
  small.node("Relu", {"x"}, {"y"}, "relu");
  const std::string smallBytes = serialized(small);
  const auto smallSpan = std::as_bytes(std::span(smallBytes.data(), smallBytes.size()));
  EXPECT_TRUE(Session::create(smallSpan).isOk());
  SessionOptions tight;
  ASSERT_TRUE(tight.addConfigEntry("kiln.max_tensor_bytes", "8").isOk());
  expectStatus(Session::create(smallSpan, tight).status(), StatusCode::INVALID_GRAPH, {"1x4", "limit of 8"});
}

// A huge intermediate that inference fixes (a 16x16 image resized by 65536 in each direction: 4 TiB of float) must not
// kill session creation through the CPU EP's memory plan (which reserves a static-shape run's buffers at creation):
// creation succeeds with nothing planned, and the run fails with a status (the allocation's "out of memory").
TEST(HostileSizes, AHugeStaticIntermediateIsNotReservedAtCreation) {
  ModelBuilder huge(13);
  huge.input("x", {1, 1, 16, 16}).output("y", {1, 1, 1, 1});
  huge.initializer("scales", {4}, {1, 1, 65536, 65536});
  huge.node("Resize", {"x", "", "scales"}, {"r"}, "resize");
  huge.node("GlobalMaxPool", {"r"}, {"y"}, "pool");
  const std::string bytes = serialized(huge);
  auto session = Session::create(std::as_bytes(std::span(bytes.data(), bytes.size())));
  ASSERT_TRUE(session.isOk()) << session.status().toString();
  Tensor x(DataType::FLOAT, {1, 1, 16, 16});
  auto run = session.value()->run({{"x", x}});
  ASSERT_FALSE(run.isOk());
  EXPECT_NE(run.status().message().find("out of memory"), std::string::npos) << run.status().toString();
}

std::string npyWithShape(const std::string& shapeText) {
  std::string header = "{'descr': '<f4', 'fortran_order': False, 'shape': " + shapeText + ", }";
  header.append(64 - (10 + header.size() + 1) % 64, ' ');
  header += '\n';
  std::string file("\x93NUMPY\x01\x00", 8);
  file += static_cast<char>(header.size() & 0xff);
  file += static_cast<char>(header.size() >> 8);
  return file + header + std::string(64, '\0');
}

TEST(HostileSizes, NpyShapesAreCheckedAgainstTheFileBeforeAllocating) {
  TempDir dir;
  testing::writeBytes(dir.file("huge.npy"), npyWithShape("(1099511627776,)"));
  expectStatus(readNpyFile(dir.file("huge.npy")).status(), StatusCode::INVALID_ARGUMENT,
               {"huge.npy", "1099511627776", "shorter"});
  testing::writeBytes(dir.file("long.npy"), npyWithShape("(123456789012345678901234567890,)"));
  expectStatus(readNpyFile(dir.file("long.npy")).status(), StatusCode::INVALID_ARGUMENT,
               {"long.npy", "123456789012345678901234567890", "out of range"});
  testing::writeBytes(dir.file("fits.npy"), npyWithShape("(4, 4)"));  // 64 bytes of data: exactly 16 floats
  EXPECT_TRUE(readNpyFile(dir.file("fits.npy")).isOk());
}

// Found by fuzz_npy (tests/fuzz/regressions/npy): a zero dimension after huge ones is an empty tensor, but the
// element count multiplied the huge ones first and overflowed int64 (UBSan, asan preset) before reaching the zero.
TEST(HostileSizes, AZeroDimensionAfterHugeOnesIsAnEmptyTensor) {
  EXPECT_EQ(shapeSize({4000000004584946, 584946, 0, 214188}), 0);
  TempDir dir;
  testing::writeBytes(dir.file("empty.npy"), npyWithShape("(4000000004584946, 584946, 0, 214188)"));
  auto tensor = readNpyFile(dir.file("empty.npy"));
  ASSERT_TRUE(tensor.isOk()) << tensor.status().toString();
  EXPECT_EQ(tensor->numel(), 0);
}

// ---- no recursion whose depth a model controls ----

TEST(HostileDepth, A20000NodeElementwiseChainFusesInBoundedPieces) {
  constexpr int kLength = 20000;
  ir::Graph graph;
  auto floatValue = [&](const std::string& name) {
    ir::ValueInfo info;
    info.name = name;
    info.dtype = DataType::FLOAT;
    info.shape = std::vector<Dimension>{};
    graph.valueInfo[name] = info;
    return info;
  };
  graph.inputs.push_back(floatValue("v0"));
  for (int i = 0; i < kLength; ++i) {
    ir::Node node;
    node.name = "relu" + std::to_string(i);
    node.opType = "Relu";
    node.inputs = {"v" + std::to_string(i)};
    node.outputs = {"v" + std::to_string(i + 1)};
    floatValue(node.outputs[0]);
    graph.nodes.push_back(std::move(node));
  }
  graph.outputs.push_back(floatValue("v" + std::to_string(kLength)));
  vk::FusionStats stats;
  // Before the fix: one recursion level per node, a stack overflow (SIGSEGV) long before 20,000.
  vk::fuseElementwiseChains(graph, {"v" + std::to_string(kLength)}, 17, std::vector<bool>(kLength, true), stats);
  EXPECT_EQ(stats.elementwiseNodesFused, kLength);
  EXPECT_GE(stats.elementwiseChains, kLength / 64);
  for (const auto& node : graph.nodes) {
    EXPECT_EQ(node.opType, "FusedElementwise");
    const std::string ops = node.attributes.at("kiln_fused_ops").s;
    EXPECT_LE(std::count(ops.begin(), ops.end(), '+') + 1, 64) << ops.size();
  }
}

}  // namespace
}  // namespace kiln
