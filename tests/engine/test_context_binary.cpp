// Context binary: round trip (compile → write → read → identical graphs and outputs, no compile work on load),
// weight deduplication, the compatibility verdict against a live device and edited profiles, cross-compilation
// for a device profile, and mutation tests (flipped, truncated and oversized files are INVALID_GRAPH, never a
// crash: run under the asan preset too).
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <fstream>
#include <set>

#include <nlohmann/json.hpp>

#include "context_binary/context_binary.h"
#include "context_binary/format.h"
#include "ep/vulkan/vulkan_context_hooks.h"
#include "epcontext/weightless.h"
#include "kiln/context_binary.h"
#include "kiln/device.h"
#include "kiln/session.h"
#include "model_builder.h"
#include "session/session_from_binary.h"
#include "session/inference_session.h"
#include "binary_mutations.h"
#include "test_models.h"
#include "util/file_io.h"
#include "gtest_requirements.h"

namespace kiln {
namespace {

using testing::ModelBuilder;

std::vector<float> ramp(size_t n, float scale) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = std::sin(static_cast<float>(i) * 0.37f) * scale;
  return v;
}

// Conv → BatchNormalization → Relu → two Convs with identical weights (deduplicated) → Add → Shape/Reshape (host
// arithmetic) → ReduceMean → Greater → Where: prepacked constants, host nodes, compares and reductions.
std::string smallModel(const testing::TempDir& dir) {
  ModelBuilder m(13);
  m.input("x", {1, 3, 8, 8});
  m.initializer("w1", {4, 3, 3, 3}, ramp(108, 0.5f));
  m.initializer("b1", {4}, {0.1f, -0.2f, 0.3f, 0.0f});
  m.initializer("scale", {4}, {1.0f, 0.5f, 2.0f, 1.5f});
  m.initializer("shift", {4}, {0.0f, 0.1f, -0.1f, 0.2f});
  m.initializer("mean", {4}, {0.05f, 0.0f, -0.05f, 0.1f});
  m.initializer("var", {4}, {1.0f, 0.5f, 2.0f, 0.25f});
  m.initializer("w2", {4, 4, 1, 1}, ramp(16, 0.25f));
  m.initializer("w3", {4, 4, 1, 1}, ramp(16, 0.25f));  // same bytes as w2: stored once
  m.initializer("zero", {1}, {0.0f});
  auto& conv = m.node("Conv", {"x", "w1", "b1"}, {"c1"}, "conv1");
  testing::attrInts(conv, "kernel_shape", {3, 3});
  testing::attrInts(conv, "pads", {1, 1, 1, 1});
  m.node("BatchNormalization", {"c1", "scale", "shift", "mean", "var"}, {"n1"}, "bn1");
  m.node("Relu", {"n1"}, {"r1"}, "relu1");
  m.node("Conv", {"r1", "w2"}, {"c2"}, "conv2");
  m.node("Conv", {"r1", "w3"}, {"c3"}, "conv3");
  m.node("Add", {"c2", "c3"}, {"a"}, "add");
  m.node("Shape", {"a"}, {"shape"}, "shape");
  m.node("Reshape", {"a", "shape"}, {"ra"}, "reshape");
  auto& mean = m.node("ReduceMean", {"ra"}, {"m"}, "mean");
  testing::attrInts(mean, "axes", {2, 3});
  m.node("Greater", {"ra", "m"}, {"g"}, "greater");
  m.node("Where", {"g", "ra", "zero"}, {"y"}, "where");
  m.output("y", {1, 4, 8, 8});
  return m.save(dir.file("small.onnx"));
}

std::vector<NamedTensor> smallInput() { return {{"x", Tensor::fromVector<float>({1, 3, 8, 8}, ramp(192, 2.0f))}}; }

void expectSameOutputs(const std::vector<NamedTensor>& a, const std::vector<NamedTensor>& b) {
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) {
    ASSERT_EQ(a[i].tensor.shape(), b[i].tensor.shape());
    ASSERT_EQ(a[i].tensor.byteSize(), b[i].tensor.byteSize());
    EXPECT_EQ(std::memcmp(a[i].tensor.rawData(), b[i].tensor.rawData(), a[i].tensor.byteSize()), 0) << a[i].name;
  }
}

struct Compiled {
  std::unique_ptr<Session> session;
  CompiledModel model;
  std::string binary;
  ctxbin::WeightStats stats;
};

