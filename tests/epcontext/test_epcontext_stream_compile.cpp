// The bar of issue 23, item 4, through the public Compile API: a model with more than 2 GB of external-data
// weights (35 tensors of 64 MiB, lavapipe's largest buffer is 128 MiB) compiles with its context binary
// streamed to a hashing ContextDataStreamFunc, nothing of the binary on disk and at most 256 MB resident: the
// loader leaves the weights in their file (onnx_io::LoadOptions::deferLargeExternalData) and the binary
// streams them from there. The external-data file is sparse (ftruncate, a few bytes written per tensor), so
// it costs no disk either. Its own program: the peak RSS (VmHWM) it measures belongs to this test alone.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/mman.h>
#include <unistd.h>
#include <xxhash.h>

#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "context_binary/format.h"
#include "gtest_requirements.h"
#include "kiln/compiler.h"
#include "kiln/session.h"
#include "onnx/model_loader.h"
#include "onnx/model_writer.h"
#include "session/deferred_weights.h"
#include "test_models.h"
#include "util/file_io.h"
#include "process_status.h"

namespace kiln::testing {
namespace {

namespace fs = std::filesystem;

constexpr int64_t kElements = 16 * 1024 * 1024;  // 64 MiB of floats per weight
constexpr uint64_t kWeightBytes = kElements * 4;

// Y = ((X + W0) + W1) + ... + W{count-1}, X and every Wi float[kElements]; the weights lie back to back in
// the sparse file `data` (beside the model), each with its index written in its first 16 bytes so no two are
// equal. `fileBytes` > 0 cuts the file to that size (the model still claims every range: a short file).
std::string writeAddChainModel(const fs::path& folder, size_t count, uint64_t fileBytes = 0) {
  const fs::path data = folder / "weights.bin";
  const int fd = ::open(data.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  EXPECT_GE(fd, 0);
  EXPECT_EQ(::ftruncate(fd, static_cast<off_t>(fileBytes ? fileBytes : count * kWeightBytes)), 0);
  for (size_t i = 0; i < count; ++i) {
    const float mark[4] = {static_cast<float>(i + 1), 0.5f, -2.0f, 3.0f};
    if (fileBytes && (i + 1) * kWeightBytes > fileBytes) break;
    EXPECT_EQ(::pwrite(fd, mark, sizeof mark, static_cast<off_t>(i * kWeightBytes)),
              static_cast<ssize_t>(sizeof mark));
  }
  ::close(fd);

  onnx::ModelProto model;
  model.set_ir_version(8);
  model.add_opset_import()->set_version(13);
  auto* graph = model.mutable_graph();
  graph->set_name("add_chain");
  auto typed = [](onnx::ValueInfoProto* value, const std::string& name) {
    value->set_name(name);
    auto* tensor = value->mutable_type()->mutable_tensor_type();
    tensor->set_elem_type(onnx::TensorProto::FLOAT);
    tensor->mutable_shape()->add_dim()->set_dim_value(kElements);
  };
  typed(graph->add_input(), "X");
  std::string previous = "X";
  for (size_t i = 0; i < count; ++i) {
    const std::string weight = "W" + std::to_string(i);
    const std::string out = i + 1 == count ? "Y" : "t" + std::to_string(i);
    auto* node = graph->add_node();
    node->set_op_type("Add");
    node->set_name("add" + std::to_string(i));
    node->add_input(previous);
    node->add_input(weight);
    node->add_output(out);
    previous = out;
    auto* w = graph->add_initializer();
    w->set_name(weight);
    w->set_data_type(onnx::TensorProto::FLOAT);
    w->add_dims(kElements);
    w->set_data_location(onnx::TensorProto::EXTERNAL);
    for (const auto& [key, value] : {std::pair<std::string, std::string>{"location", "weights.bin"},
                                     {"offset", std::to_string(i * kWeightBytes)},
                                     {"length", std::to_string(kWeightBytes)}}) {
      auto* entry = w->add_external_data();
      entry->set_key(key);
      entry->set_value(value);
    }
  }
  typed(graph->add_output(), "Y");
  const std::string path = (folder / "chain.onnx").string();
  EXPECT_TRUE(onnx_io::saveModelFile(model, path).isOk());
  return path;
}

// A ContextDataStreamFunc that keeps nothing: it hashes the whole stream, parses header and section table
// from its first bytes and hashes each section's bytes as they pass, to compare with the hashes the table
// records.
class HashingSink {
 public:
  Status take(std::span<const std::byte> chunk, bool last) {
    if (last) {
      finished_ = true;
      return Status::ok();
    }
    XXH3_64bits_update(whole_.get(), chunk.data(), chunk.size());
    largestChunk_ = std::max(largestChunk_, chunk.size());
    if (!parsed_) {
      const size_t take = std::min(chunk.size(), kHeadBytes - head_.size());
      head_.insert(head_.end(), chunk.begin(), chunk.begin() + static_cast<ptrdiff_t>(take));
      if (head_.size() == kHeadBytes) {
        KILN_RETURN_IF_ERROR(parseHead());
        feedSections(0, head_);
      }
      if (parsed_ && take < chunk.size()) feedSections(at_ + take, chunk.subspan(take));
    } else {
      feedSections(at_, chunk);
    }
    at_ += chunk.size();
    return Status::ok();
  }

  uint64_t streamedBytes() const { return at_; }
  bool finished() const { return finished_; }
  size_t largestChunk() const { return largestChunk_; }
  const ctxbin::ParsedHeader& header() const { return header_; }
  uint64_t wholeHash() const { return XXH3_64bits_digest(whole_.get()); }
  uint64_t sectionHash(size_t i) const { return XXH3_64bits_digest(sections_[i].state.get()); }
  uint64_t sectionBytesSeen(size_t i) const { return sections_[i].seen; }

 private:
  static constexpr size_t kHeadBytes = 64 * 1024;  // header and section table fit many times over

  // ctxbin::parseHeaderStructure checks the head against the file size it records: the head is placed at the
  // start of an untouched anonymous mapping of that size (no memory is committed for the rest).
  Status parseHead() {
    uint64_t fileSize = 0;
    std::memcpy(&fileSize, head_.data() + kFileSizeOffset, sizeof fileSize);
    if (fileSize < head_.size())
      return Status(StatusCode::FAIL, "the recorded file size is smaller than the head");
    void* view =
        ::mmap(nullptr, fileSize, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (view == MAP_FAILED) return Status(StatusCode::FAIL, "mmap failed");
    std::memcpy(view, head_.data(), head_.size());
    auto parsed = ctxbin::parseHeaderStructure(std::span(static_cast<const std::byte*>(view), fileSize));
    ::munmap(view, fileSize);
    KILN_RETURN_IF_ERROR(parsed.status());
    header_ = std::move(parsed).value();
    for (const auto& s : header_.sections) {
      Section section{s.offset, s.size, {XXH3_createState(), &XXH3_freeState}, 0};
      XXH3_64bits_reset(section.state.get());
      sections_.push_back(std::move(section));
    }
    parsed_ = true;
    return Status::ok();
  }

  void feedSections(uint64_t at, std::span<const std::byte> bytes) {
    for (auto& s : sections_) {
      const uint64_t begin = std::max(at, s.offset), end = std::min(at + bytes.size(), s.offset + s.size);
      if (begin >= end) continue;
      XXH3_64bits_update(s.state.get(), bytes.data() + (begin - at), end - begin);
      s.seen += end - begin;
    }
  }

  static constexpr size_t kFileSizeOffset =
      ctxbin::kSectionCountOffset + 16;  // count, reserved, table offset
  struct Section {
    uint64_t offset, size;
    std::unique_ptr<XXH3_state_t, decltype(&XXH3_freeState)> state;
    uint64_t seen;
  };
  std::unique_ptr<XXH3_state_t, decltype(&XXH3_freeState)> whole_{[] {
                                                                    XXH3_state_t* state = XXH3_createState();
                                                                    XXH3_64bits_reset(state);
                                                                    return state;
                                                                  }(),
                                                                  &XXH3_freeState};
  std::vector<std::byte> head_;
  bool parsed_ = false, finished_ = false;
  uint64_t at_ = 0;
  size_t largestChunk_ = 0;
  ctxbin::ParsedHeader header_;
  std::vector<Section> sections_;
};

ModelCompilationOptions streamingOptions(const std::string& model, const fs::path& folder,
                                         HashingSink& sink) {
  ModelCompilationOptions options(vulkanOptions());
  options.setInputModelPath(model).setOutputModelPath((folder / "chain_ctx.onnx").string());
  options.setContextDataStreamFunction([&sink](const std::string&, std::span<const std::byte> chunk,
                                               bool last) { return sink.take(chunk, last); });
  return options;
}

TEST(ContextDataStreaming, MoreThanTwoGigabytesOfWeightsCompileThroughAHashingStreamWithBoundedMemory) {
  REQUIRE_VULKAN();
  constexpr size_t kWeights = 35;  // 2240 MiB
  TempDir dir;
  const std::string model = writeAddChainModel(dir.path(), kWeights);

  // Peak RSS from here on: "5" resets VmHWM to the current RSS (Linux 4.0+).
  { std::ofstream("/proc/self/clear_refs") << "5"; }
  const uint64_t baselineKb = procStatusKb("VmRSS");
  const auto started = std::chrono::steady_clock::now();
  HashingSink sink;
  auto compiled = compileModel(streamingOptions(model, dir.path(), sink));
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  const uint64_t peakKb = procStatusKb("VmHWM");
  ASSERT_TRUE(compiled.isOk()) << compiled.status().toString();

  EXPECT_EQ(compiled->epContextNodes, 1);
  EXPECT_TRUE(sink.finished());
  EXPECT_GT(sink.streamedBytes(), uint64_t{2} << 30);
  EXPECT_EQ(sink.streamedBytes(), sink.header().header.fileSize);
  EXPECT_LE(sink.largestChunk(), size_t{4} << 20);
  uint64_t weightBytes = 0;
  const auto& sections = sink.header().sections;
  for (size_t i = 0; i < sections.size(); ++i) {
    const auto& s = sections[i];
    if (s.kind == ctxbin::SectionKind::WEIGHTS) weightBytes = s.size;
    EXPECT_EQ(sink.sectionBytesSeen(i), s.size) << ctxbin::sectionKindName(s.kind);
    EXPECT_EQ(sink.sectionHash(i), s.hash) << ctxbin::sectionKindName(s.kind) << " section";
  }
  EXPECT_GE(weightBytes, kWeights * kWeightBytes);
  std::set<std::string> files;  // the binary never reached the disk
  for (const auto& entry : fs::directory_iterator(dir.path())) files.insert(entry.path().filename().string());
  EXPECT_EQ(files, (std::set<std::string>{"chain.onnx", "chain_ctx.onnx", "weights.bin"}));
  std::printf(
      "compiled a %llu-byte context binary (%llu bytes of weights) through the stream in %.1f s; "
      "peak RSS %llu MiB (baseline %llu MiB)\n",
      static_cast<unsigned long long>(sink.streamedBytes()), static_cast<unsigned long long>(weightBytes),
      seconds, static_cast<unsigned long long>(peakKb / 1024),
      static_cast<unsigned long long>(baselineKb / 1024));
  EXPECT_LE(peakKb, 256'000'000u / 1024)
      << "peak RSS " << peakKb << " kB (256 MB allowed), baseline " << baselineKb << " kB";
}

// Deferred weights change nothing a compile produces: a model whose 1 MiB external weights go each way — Wa,
// Wb read by Add and Mul as they are (left in the file, streamed into the binary), Wm read by MatMul (read at
// compile), Wd a double weight whose Add falls back to the CPU EP (read after partitioning, kept in the ctx
// model) — compiles through the Compile API to a binary whose GRAPHS, SPIRV and WEIGHTS sections equal those
// of the session-option flow (which loads every weight), and its ctx model runs as the source model does.
TEST(ContextDataStreaming, DeferredWeightsCompileToTheSameBinaryAndRunAsTheSource) {
  REQUIRE_VULKAN();
  TempDir dir;
  constexpr int64_t kFloats = 262144, kDoubles = 131072, kSide = 512;  // 1 MiB each
  std::string data;
  onnx::ModelProto model;
  model.set_ir_version(8);
  model.add_opset_import()->set_version(13);
  auto* graph = model.mutable_graph();
  graph->set_name("deferred");
  auto external = [&](const std::string& name, onnx::TensorProto::DataType type, std::vector<int64_t> dims,
                      const std::string& bytes) {
    auto* w = graph->add_initializer();
    w->set_name(name);
    w->set_data_type(type);
    for (int64_t d : dims) w->add_dims(d);
    w->set_data_location(onnx::TensorProto::EXTERNAL);
    for (const auto& [key, value] : {std::pair<std::string, std::string>{"location", "weights.bin"},
                                     {"offset", std::to_string(data.size())},
                                     {"length", std::to_string(bytes.size())}}) {
      auto* entry = w->add_external_data();
      entry->set_key(key);
      entry->set_value(value);
    }
    data += bytes;
  };
  auto floats = [](int64_t count, float scale) {
    std::vector<float> v(static_cast<size_t>(count));
    for (size_t i = 0; i < v.size(); ++i) v[i] = scale * static_cast<float>((i * 37) % 101) / 101.0f - 0.5f;
    return std::string(reinterpret_cast<const char*>(v.data()), v.size() * sizeof(float));
  };
  std::vector<double> doubles(static_cast<size_t>(kDoubles));
  for (size_t i = 0; i < doubles.size(); ++i) doubles[i] = static_cast<double>(i % 13) * 0.25;
  external("Wa", onnx::TensorProto::FLOAT, {kFloats}, floats(kFloats, 1.0f));
  external("Wb", onnx::TensorProto::FLOAT, {kFloats}, floats(kFloats, 2.0f));
  external("Wm", onnx::TensorProto::FLOAT, {kSide, kSide}, floats(kSide * kSide, 0.1f));
  external("Wd", onnx::TensorProto::DOUBLE, {kDoubles},
           std::string(reinterpret_cast<const char*>(doubles.data()), doubles.size() * sizeof(double)));
  writeBytes((dir.path() / "weights.bin").string(), data);
  auto node = [&](const std::string& op, std::vector<std::string> inputs, const std::string& output) {
    auto* n = graph->add_node();
    n->set_op_type(op);
    n->set_name(output);
    for (const auto& in : inputs) n->add_input(in);
    n->add_output(output);
  };
  node("Add", {"X", "Wa"}, "a");
  node("Mul", {"a", "Wb"}, "Y");
  node("MatMul", {"M", "Wm"}, "Z");
  node("Add", {"D", "Wd"}, "E");
  auto typed = [](onnx::ValueInfoProto* value, const std::string& name, int type, std::vector<int64_t> dims) {
    value->set_name(name);
    auto* tensor = value->mutable_type()->mutable_tensor_type();
    tensor->set_elem_type(type);
    for (int64_t d : dims) tensor->mutable_shape()->add_dim()->set_dim_value(d);
  };
  typed(graph->add_input(), "X", onnx::TensorProto::FLOAT, {kFloats});
  typed(graph->add_input(), "M", onnx::TensorProto::FLOAT, {4, kSide});
  typed(graph->add_input(), "D", onnx::TensorProto::DOUBLE, {kDoubles});
  typed(graph->add_output(), "Y", onnx::TensorProto::FLOAT, {kFloats});
  typed(graph->add_output(), "Z", onnx::TensorProto::FLOAT, {4, kSide});
  typed(graph->add_output(), "E", onnx::TensorProto::DOUBLE, {kDoubles});
  const std::string source = (dir.path() / "deferred.onnx").string();
  ASSERT_TRUE(onnx_io::saveModelFile(model, source).isOk());

  // What the compile defers: every 1 MiB weight at load; Wm is read before the optimizer (MatMul), the others
  // not.
  onnx_io::LoadOptions deferring;
  deferring.deferLargeExternalData = true;
  auto loadedSource = onnx_io::loadModelFile(source, deferring);
  ASSERT_TRUE(loadedSource.isOk()) << loadedSource.status().toString();
  EXPECT_EQ(loadedSource->deferred, (std::set<std::string>{"Wa", "Wb", "Wd", "Wm"}));
  ir::Graph& sourceGraph = *loadedSource->model.graph;
  ASSERT_TRUE(loadDeferredWeightsReadAtCompile(sourceGraph, loadedSource->externalInitializers).isOk());
  for (const char* name : {"Wa", "Wb", "Wd"})
    EXPECT_TRUE(onnx_io::isDeferred(sourceGraph.initializers.at(name))) << name;
  EXPECT_FALSE(onnx_io::isDeferred(sourceGraph.initializers.at("Wm")));

  // The Compile API (deferring) and the session-option flow (loading every weight).
  const std::string apiCtx = (dir.path() / "api_ctx.onnx").string();
  ModelCompilationOptions options(vulkanOptions());
  options.setInputModelPath(source).setOutputModelPath(apiCtx);
  auto compiled = compileModel(options);
  ASSERT_TRUE(compiled.isOk()) << compiled.status().toString();
  const std::string flowCtx = (dir.path() / "flow_ctx.onnx").string();
  SessionOptions flow = vulkanOptions();
  ASSERT_TRUE(flow.addConfigEntry("ep.context_enable", "1").isOk());
  ASSERT_TRUE(flow.addConfigEntry("ep.context_file_path", flowCtx.c_str()).isOk());
  auto generated = Session::create(source, flow);
  ASSERT_TRUE(generated.isOk()) << generated.status().toString();

  auto ctxBytes = readFileBytes(apiCtx);
  ASSERT_TRUE(ctxBytes.isOk());
  onnx::ModelProto ctxModel;
  ASSERT_TRUE(ctxModel.ParseFromArray(ctxBytes->data(), static_cast<int>(ctxBytes->size())));
  std::set<std::string>
      kept;  // the CPU-fallback Add's weight, read after partitioning, stays in the ctx model
  for (const auto& init : ctxModel.graph().initializer()) kept.insert(init.name());
  EXPECT_EQ(kept, std::set<std::string>{"Wd"});

  auto sectionsOf = [](const std::string& path) {
    std::map<ctxbin::SectionKind, uint64_t> hashes;
    auto bytes = readFileBytes(path);
    EXPECT_TRUE(bytes.isOk()) << path;
    if (!bytes.isOk()) return hashes;
    auto parsed = ctxbin::parseHeader(*bytes);
    EXPECT_TRUE(parsed.isOk()) << parsed.status().toString();
    if (parsed.isOk()) {
      for (const auto& s : parsed->sections) hashes[s.kind] = s.hash;
    }
    return hashes;
  };
  auto api = sectionsOf(compiled->binaryPath);
  auto viaFlow = sectionsOf((dir.path() / "flow_vulkan.bin").string());
  for (auto kind : {ctxbin::SectionKind::GRAPHS, ctxbin::SectionKind::SPIRV, ctxbin::SectionKind::WEIGHTS}) {
    ASSERT_TRUE(api.count(kind) && viaFlow.count(kind)) << ctxbin::sectionKindName(kind);
    EXPECT_EQ(api[kind], viaFlow[kind]) << ctxbin::sectionKindName(kind) << " section differs";
  }

  Tensor x(DataType::FLOAT, {kFloats}), m(DataType::FLOAT, {4, kSide}), d(DataType::DOUBLE, {kDoubles});
  for (int64_t i = 0; i < kFloats; ++i) x.data<float>()[i] = static_cast<float>(i % 7) - 3.0f;
  for (int64_t i = 0; i < 4 * kSide; ++i) m.data<float>()[i] = static_cast<float>(i % 5) * 0.5f;
  for (int64_t i = 0; i < kDoubles; ++i) d.data<double>()[i] = static_cast<double>(i);
  const std::vector<NamedTensor> inputs = {{"X", x}, {"M", m}, {"D", d}};
  auto reference = Session::create(source, vulkanOptions());
  ASSERT_TRUE(reference.isOk()) << reference.status().toString();
  auto expected = (*reference)->run(inputs);
  ASSERT_TRUE(expected.isOk()) << expected.status().toString();
  auto loaded = Session::create(apiCtx, vulkanOptions());
  ASSERT_TRUE(loaded.isOk()) << loaded.status().toString();
  auto actual = (*loaded)->run(inputs);
  ASSERT_TRUE(actual.isOk()) << actual.status().toString();
  ASSERT_EQ(actual->size(), expected->size());
  for (size_t i = 0; i < actual->size(); ++i) {
    const Tensor& a = (*actual)[i].tensor;
    const Tensor& e = (*expected)[i].tensor;
    ASSERT_EQ(a.byteSize(), e.byteSize()) << (*actual)[i].name;
    EXPECT_EQ(std::memcmp(a.rawData(), e.rawData(), a.byteSize()), 0) << (*actual)[i].name << " differs";
  }
}

// A weight's range runs past the end of its external-data file: INVALID_GRAPH from the loader, and the stream
// function never sees a byte.
TEST(ContextDataStreaming, ExternalDataShorterThanTheModelSaysFailsBeforeAnyByteIsStreamed) {
  REQUIRE_VULKAN();
  TempDir dir;
  const std::string model =
      writeAddChainModel(dir.path(), 3, 2 * kWeightBytes + 4096);  // the third is cut short
  HashingSink sink;
  auto compiled = compileModel(streamingOptions(model, dir.path(), sink));
  ASSERT_FALSE(compiled.isOk());
  EXPECT_EQ(compiled.status().code(), StatusCode::INVALID_GRAPH) << compiled.status().toString();
  EXPECT_NE(compiled.status().message().find("lies outside"), std::string::npos)
      << compiled.status().toString();
  EXPECT_EQ(sink.streamedBytes(), 0u);
  EXPECT_FALSE(sink.finished());
  EXPECT_FALSE(fs::exists(dir.path() / "chain_ctx.onnx"));
}

}  // namespace
}  // namespace kiln::testing
