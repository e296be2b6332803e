// ONNX I/O: file and buffer loads, external data with the Contracts' path rules, saving, topological order.
#include <gtest/gtest.h>

#include <cstring>
#include <fstream>

#include "onnx/model_loader.h"
#include "onnx/model_writer.h"
#include "onnx/path_rules.h"
#include "util/file_io.h"
#include "test_models.h"

namespace kiln {
namespace {

using testing::TempDir;

std::string weightBytes() {
  const float values[4] = {1, 2, 3, 4};
  return std::string(reinterpret_cast<const char*>(values), sizeof values);
}

std::string serialized(const onnx::ModelProto& model) {
  std::string bytes;
  model.SerializeToString(&bytes);
  return bytes;
}

TEST(PathRules, AcceptsPlainRelativePaths) {
  TempDir dir;
  auto path = resolveContainedPath(dir.path(), "sub/weights.bin", "external data location");
  ASSERT_TRUE(path.isOk()) << path.status().toString();
  EXPECT_EQ(*path, std::filesystem::weakly_canonical(dir.path() / "sub/weights.bin"));
}

TEST(PathRules, RejectsEmptyAbsoluteDotDotAndSymlinkEscapes) {
  TempDir dir;
  for (const std::string bad : {"", "/etc/passwd", "../x.bin", "a/../../x.bin"}) {
    auto path = resolveContainedPath(dir.path(), bad, "ep_cache_context");
    ASSERT_FALSE(path.isOk()) << bad;
    EXPECT_EQ(path.status().code(), StatusCode::INVALID_GRAPH);
    EXPECT_NE(path.status().message().find("ep_cache_context"), std::string::npos);
  }
  std::filesystem::create_directory_symlink("/tmp", dir.path() / "link");
  auto escaped = resolveContainedPath(dir.path(), "link/x.bin", "external data location");
  ASSERT_FALSE(escaped.isOk());
  EXPECT_NE(escaped.status().message().find("escapes"), std::string::npos);
}

TEST(ModelLoader, MissingFileIsNoSuchFile) {
  auto loaded = onnx_io::loadModelFile("/nonexistent/model.onnx");
  ASSERT_FALSE(loaded.isOk());
  EXPECT_EQ(loaded.status().code(), StatusCode::NO_SUCHFILE);
}

TEST(ModelLoader, GarbageIsInvalidProtobuf) {
  TempDir dir;
  testing::writeBytes(dir.file("bad.onnx"), "\xff\xff\xff\xff not a model");
  auto loaded = onnx_io::loadModelFile(dir.file("bad.onnx"));
  ASSERT_FALSE(loaded.isOk());
  EXPECT_EQ(loaded.status().code(), StatusCode::INVALID_PROTOBUF);
}

TEST(ModelLoader, EmptyFileAndGraphlessModelAreRejected) {
  TempDir dir;
  testing::writeBytes(dir.file("empty.onnx"), "");
  EXPECT_EQ(onnx_io::loadModelFile(dir.file("empty.onnx")).status().code(), StatusCode::INVALID_PROTOBUF);
  onnx::ModelProto graphless;
  graphless.set_ir_version(8);
  testing::writeBytes(dir.file("graphless.onnx"), graphless.SerializeAsString());
  EXPECT_EQ(onnx_io::loadModelFile(dir.file("graphless.onnx")).status().code(), StatusCode::INVALID_GRAPH);
}

TEST(ModelLoader, ExternalDataRelativeToModelFolder) {
  TempDir dir;
  testing::writeBytes(dir.file("weights.bin"), weightBytes());
  testing::writeBytes(dir.file("model.onnx"), serialized(testing::makeExternalAddModel("weights.bin")));
  auto loaded = onnx_io::loadModelFile(dir.file("model.onnx"));
  ASSERT_TRUE(loaded.isOk()) << loaded.status().toString();
  const Tensor& b = loaded->model.graph->initializers.at("B");
  EXPECT_EQ(b.data<float>()[3], 4.f);
}

TEST(ModelLoader, ExternalDataFolderOverrideAppliesToFileLoads) {
  TempDir dir, other;
  testing::writeBytes(other.file("weights.bin"), weightBytes());
  testing::writeBytes(dir.file("model.onnx"), serialized(testing::makeExternalAddModel("weights.bin")));
  EXPECT_EQ(onnx_io::loadModelFile(dir.file("model.onnx")).status().code(), StatusCode::NO_SUCHFILE);
  onnx_io::LoadOptions options;
  options.externalDataFolder = other.path().string();
  EXPECT_TRUE(onnx_io::loadModelFile(dir.file("model.onnx"), options).isOk());
}

TEST(ModelLoader, ExternalDataThatEscapesIsInvalidGraph) {
  TempDir dir;
  testing::writeBytes(dir.file("model.onnx"), serialized(testing::makeExternalAddModel("../weights.bin")));
  auto loaded = onnx_io::loadModelFile(dir.file("model.onnx"));
  ASSERT_FALSE(loaded.isOk());
  EXPECT_EQ(loaded.status().code(), StatusCode::INVALID_GRAPH);
}

TEST(ModelLoader, ExternalDataOutOfRangeIsInvalidGraph) {
  TempDir dir;
  testing::writeBytes(dir.file("weights.bin"), "short");
  testing::writeBytes(dir.file("model.onnx"), serialized(testing::makeExternalAddModel("weights.bin")));
  auto loaded = onnx_io::loadModelFile(dir.file("model.onnx"));
  ASSERT_FALSE(loaded.isOk());
  EXPECT_EQ(loaded.status().code(), StatusCode::INVALID_GRAPH);
}

TEST(ModelLoader, BufferWithExternalDataNeedsAFolder) {
  TempDir dir;
  testing::writeBytes(dir.file("weights.bin"), weightBytes());
  const std::string bytes = serialized(testing::makeExternalAddModel("weights.bin"));
  const auto span = std::as_bytes(std::span(bytes.data(), bytes.size()));
  EXPECT_EQ(onnx_io::loadModelBuffer(span).status().code(), StatusCode::INVALID_ARGUMENT);
  onnx_io::LoadOptions options;
  options.externalDataFolder = dir.path().string();
  EXPECT_TRUE(onnx_io::loadModelBuffer(span, options).isOk());
}

TEST(ModelLoader, UnsortedGraphIsSorted) {
  onnx::ModelProto model = testing::makeAddModel();
  auto* graph = model.mutable_graph();
  auto* relu = graph->add_node();  // Relu(X) -> R after Add(R, B): the Add comes first in file order.
  relu->set_op_type("Relu");
  relu->add_input("X");
  relu->add_output("R");
  graph->mutable_node(0)->set_input(0, "R");
  auto ir = onnx_io::modelFromProto(model);
  ASSERT_TRUE(ir.isOk()) << ir.status().toString();
  EXPECT_EQ(ir->graph->nodes[0].opType, "Relu");
  EXPECT_EQ(ir->graph->nodes[1].opType, "Add");
}

TEST(ModelWriter, FileBufferAndStreamAgree) {
  TempDir dir;
  const onnx::ModelProto model = testing::makeAddModel();
  auto buffer = onnx_io::saveModelBuffer(model);
  ASSERT_TRUE(buffer.isOk());
  std::vector<std::byte> streamed;
  ASSERT_TRUE(onnx_io::saveModelStream(model, [&](std::span<const std::byte> chunk) {
                streamed.insert(streamed.end(), chunk.begin(), chunk.end());
                return Status::ok();
              }).isOk());
  EXPECT_EQ(streamed, *buffer);
  ASSERT_TRUE(onnx_io::saveModelFile(model, dir.file("saved.onnx")).isOk());
  auto reloaded = onnx_io::loadModelFile(dir.file("saved.onnx"));
  ASSERT_TRUE(reloaded.isOk());
  EXPECT_EQ(reloaded->model.graph->nodes.size(), 1u);
}

TEST(ModelWriter, FailedStreamLeavesExistingFileUntouched) {
  TempDir dir;
  testing::writeBytes(dir.file("keep.onnx"), "original");
  Status failed = writeFileAtomically(dir.file("keep.onnx"), [](const auto& write) {
    (void)write(std::as_bytes(std::span("partial", 7)));
    return Status(StatusCode::CANCELLED, "cancelled");
  });
  EXPECT_EQ(failed.code(), StatusCode::CANCELLED);
  std::ifstream in(dir.file("keep.onnx"));
  std::string content((std::istreambuf_iterator<char>(in)), {});
  EXPECT_EQ(content, "original");
  EXPECT_EQ(std::distance(std::filesystem::directory_iterator(dir.path()), {}), 1);  // no temp file left
}

}  // namespace
}  // namespace kiln