// Compiles `modelPath` in a session, writes its partitions to `<dir>/<name>` and keeps the rewritten model.
Compiled compileToBinary(const std::string& modelPath, const testing::TempDir& dir, const std::string& name,
                         SessionOptions options = testing::vulkanOptions()) {
  Compiled c;
  auto session = Session::create(modelPath, options);
  EXPECT_TRUE(session.isOk()) << session.status().toString();
  if (!session.isOk()) return c;
  c.session = std::move(session).value();
  auto model = compiledModelOf(*c.session);
  EXPECT_TRUE(model.isOk());
  c.model = std::move(model).value();
  auto contents = vk::vulkanContextHooks()->exportContext(c.model.partitions);
  EXPECT_TRUE(contents.isOk()) << contents.status().toString();
  if (!contents.isOk()) return c;
  c.binary = dir.file(name);
  const Status written = ctxbin::writeContextBinary(contents.value(), c.binary, &c.stats);
  EXPECT_TRUE(written.isOk()) << written.toString();
  return c;
}

TEST(ContextBinary, RoundTripRunsWithoutCompileWork) {
  REQUIRE_VULKAN();
  testing::TempDir dir;
  Compiled compiled = compileToBinary(smallModel(dir), dir, "small_vulkan.bin");
  ASSERT_TRUE(compiled.session);
  ASSERT_FALSE(compiled.model.partitions.empty());
  EXPECT_GT(compiled.session->counters().glslang_compiles + compiled.session->counters().spirv_cache_hits, 0);
  EXPECT_GT(compiled.session->counters().weights_prepacked, 0);
  auto expected = compiled.session->run(smallInput());
  ASSERT_TRUE(expected.isOk()) << expected.status().toString();

  // w2 and w3 are one blob; prepacked constants equal to their source (biases, depthwise) are shared too.
  EXPECT_LT(compiled.stats.blobs, compiled.stats.references);
  EXPECT_LT(compiled.stats.storedBytes, compiled.stats.referencedBytes);

  // The stored graphs are the compiled ones: same nodes, attributes, initializer bytes and stored constants.
  auto binary = ctxbin::ContextBinary::open(compiled.binary);
  ASSERT_TRUE(binary.isOk()) << binary.status().toString();
  auto stored = binary.value()->partitions();
  ASSERT_TRUE(stored.isOk()) << stored.status().toString();
  ASSERT_EQ(stored->size(), compiled.model.partitions.size());
  for (size_t p = 0; p < stored->size(); ++p) {
    const CompiledPartition& a = compiled.model.partitions[p];
    const CompiledPartition& b = (*stored)[p];
    EXPECT_EQ(a.name, b.name);
    EXPECT_EQ(a.inputs, b.inputs);
    EXPECT_EQ(a.outputs, b.outputs);
    EXPECT_EQ(a.opsets, b.opsets);
    ASSERT_EQ(a.graph->nodes.size(), b.graph->nodes.size());
    for (size_t n = 0; n < a.graph->nodes.size(); ++n) {
      const ir::Node& x = a.graph->nodes[n];
      const ir::Node& y = b.graph->nodes[n];
      EXPECT_EQ(x.opType, y.opType);
      EXPECT_EQ(x.inputs, y.inputs);
      EXPECT_EQ(x.outputs, y.outputs);
      ASSERT_EQ(x.attributes.size(), y.attributes.size()) << x.label();
      for (const auto& [key, attribute] : x.attributes) {
        const ir::Attribute* other = y.attribute(key);
        ASSERT_NE(other, nullptr) << key;
        EXPECT_EQ(attribute.ints, other->ints) << key;
        EXPECT_EQ(attribute.i, other->i) << key;
        EXPECT_EQ(attribute.f, other->f) << key;
        EXPECT_EQ(attribute.s, other->s) << key;
      }
      EXPECT_EQ(a.nodes[n].onHost, b.nodes[n].onHost);
      ASSERT_EQ(a.nodes[n].constants.size(), b.nodes[n].constants.size());
      for (size_t k = 0; k < a.nodes[n].constants.size(); ++k) {
        const Tensor& t = a.nodes[n].constants[k];
        const Tensor& u = b.nodes[n].constants[k];
        ASSERT_EQ(t.shape(), u.shape());
        EXPECT_EQ(std::memcmp(t.rawData(), u.rawData(), t.byteSize()), 0);
      }
    }
    ASSERT_EQ(a.graph->initializers.size(), b.graph->initializers.size());
    // Initializers only a kernel's prepacked constants need are stored as type and shape (Conv weights, BN
    // parameters); every other one byte for byte.
    std::set<std::string> absorbed;
    for (size_t n = 0; n < a.graph->nodes.size(); ++n) {
      for (size_t k : a.nodes[n].absorbedInputs) absorbed.insert(a.graph->nodes[n].inputs[k]);
    }
    size_t shapeOnly = 0;
    for (const auto& [name, t] : a.graph->initializers) {
      const Tensor& u = b.graph->initializers.at(name);
      ASSERT_EQ(t.shape(), u.shape()) << name;
      ASSERT_EQ(t.dtype(), u.dtype()) << name;
      if (!u.rawData()) {
        EXPECT_TRUE(absorbed.count(name)) << name << " stored without values but not folded";
        ++shapeOnly;
        continue;
      }
      EXPECT_EQ(std::memcmp(t.rawData(), u.rawData(), t.byteSize()), 0) << name;
    }
    EXPECT_GE(shapeOnly, 3u);  // w1, b1 and at least the BN parameters or w2/w3
    EXPECT_EQ(a.spirv, b.spirv);
  }

  // A session from the binary: no optimizer pass, no prepack, no glslang (not even a SPIR-V cache lookup).
  auto loaded = createSessionFromBinary(compiled.model.model, compiled.binary, testing::vulkanOptions());
  ASSERT_TRUE(loaded.isOk()) << loaded.status().toString();
  const WorkCounters& counters = loaded.value()->counters();
  EXPECT_EQ(counters.glslang_compiles, 0);
  EXPECT_EQ(counters.spirv_cache_hits, 0);
  EXPECT_EQ(counters.optimizer_passes_run, 0);
  EXPECT_EQ(counters.weights_prepacked, 0);
  EXPECT_GT(loaded.value()->timings().binary_read_ms, 0);
  auto actual = loaded.value()->run(smallInput());
  ASSERT_TRUE(actual.isOk()) << actual.status().toString();
  expectSameOutputs(*expected, *actual);
}

