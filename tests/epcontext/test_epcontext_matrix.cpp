// ONNX Runtime's EPContext generation matrix (reference 2.5), walked pairwise: flow (session options / Compile
// API) × input (path / bytes) × output (path / default / buffer / write function) × embed mode × partitions (one;
// two around a CPU-fallback node; inside If bodies) × initializer location (embedded / file + threshold /
// callback to a new file / callback keeping the source's external file) × flags × sharing (off / a 2-model group)
// × node-name prefix × source weights (inline / external). Every pair of values that some valid case can hold is
// held by at least one case. Each case checks the files written, the ctx model read back with onnx protobuf, and
// sessions reloaded from path and from bytes against a session on the source model.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>

#include "epcontext_checks.h"
#include "epcontext_models.h"
#include "kiln/compiler.h"
#include "pairwise.h"
#include "test_models.h"
#include "gtest_requirements.h"

namespace kiln::testing {
namespace {

namespace fs = std::filesystem;

enum class Output { kPath, kDefault, kBuffer, kStream };
enum class Init { kEmbedded, kFile, kCallbackFile, kKeepOriginal };
enum class Flag { kNone, kErrorIfNoNodes, kErrorIfExists };

// Axis order and sizes of AxisValues.
enum Axis { kFlow, kInput, kOutput, kEmbed, kTopology, kInit, kFlags, kShare, kPrefix, kSourceData, kAxisCount };
const std::vector<int> kAxisSizes = {2, 2, 4, 2, 3, 4, 3, 2, 2, 2};

struct Case {
  bool api = false;
  bool bytes = false;
  Output output = Output::kPath;
  int embed = 0;
  Topology topology = Topology::kOnePartition;
  Init init = Init::kEmbedded;
  Flag flag = Flag::kNone;
  bool share = false;
  bool prefix = false;
  bool externalSource = false;

  static Case from(const AxisValues& v) {
    Case c;
    c.api = v[kFlow] == 1;
    c.bytes = v[kInput] == 1;
    c.output = static_cast<Output>(v[kOutput]);
    c.embed = v[kEmbed];
    c.topology = static_cast<Topology>(v[kTopology]);
    c.init = static_cast<Init>(v[kInit]);
    c.flag = static_cast<Flag>(v[kFlags]);
    c.share = v[kShare] == 1;
    c.prefix = v[kPrefix] == 1;
    c.externalSource = v[kSourceData] == 1;
    return c;
  }

  std::string name() const {
    static const char* outputs[] = {"path", "default", "buffer", "stream"};
    static const char* inits[] = {"embedded", "file", "callback", "keep"};
    static const char* flags[] = {"noflag", "errnonodes", "errexists"};
    return std::string(api ? "api" : "so") + "_" + (bytes ? "bytes" : "file") + "_" + outputs[static_cast<int>(output)] +
           "_e" + std::to_string(embed) + "_" + topologyName(topology) + "_" + inits[static_cast<int>(init)] + "_" +
           flags[static_cast<int>(flag)] + "_" + (share ? "share" : "solo") + "_" + (prefix ? "prefix" : "noprefix") +
           "_" + (externalSource ? "extsrc" : "inlinesrc");
  }