TEST(ContextBinary, InspectDescribesHeaderSectionsAndGraphs) {
  REQUIRE_VULKAN();
  testing::TempDir dir;
  Compiled compiled = compileToBinary(smallModel(dir), dir, "small_vulkan.bin");
  ASSERT_FALSE(compiled.binary.empty());
  auto info = inspectContextBinary(compiled.binary);
  ASSERT_TRUE(info.isOk()) << info.status().toString();
  EXPECT_EQ(info->formatVersion, "1.4");  // 1.1: compile_record, weight_refs, tuning; 1.2: pipeline_users; 1.3: spirv_digests; 1.4: provider_data
  EXPECT_EQ(info->target, "device");
  EXPECT_FALSE(info->deviceName.empty());
  EXPECT_EQ(info->graphs.size(), compiled.model.partitions.size());
  EXPECT_EQ(info->weightBlobs, compiled.stats.blobs);
  EXPECT_EQ(info->weightReferences, compiled.stats.references);
  EXPECT_LT(info->weightBytes, info->weightBytesReferenced);
  EXPECT_FALSE(info->spirvModules.empty());
  std::vector<std::string> kinds;
  for (const auto& s : info->sections) kinds.push_back(s.kind);
  EXPECT_EQ(kinds, (std::vector<std::string>{"device", "graphs", "spirv", "spirv_digests", "driver_cache", "weights", "pipeline_users"}));
  EXPECT_EQ(inspectContextBinary(dir.file("missing.bin")).status().code(), StatusCode::NO_SUCHFILE);
}