  bool inMemoryOutput() const { return output == Output::kBuffer || output == Output::kStream; }
  int models() const { return share ? 2 : 1; }
  // Compile API outputs in memory name the folder of the files around them with setEpContextBinaryInformation when
  // the input is bytes (required for a binary; else the folder is the working directory) or the output a write
  // function (chosen; a buffer from a path input uses the source's folder).
  bool binaryInformation() const { return api && inMemoryOutput() && (bytes || output == Output::kStream); }
};

// The combinations the engine can do at all; the others are error cases (test_epcontext_errors.cpp).
bool validCase(const AxisValues& v) {
  const Case c = Case::from(v);
  if (!c.api && (c.inMemoryOutput() || c.init == Init::kCallbackFile || c.init == Init::kKeepOriginal)) return false;
  if (!c.api && c.flag != Flag::kNone) return false;  // flags are the Compile API's
  if (c.bytes && c.output == Output::kDefault) return false;  // E4, E5
  if (c.init == Init::kKeepOriginal && !c.externalSource) return false;
  if (c.share) {
    if (c.embed == 1) return false;  // E17
    if (!c.api && !c.prefix) return false;  // E20: the two models' graphs have the same names
    if (c.api && (c.bytes || c.inMemoryOutput())) return false;  // compileModelsSharingContext takes model paths
    if (c.api && c.output == Output::kPath && c.init == Init::kKeepOriginal) return false;  // out/ is not the source folder
  }
  return true;
}

const std::vector<AxisValues>& matrixCases() {
  static const std::vector<AxisValues> cases = pairwiseCases(kAxisSizes, validCase);
  return cases;
}

// Where a case's files go, relative to the test folder.
struct Layout {
  const Case& c;
  std::string sourceName(int i) const { return i == 0 ? "m" : "m2"; }
  std::string ctxModel(int i) const {  // "" for in-memory outputs
    if (c.inMemoryOutput()) return {};
    if (c.output == Output::kDefault) return sourceName(i) + "_ctx.onnx";
    if (c.share && c.api) return "out/" + sourceName(i) + "_ctx.onnx";
    return i == 0 ? "custom_ctx.onnx" : "custom2_ctx.onnx";
  }
  std::string folder(int i) const { return fs::path(ctxModel(i)).parent_path().string(); }
  std::string binary() const {  // embed mode 0
    if (c.binaryInformation()) return "mem_vulkan.bin";
    if (c.inMemoryOutput()) return "m_vulkan.bin";
    return defaultContextBinaryPath(ctxModel(0));
  }
  std::string externalFile(int i) const {
    const fs::path folder(this->folder(i));
    if (c.init == Init::kFile) return (folder / "ext.bin").string();
    if (c.init == Init::kCallbackFile) return (folder / "cb.bin").string();
    return {};
  }
  // Where a session from bytes finds relative files: ep.context_file_path (for in-memory outputs the file the test
  // saves the buffer to, the model name given to setEpContextBinaryInformation when there is one).
  std::string anchor(int i) const {
    if (!c.inMemoryOutput()) return ctxModel(i);
    return c.binaryInformation() ? "mem.onnx" : "saved_ctx.onnx";
  }
  std::string prefix(int i) const {
    if (c.share) return c.prefix ? (i == 0 ? "pa_" : "pb_") : (c.api ? sourceName(i) + "_" : "");
    return c.prefix ? "p_" : "";
  }

  std::set<std::string> expectedFiles() const {
    std::set<std::string> files;
    for (int i = 0; i < c.models(); ++i) {
      if (!ctxModel(i).empty()) files.insert(ctxModel(i));
      if (!externalFile(i).empty()) files.insert(externalFile(i));
    }
    if (c.embed == 0) files.insert(binary());
    return files;
  }

  std::map<std::string, std::string> initializerLocations(int i) const {
    const bool inMain = c.topology != Topology::kIfBody;  // "lens" lives in the then-branch of the If model
    switch (c.init) {
      case Init::kEmbedded: return {{"M", ""}, {"lens", ""}};
      case Init::kFile: return {{"M", "ext.bin"}, {"lens", c.api ? "" : "ext.bin"}};  // API threshold 64, ORT's 0
      case Init::kCallbackFile: return {{"M", "cb.bin"}, {"lens", ""}};
      case Init::kKeepOriginal: {
        const std::string original = sourceName(i) + "_weights.bin";
        return {{"M", original}, {"lens", inMain ? original : ""}};
      }
    }
    return {};
  }
};

struct Member {
  SourceModel source;
  std::vector<std::byte> sourceBytes;
  std::vector<std::vector<NamedTensor>> expected;
  std::vector<std::byte> ctxBytes;  // the output model (from its file or the buffer)
};

class EpContextMatrix : public ::testing::TestWithParam<AxisValues> {
 protected:
  void SetUp() override {
    REQUIRE_VULKAN();
    c_ = Case::from(GetParam());
    root_ = dir_.path();
    for (int i = 0; i < c_.models(); ++i) {
      Member m;
      m.source = writeSourceModel(c_.topology, root_.string(), layout().sourceName(i), i, c_.externalSource);
      m.sourceBytes = readBytes(m.source.path);
      auto reference = Session::create(m.source.path, vulkanOptions());
      ASSERT_TRUE(reference.isOk()) << reference.status().toString();
      m.expected = runAll(**reference, inputSets(c_.topology));
      ASSERT_FALSE(m.expected.empty());
      members_.push_back(std::move(m));
    }
  }

  Layout layout() const { return Layout{c_}; }
  std::string at(const std::string& relative) const { return (root_ / relative).string(); }