// `bytes` with one more section of `kind` holding `content` (laid out after the table, every offset recomputed),
// as a writer of a newer minor format version would add one.
std::vector<std::byte> withExtraSection(std::span<const std::byte> bytes, uint32_t kind, const std::string& content) {
  auto parsed = ctxbin::parseHeader(bytes);
  EXPECT_TRUE(parsed.isOk()) << parsed.status().toString();
  std::vector<std::vector<std::byte>> contents;
  for (const auto& s : parsed->sections) contents.emplace_back(bytes.begin() + s.offset, bytes.begin() + s.offset + s.size);
  const auto* text = reinterpret_cast<const std::byte*>(content.data());
  contents.emplace_back(text, text + content.size());
  auto sections = parsed->sections;
  sections.push_back({static_cast<ctxbin::SectionKind>(kind), 0, content.size(), ctxbin::contentHash(contents.back()), 1});
  uint64_t offset = ctxbin::kHeaderBytes + sections.size() * ctxbin::kSectionEntryBytes;
  for (auto& s : sections) {
    offset = (offset + ctxbin::kSectionAlignment - 1) / ctxbin::kSectionAlignment * ctxbin::kSectionAlignment;
    s.offset = offset;
    offset += s.size;
  }
  parsed->header.fileSize = offset;
  std::vector<std::byte> out = ctxbin::encodeHeader(parsed->header, sections);
  out.resize(offset);
  for (size_t i = 0; i < sections.size(); ++i) std::memcpy(out.data() + sections[i].offset, contents[i].data(), contents[i].size());
  return out;
}

// Format 1.1: a reader skips section kinds it does not know (a later minor version's), after checking their bounds
// and hash as for any section; a duplicate unknown kind is still corrupt.
TEST(ContextBinary, UnknownSectionKindsAreSkipped) {
  REQUIRE_VULKAN();
  testing::TempDir dir;
  Compiled compiled = compileToBinary(smallModel(dir), dir, "small_vulkan.bin");
  ASSERT_FALSE(compiled.binary.empty());
  const auto original = readFileBytes(compiled.binary).value();
  const auto extended = withExtraSection(original, 29, "a section from the future");
  auto binary = ctxbin::ContextBinary::fromBytes(extended, "extended");
  ASSERT_TRUE(binary.isOk()) << binary.status().toString();
  auto partitions = (*binary)->partitions();
  ASSERT_TRUE(partitions.isOk()) << partitions.status().toString();
  EXPECT_EQ(partitions->size(), compiled.model.partitions.size());
  auto info = inspectContextBinary(extended, "extended");
  ASSERT_TRUE(info.isOk()) << info.status().toString();
  EXPECT_EQ(info->sections.back().kind, "unknown (kind 29)");

  const auto twice = withExtraSection(extended, 29, "again");
  auto duplicate = ctxbin::ContextBinary::fromBytes(twice, "twice");
  ASSERT_FALSE(duplicate.isOk());
  EXPECT_EQ(duplicate.status().code(), StatusCode::INVALID_GRAPH);
  auto damaged = extended;
  damaged.back() ^= std::byte{1};  // inside the unknown section: its hash still guards it
  EXPECT_EQ(ctxbin::ContextBinary::fromBytes(damaged, "damaged").status().code(), StatusCode::INVALID_GRAPH);

  // A compile record section (kind 6) reads back as written.
  const auto recorded = withExtraSection(original, 6, R"({"kiln_version":"0.1.0"})");
  auto withRecord = ctxbin::ContextBinary::fromBytes(recorded, "recorded");
  ASSERT_TRUE(withRecord.isOk()) << withRecord.status().toString();
  EXPECT_EQ((*withRecord)->compileRecord(), R"({"kiln_version":"0.1.0"})");
  EXPECT_FALSE((*withRecord)->isWeightless());
}

// A SPIR-V module edited inside the binary with every section hash and the header checksum recomputed (a buggy
// writer, or a tampered file: issue 31 measured outputs off by 3.4e-3 from one) no longer matches its digest in the
// spirv_digests section (format 1.3): INVALID_GRAPH, and no driver sees it.
TEST(ContextBinary, ASpirvEditBehindResealedHashesIsRefused) {
  REQUIRE_VULKAN();
  testing::TempDir dir;
  Compiled compiled = compileToBinary(smallModel(dir), dir, "small_vulkan.bin");
  ASSERT_FALSE(compiled.binary.empty());
  auto bytes = readFileBytes(compiled.binary).value();
  auto parsed = ctxbin::parseHeader(bytes);
  ASSERT_TRUE(parsed.isOk()) << parsed.status().toString();
  bool edited = false;
  for (const auto& section : parsed->sections) {
    if (section.kind != ctxbin::SectionKind::SPIRV) continue;
    bytes[section.offset + section.size - 4] ^= std::byte{0x01};  // the last word of the last module
    edited = true;
  }
  ASSERT_TRUE(edited) << "the binary has a SPIR-V section";
  testing::mutation_detail::rehash(bytes);
  auto binary = ctxbin::ContextBinary::fromBytes(bytes, "edited");
  const Status status = binary.isOk() ? (*binary)->partitions().status() : binary.status();
  EXPECT_EQ(status.code(), StatusCode::INVALID_GRAPH) << status.toString();
  EXPECT_NE(status.message().find("does not match its digest"), std::string::npos) << status.toString();
}

// --- verdicts -----------------------------------------------------------------------------------------------

std::string writeProfile(const testing::TempDir& dir, const std::string& name, const nlohmann::json& profile) {
  const std::string path = dir.file(name);
  std::ofstream(path) << profile.dump(2);
  return path;
}

nlohmann::json liveProfile() {
  auto text = vulkanDeviceProfile(0);
  EXPECT_TRUE(text.isOk());
  return nlohmann::json::parse(text.value());
}

// Rewrites header fields of a binary file and fixes the checksum, as a newer or older writer would have written it.
void patchHeader(const std::string& path, const std::function<void(ctxbin::Header&)>& edit) {
  auto bytes = readFileBytes(path).value();
  auto parsed = ctxbin::parseHeader(bytes);
  ASSERT_TRUE(parsed.isOk()) << parsed.status().toString();
  edit(parsed->header);
  const auto head = ctxbin::encodeHeader(parsed->header, parsed->sections);
  std::memcpy(bytes.data(), head.data(), head.size());
  ASSERT_TRUE(writeFileAtomically(path, bytes).isOk());
}

std::string reasons(const CompatibilityVerdict& v) {
  std::string text;
  for (const auto& r : v.reasons) text += r + "\n";
  return text;
}

TEST(ContextBinary, VerdictsAgainstEditedProfiles) {
  REQUIRE_VULKAN();
  testing::TempDir dir;
  // Compiled for the device index 0 picks (the profile below describes the same one).
  SessionOptions options = testing::vulkanOptions();
  ASSERT_TRUE(options.addConfigEntry("kiln.vulkan.device", "0").isOk());
  Compiled compiled = compileToBinary(smallModel(dir), dir, "small_vulkan.bin", options);
  ASSERT_FALSE(compiled.binary.empty());
  auto info = inspectContextBinary(compiled.binary);
  ASSERT_TRUE(info.isOk());

  auto judge = [&](const nlohmann::json& profile) {
    auto verdict = checkContextBinaryAgainstProfile(compiled.binary, writeProfile(dir, "p.json", profile));
    EXPECT_TRUE(verdict.isOk()) << verdict.status().toString();
    return verdict.value();
  };
  const nlohmann::json live = liveProfile();

  // The live device itself: optimal (same device and driver, and the binary carries the driver cache).
  EXPECT_GT(info->driverCacheBytes, 0u);
  auto same = judge(live);
  EXPECT_EQ(same.compatibility, Compatibility::OPTIMAL) << reasons(same);
  auto live0 = checkContextBinary(compiled.binary, "0");
  ASSERT_TRUE(live0.isOk());
  EXPECT_EQ(live0->compatibility, Compatibility::OPTIMAL) << reasons(*live0);

  auto edited = live;
  edited["identity"]["driver_info"] = "Mesa 99.0.0 (a newer driver)";
  auto v = judge(edited);
  EXPECT_EQ(v.compatibility, Compatibility::COMPATIBLE);
  EXPECT_NE(reasons(v).find("driver info"), std::string::npos) << reasons(v);

  edited = live;
  edited["identity"]["vendor_id"] = 0x10de;
  edited["identity"]["device_id"] = 0x2330;
  v = judge(edited);
  EXPECT_EQ(v.compatibility, Compatibility::COMPATIBLE);
  EXPECT_NE(reasons(v).find("compiled for"), std::string::npos) << reasons(v);

  edited = live;
  edited["limits"]["max_compute_work_group_invocations"] = 16;
  v = judge(edited);
  EXPECT_EQ(v.compatibility, Compatibility::UNSUPPORTED);
  EXPECT_NE(reasons(v).find("maxComputeWorkGroupInvocations"), std::string::npos) << reasons(v);

  // Greater writes bools through 8-bit storage on a device that has it.
  if (live["features"]["storage_buffer_8bit"].get<bool>()) {
    edited = live;
    edited["features"]["storage_buffer_8bit"] = false;
    v = judge(edited);
    EXPECT_EQ(v.compatibility, Compatibility::UNSUPPORTED);
    EXPECT_NE(reasons(v).find("storage_8bit"), std::string::npos) << reasons(v);
  }
  if (std::find(info->requiredFeatures.begin(), info->requiredFeatures.end(), "subgroup_arithmetic") !=
      info->requiredFeatures.end()) {
    edited = live;
    edited["features"]["subgroup_size"] = live["features"]["subgroup_size"].get<int>() * 2;
    v = judge(edited);
    EXPECT_EQ(v.compatibility, Compatibility::UNSUPPORTED);
    EXPECT_NE(reasons(v).find("subgroup size"), std::string::npos) << reasons(v);
  }

  // Engine version outside the readable range, and a newer format major: unsupported, not corrupt.
  const std::string old = dir.file("old.bin");
  std::filesystem::copy_file(compiled.binary, old);
  patchHeader(old, [](ctxbin::Header& h) { h.readableMax = ctxbin::packVersion("0.0.9"); });
  auto oldVerdict = checkContextBinaryAgainstProfile(old, writeProfile(dir, "p.json", live));
  ASSERT_TRUE(oldVerdict.isOk());
  EXPECT_EQ(oldVerdict->compatibility, Compatibility::UNSUPPORTED);
  EXPECT_NE(reasons(*oldVerdict).find("outside the versions"), std::string::npos) << reasons(*oldVerdict);

  const std::string future = dir.file("future.bin");
  std::filesystem::copy_file(compiled.binary, future);
  patchHeader(future, [](ctxbin::Header& h) {
    h.formatMajor = 2;
    h.formatMinor = 0;
  });
  auto futureVerdict = checkContextBinary(future, "0");
  ASSERT_TRUE(futureVerdict.isOk()) << futureVerdict.status().toString();
  EXPECT_EQ(futureVerdict->compatibility, Compatibility::UNSUPPORTED);
  EXPECT_NE(reasons(*futureVerdict).find("format 2.0"), std::string::npos) << reasons(*futureVerdict);
  // Loading it is INVALID_GRAPH with that reason.
  auto load = createSessionFromBinary(compiled.model.model, future, testing::vulkanOptions());
  EXPECT_EQ(load.status().code(), StatusCode::INVALID_GRAPH);
}