  // Options a model from bytes needs for its external initializers.
  SessionOptions sourceOptions(SessionOptions options) const {
    if (c_.bytes && c_.externalSource) {
      options = withEntries(std::move(options), {{"session.model_external_initializers_file_folder_path", root_.string()}});
    }
    return options;
  }

  void compileWithSessionOptions();
  void compileWithApi();
  InitializerLocationFunc locationFunc();
  void checkCtxModels();
  void reload();

  Case c_;
  TempDir dir_;
  fs::path root_;
  std::vector<Member> members_;
  std::set<std::string> sourceFiles_;
  std::map<std::string, int> locationCalls_;  // initializer → times the location callback saw it
  std::map<std::string, bool> locationOriginals_;
  std::vector<std::string> apiFilesWritten_;
};

void EpContextMatrix::compileWithSessionOptions() {
  for (int i = 0; i < c_.models(); ++i) {
    SessionOptions options = withEntries(vulkanOptions(), {{"ep.context_enable", "1"},
                                                           {"ep.context_embed_mode", std::to_string(c_.embed)}});
    if (c_.output == Output::kPath) options = withEntries(options, {{"ep.context_file_path", at(layout().ctxModel(i))}});
    if (!layout().prefix(i).empty()) options = withEntries(options, {{"ep.context_node_name_prefix", layout().prefix(i)}});
    if (c_.init == Init::kFile) {
      options = withEntries(options, {{"ep.context_model_external_initializers_file_name", "ext.bin"}});
    }
    if (c_.share) {
      options = withEntries(options, {{"ep.share_ep_contexts", "1"}});
      if (i + 1 == c_.models()) options = withEntries(options, {{"ep.stop_share_ep_contexts", "1"}});
    }
    options = sourceOptions(options);
    Member& m = members_[static_cast<size_t>(i)];
    auto session = c_.bytes ? Session::create(std::span<const std::byte>(m.sourceBytes), options)
                            : Session::create(m.source.path, options);
    ASSERT_TRUE(session.isOk()) << session.status().toString();
    expectSameOutputs(m.expected, runAll(**session, inputSets(c_.topology)), "the generating session");
    if (c_.share && i + 1 < c_.models()) {
      EXPECT_EQ(listFiles(root_), sourceFiles_) << "a sharing group writes its files with its last session only";
    }
  }
}

InitializerLocationFunc EpContextMatrix::locationFunc() {
  const Init init = c_.init;
  return [this, init](const std::string& name, const Tensor& value, const ExternalInitializerInfo* original) {
    ++locationCalls_[name];
    locationOriginals_[name] = original != nullptr;
    if (init == Init::kKeepOriginal) return original ? InitializerLocation::keepOriginal() : InitializerLocation::embed();
    return value.byteSize() >= 64 ? InitializerLocation::inFile("cb.bin") : InitializerLocation::embed();
  };
}

void EpContextMatrix::compileWithApi() {
  ModelCompilationOptions options(sourceOptions(vulkanOptions()));
  options.setEpContextEmbedMode(c_.embed == 1);
  options.setFlags(c_.flag == Flag::kErrorIfNoNodes ? CompileFlags::ERROR_IF_NO_NODES_COMPILED
                   : c_.flag == Flag::kErrorIfExists ? CompileFlags::ERROR_IF_OUTPUT_FILE_EXISTS
                                                     : CompileFlags::NONE);
  if (c_.init == Init::kFile) options.setOutputModelExternalInitializersFile("ext.bin", 64);
  if (c_.init == Init::kCallbackFile || c_.init == Init::kKeepOriginal) {
    options.setOutputModelGetInitializerLocationFunc(locationFunc());
  }
  std::vector<CompileResult> results;
  if (c_.share) {
    std::vector<std::string> prefixes;
    if (c_.prefix) prefixes = {layout().prefix(0), layout().prefix(1)};
    auto compiled = compileModelsSharingContext({members_[0].source.path, members_[1].source.path}, options, prefixes,
                                                c_.output == Output::kPath ? at("out") : "");
    ASSERT_TRUE(compiled.isOk()) << compiled.status().toString();
    results = std::move(compiled).value();
    ASSERT_EQ(results.size(), 2u);
  } else {
    Member& m = members_[0];
    if (c_.bytes) options.setInputModelFromBuffer(m.sourceBytes);
    else options.setInputModelPath(m.source.path);
    // The prefix through the setter or through the session option the Compile API also reads.
    if (c_.prefix && c_.embed == 1) options.setNodeNamePrefix(layout().prefix(0));
    if (c_.prefix && c_.embed == 0) options.sessionOptions() = withEntries(options.sessionOptions(), {{"ep.context_node_name_prefix", layout().prefix(0)}});
    if (c_.binaryInformation()) options.setEpContextBinaryInformation(root_.string(), "mem.onnx");
    size_t chunks = 0;
    switch (c_.output) {
      case Output::kPath: options.setOutputModelPath(at(layout().ctxModel(0))); break;
      case Output::kDefault: break;
      case Output::kBuffer: options.setOutputModelBuffer(&m.ctxBytes); break;
      case Output::kStream:
        options.setOutputModelWriteFunc([&](std::span<const std::byte> chunk) {
          EXPECT_LE(chunk.size(), 64u * 1024u);
          ++chunks;
          m.ctxBytes.insert(m.ctxBytes.end(), chunk.begin(), chunk.end());
          return Status::ok();
        });
        break;
    }
    auto compiled = compileModel(options);
    ASSERT_TRUE(compiled.isOk()) << compiled.status().toString();
    results.push_back(std::move(compiled).value());
    if (c_.output == Output::kStream) { EXPECT_EQ(chunks, (m.ctxBytes.size() + 65535) / 65536); }
    if (c_.inMemoryOutput()) { EXPECT_FALSE(m.ctxBytes.empty()); }
  }
  for (int i = 0; i < c_.models(); ++i) {
    const CompileResult& result = results[static_cast<size_t>(i)];
    EXPECT_EQ(result.epContextNodes, expectedPartitions(c_.topology));
    EXPECT_EQ(relativeTo(root_, result.outputModelPath), layout().ctxModel(i));
    EXPECT_EQ(result.binaryPath.empty() ? "" : relativeTo(root_, result.binaryPath), c_.embed == 0 ? layout().binary() : "");
    EXPECT_GT(result.counters.glslang_compiles + result.counters.spirv_cache_hits, 0) << "the compile compiled no shader";
    std::set<std::string> written;
    for (const auto& path : result.filesWritten) written.insert(relativeTo(root_, path));
    EXPECT_EQ(written, layout().expectedFiles()) << "CompileResult::filesWritten";
  }
  if (c_.init == Init::kCallbackFile || c_.init == Init::kKeepOriginal) {
    std::map<std::string, int> once;
    for (const auto& name : cpuInitializers(c_.topology)) once[name] = c_.models();
    EXPECT_EQ(locationCalls_, once) << "the location callback is called once per kept initializer of each model";
    if (c_.externalSource) { EXPECT_TRUE(locationOriginals_["M"]) << "M's source location was not passed"; }
    EXPECT_EQ(locationOriginals_["lens"], c_.externalSource && c_.topology != Topology::kIfBody);
  }
}

void EpContextMatrix::checkCtxModels() {
  for (int i = 0; i < c_.models(); ++i) {
    Member& m = members_[static_cast<size_t>(i)];
    SCOPED_TRACE("model " + layout().sourceName(i));
    if (!layout().ctxModel(i).empty()) m.ctxBytes = readBytes(at(layout().ctxModel(i)));
    ASSERT_FALSE(m.ctxBytes.empty());
    CtxExpectation expected;
    expected.embedMode = c_.embed;
    expected.nodes = expectedPartitions(c_.topology);
    expected.binaryReference = fs::path(layout().binary()).filename().string();
    expected.prefix = layout().prefix(i);
    expected.sourceModelFilename = c_.bytes ? "" : layout().sourceName(i) + ".onnx";
    expected.absentInitializers = vulkanInitializers(c_.topology);
    expected.initializerLocations = layout().initializerLocations(i);
    expectCtxModel(parseModel(m.ctxBytes), m.source.proto, expected);
  }
}

void EpContextMatrix::reload() {
  // The ctx models must not need the source model (nor its weights, unless told to keep them).
  for (const auto& m : members_) {
    fs::remove(m.source.path);
    if (c_.init != Init::kKeepOriginal && !m.source.dataFile.empty()) fs::remove(m.source.dataFile);
  }
  SessionOptions base = vulkanOptions();
  if (c_.share) base = withEntries(base, {{"ep.share_ep_contexts", "1"}});
  std::vector<std::unique_ptr<Session>> alive;  // a sharing group's sessions live together
  for (int i = 0; i < c_.models(); ++i) {
    const Member& m = members_[static_cast<size_t>(i)];
    SCOPED_TRACE("model " + layout().sourceName(i));
    const std::string anchor = at(layout().anchor(i));
    if (c_.inMemoryOutput()) writeFileBytes(anchor, m.ctxBytes);

    auto fromPath = Session::create(anchor, base);
    ASSERT_TRUE(fromPath.isOk()) << fromPath.status().toString();
    expectNoCompileWork(**fromPath, "session from the ctx model's path");
    expectSameOutputs(m.expected, runAll(**fromPath, inputSets(c_.topology)), "session from the ctx model's path");

    bool external = false;
    for (const auto& [name, location] : layout().initializerLocations(i)) external |= !location.empty();
    SessionOptions bytesOptions = base;
    if (c_.embed == 0) bytesOptions = withEntries(bytesOptions, {{"ep.context_file_path", anchor}});
    if (external) {
      const std::string folder = fs::path(anchor).parent_path().string();
      bytesOptions = withEntries(bytesOptions, {{"session.model_external_initializers_file_folder_path", folder}});
    }
    auto fromBytes = Session::create(std::span<const std::byte>(m.ctxBytes), bytesOptions);
    ASSERT_TRUE(fromBytes.isOk()) << fromBytes.status().toString();
    expectNoCompileWork(**fromBytes, "session from the ctx model's bytes");
    expectSameOutputs(m.expected, runAll(**fromBytes, inputSets(c_.topology)), "session from the ctx model's bytes");

    if (c_.embed == 0 && !external) {
      auto lost = Session::create(std::span<const std::byte>(m.ctxBytes), base);
      ASSERT_FALSE(lost.isOk()) << "a ctx model from bytes found its binary without ep.context_file_path";
      EXPECT_EQ(lost.status().code(), StatusCode::INVALID_GRAPH) << lost.status().toString();
      EXPECT_NE(lost.status().message().find("ep.context_file_path"), std::string::npos) << lost.status().toString();
    }
    alive.push_back(std::move(fromPath).value());
    alive.push_back(std::move(fromBytes).value());
  }
  if (c_.share) {
    // ep.share_ep_contexts=1 at inference: the first session reads the group's binary, the others take it over.
    EXPECT_GT(alive.front()->timings().binary_read_ms, 0.0);
    for (size_t i = 1; i < alive.size(); ++i) {
      EXPECT_EQ(alive[i]->timings().binary_read_ms, 0.0) << "session " << i << " read the shared binary again";
    }
  }
}

TEST_P(EpContextMatrix, CompilesWritesExactFilesAndReloads) {
  sourceFiles_ = listFiles(root_);
  if (c_.api) compileWithApi();
  else compileWithSessionOptions();
  if (HasFatalFailure()) return;

  std::set<std::string> written;
  for (const auto& file : listFiles(root_)) {
    if (!sourceFiles_.count(file)) written.insert(file);
  }
  EXPECT_EQ(written, layout().expectedFiles()) << "files written: " << describe(written);
  for (const auto& m : members_) {
    EXPECT_EQ(readBytes(m.source.path), m.sourceBytes) << "the source model changed";
  }
  checkCtxModels();
  if (HasFatalFailure()) return;
  reload();
}

INSTANTIATE_TEST_SUITE_P(Pairwise, EpContextMatrix, ::testing::ValuesIn(matrixCases()),
                         [](const ::testing::TestParamInfo<AxisValues>& info) { return Case::from(info.param).name(); });

TEST(EpContextMatrixSelection, EveryValidPairIsCovered) {
  const auto missing = uncoveredPairs(kAxisSizes, validCase, matrixCases());
  for (const auto& p : missing) ADD_FAILURE() << "axis " << p.axisA << "=" << p.valueA << " with axis " << p.axisB << "=" << p.valueB;
  EXPECT_LT(matrixCases().size(), 40u) << "pairwise, not the product";
  for (const auto& c : matrixCases()) EXPECT_TRUE(validCase(c)) << Case::from(c).name();
  // Sanity of the generator: three binary axes need 4 cases, and a constraint removes the pairs it forbids.
  EXPECT_EQ(pairwiseCases({2, 2, 2}, [](const AxisValues&) { return true; }).size(), 4u);
  const auto noOnes = [](const AxisValues& v) { return !(v[0] == 1 && v[1] == 1); };
  for (const auto& c : pairwiseCases({2, 2, 2}, noOnes)) EXPECT_TRUE(noOnes(c));
  EXPECT_FALSE(uncoveredPairs({2, 2, 2}, noOnes, {{0, 0, 0}}).empty());
}

}  // namespace
}  // namespace kiln::testing