TEST(ContextBinary, CrossCompiledForMinimalProfileLoadsAsCompatible) {
  REQUIRE_VULKAN();
  testing::TempDir dir;
  const std::string profile = std::string(KILN_SOURCE_DIR) + "/resources/profiles/vulkan11_minimal.json";
  SessionOptions options = testing::vulkanOptions();
  ASSERT_TRUE(options.addConfigEntry("kiln.vulkan.target_profile", profile).isOk());
  const std::string model = smallModel(dir);
  Compiled compiled = compileToBinary(model, dir, "small_vulkan.bin", options);
  ASSERT_FALSE(compiled.binary.empty());

  auto info = inspectContextBinary(compiled.binary);
  ASSERT_TRUE(info.isOk()) << info.status().toString();
  EXPECT_EQ(info->target, "profile");
  EXPECT_EQ(info->driverCacheBytes, 0u);
  for (const auto& s : info->sections) EXPECT_NE(s.kind, "driver_cache");
  // The portable paths: nothing the minimal device lacks.
  EXPECT_TRUE(info->requiredFeatures.empty()) << info->requiredFeatures.front();
  EXPECT_LE(info->requiredWorkgroupInvocations, 128u);

  auto verdict = checkContextBinary(compiled.binary);
  ASSERT_TRUE(verdict.isOk()) << verdict.status().toString();
  EXPECT_EQ(verdict->compatibility, Compatibility::COMPATIBLE) << reasons(*verdict);
  EXPECT_NE(reasons(*verdict).find("device profile"), std::string::npos) << reasons(*verdict);
  auto minimal = checkContextBinaryAgainstProfile(compiled.binary, profile);
  ASSERT_TRUE(minimal.isOk());
  EXPECT_EQ(minimal->compatibility, Compatibility::COMPATIBLE) << reasons(*minimal);

  // It runs on the live device and matches the CPU EP.
  auto loaded = createSessionFromBinary(compiled.model.model, compiled.binary, testing::vulkanOptions());
  ASSERT_TRUE(loaded.isOk()) << loaded.status().toString();
  auto actual = loaded.value()->run(smallInput());
  ASSERT_TRUE(actual.isOk()) << actual.status().toString();
  SessionOptions cpuOptions;
  ASSERT_TRUE(cpuOptions.addConfigEntry("kiln.execution_providers", "cpu").isOk());
  auto cpu = Session::create(model, cpuOptions);
  ASSERT_TRUE(cpu.isOk());
  auto expected = cpu.value()->run(smallInput());
  ASSERT_TRUE(expected.isOk());
  const Tensor& a = (*actual)[0].tensor;
  const Tensor& e = (*expected)[0].tensor;
  ASSERT_EQ(a.shape(), e.shape());
  for (int64_t i = 0; i < a.numel(); ++i) EXPECT_NEAR(a.data<float>()[i], e.data<float>()[i], 1e-4f) << i;

  // A compatible binary fails when the session insists on optimal.
  SessionOptions strict = testing::vulkanOptions();
  ASSERT_TRUE(strict.addConfigEntry("session.fail_on_suboptimal_compiled_model", "1").isOk());
  auto refused = createSessionFromBinary(compiled.model.model, compiled.binary, strict);
  EXPECT_EQ(refused.status().code(), StatusCode::FAIL) << refused.status().toString();
}

// --- mutations ----------------------------------------------------------------------------------------------

TEST(ContextBinary, MutationsAreInvalidGraphNeverACrash) {
  REQUIRE_VULKAN();
  testing::TempDir dir;
  Compiled compiled = compileToBinary(smallModel(dir), dir, "small_vulkan.bin");
  ASSERT_FALSE(compiled.binary.empty());
  std::vector<std::string> failures;
  const size_t cases = testing::mutateContextBinary(readFileBytes(compiled.binary).value(),
                                                    [&](const std::string& what) { failures.push_back(what); });
  EXPECT_GT(cases, 1000u);
  for (size_t i = 0; i < failures.size() && i < 20; ++i) ADD_FAILURE() << failures[i];
}

// A weightless binary (weight_refs section, empty blobs) mutated the same way: INVALID_GRAPH or a clean decode,
// never a crash; unmutated, its references resolve against the source and give the regular binary's partitions.
TEST(ContextBinary, WeightlessMutationsAreInvalidGraphNeverACrash) {
  REQUIRE_VULKAN();
  testing::TempDir dir;
  const std::string model = smallModel(dir);
  Compiled compiled = compileToBinary(model, dir, "small_vulkan.bin");
  ASSERT_FALSE(compiled.binary.empty());
  auto contents = vk::vulkanContextHooks()->exportContext(compiled.model.partitions);
  ASSERT_TRUE(contents.isOk()) << contents.status().toString();
  auto sources = epctx::weightlessSourcesFor({model}, dir.path().string(), false);
  ASSERT_TRUE(sources.isOk()) << sources.status().toString();
  contents->findExternal = sources->finder;
  contents->weightSources = sources->sources;
  auto bytes = ctxbin::encodeContextBinary(*contents);
  ASSERT_TRUE(bytes.isOk()) << bytes.status().toString();
  EXPECT_LT(bytes->size(), readFileBytes(compiled.binary).value().size());
  auto binary = ctxbin::ContextBinary::fromBytes(*bytes, "weightless");
  ASSERT_TRUE(binary.isOk()) << binary.status().toString();
  ASSERT_TRUE((*binary)->isWeightless());
  auto blobs = epctx::resolveWeightRefs(**binary, dir.path().string(), "", nullptr);
  ASSERT_TRUE(blobs.isOk()) << blobs.status().toString();
  EXPECT_FALSE(blobs->empty());
  auto partitions = (*binary)->partitions(&*blobs);
  ASSERT_TRUE(partitions.isOk()) << partitions.status().toString();
  EXPECT_EQ(partitions->size(), compiled.model.partitions.size());

  std::vector<std::string> failures;
  const size_t cases = testing::mutateContextBinary(*bytes, [&](const std::string& what) { failures.push_back(what); });
  EXPECT_GT(cases, 1000u);
  for (size_t i = 0; i < failures.size() && i < 20; ++i) ADD_FAILURE() << failures[i];
}

}  // namespace
}  // namespace kiln
