// Autotune at compile time (kiln.vulkan.autotune=1): the choices go into the context binary's tuning section
// (format 1.1), are read back and applied by a session from the binary with no tuning at all; a binary without
// the section runs defaults; a corrupt tuning section is INVALID_GRAPH; readers skip section kinds they do not know.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <filesystem>

#include "binary_mutations.h"
#include "context_binary/context_binary.h"
#include "context_binary/format.h"
#include "ep/vulkan/vk_kernel.h"
#include "ep/vulkan/vulkan_context_hooks.h"
#include "kiln/compiler.h"
#include "kiln/context_binary.h"
#include "kiln/progress.h"
#include "kiln/session.h"
#include "session/inference_session.h"
#include "session/session_from_binary.h"
#include "test_models.h"
#include "util/file_io.h"
#include "gtest_requirements.h"

namespace kiln {
namespace {

const std::string kModel = std::string(KILN_SOURCE_DIR) + "/resources/models/tiny_cnn.onnx";  // Conv, Gemm, ...

SessionOptions tunedOptions(bool autotune = true) {
  SessionOptions options = testing::vulkanOptions();
  EXPECT_TRUE(options.addConfigEntry("kiln.free_dim_override.batch", "1").isOk());  // fixed shapes: tuned at compile
  if (autotune) {
    EXPECT_TRUE(options.addConfigEntry("kiln.vulkan.autotune", "1").isOk());
  }
  return options;
}

std::vector<NamedTensor> input() {
  Tensor x(DataType::FLOAT, {1, 3, 32, 32});
  for (int64_t i = 0; i < x.numel(); ++i) x.data<float>()[i] = std::cos(static_cast<float>(i) * 0.01f);
  return {{"image", x}};
}

struct Compiled {
  std::unique_ptr<Session> session;
  CompiledModel model;
  std::string binary;
};

std::string write(const testing::TempDir& dir, const std::vector<CompiledPartition>& partitions, const std::string& name) {
  auto contents = vk::vulkanContextHooks()->exportContext(partitions);
  EXPECT_TRUE(contents.isOk()) << contents.status().toString();
  if (!contents.isOk()) return {};
  const Status written = ctxbin::writeContextBinary(contents.value(), dir.file(name));
  EXPECT_TRUE(written.isOk()) << written.toString();
  return dir.file(name);
}

Compiled compile(const testing::TempDir& dir, const SessionOptions& options, const std::string& name = "tiny_vulkan.bin") {
  Compiled c;
  auto session = Session::create(kModel, options);
  EXPECT_TRUE(session.isOk()) << session.status().toString();
  if (!session.isOk()) return c;
  c.session = std::move(session).value();
  auto model = compiledModelOf(*c.session);
  EXPECT_TRUE(model.isOk());
  c.model = std::move(model).value();
  c.binary = write(dir, c.model.partitions, name);
  return c;
}

size_t tunedKernels(const std::vector<CompiledPartition>& partitions) {
  size_t n = 0;
  for (const auto& p : partitions) n += p.tuning.kernels.size();
  return n;
}

void expectClose(const std::vector<NamedTensor>& a, const std::vector<NamedTensor>& b) {
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) {
    ASSERT_EQ(a[i].tensor.shape(), b[i].tensor.shape());
    for (int64_t k = 0; k < a[i].tensor.numel(); ++k) {
      EXPECT_NEAR(a[i].tensor.data<float>()[k], b[i].tensor.data<float>()[k], 1e-5f) << k;
    }
  }
}

TEST(AutotuneBinary, CandidatesToRegisterFollowsTheStoredChoice) {
  ir::Node node;
  node.opType = "Conv";
  vk::DeviceInfo device;
  vk::KernelCreateInfo info{node, 13, device, {}, {}, {}, false};
  const std::vector<std::string> names = {"default", "b", "c"};
  EXPECT_EQ(vk::candidatesToRegister(info, names), std::vector<size_t>{0});
  info.autotune = true;
  EXPECT_EQ(vk::candidatesToRegister(info, names), (std::vector<size_t>{0, 1, 2}));
  info.tunedCandidate = "c";  // a stored choice wins over autotune: a binary's partitions are never tuned again
  EXPECT_EQ(vk::candidatesToRegister(info, names), std::vector<size_t>{2});
  info.tunedCandidate = "gone";  // a name this engine's kernel does not have: its default (and a warning)
  EXPECT_EQ(vk::candidatesToRegister(info, names), std::vector<size_t>{0});
}

// Tuned at compile, written, read back, applied with no tuning: the loaded session's autotune_ms stays 0 (at
// creation and after runs), its pipelines are exactly the stored (chosen) SPIR-V, and it computes what the tuned
// session computes.
TEST(AutotuneBinary, ChoicesAreStoredReadBackAndAppliedWithoutTuning) {
  REQUIRE_VULKAN();
  testing::TempDir dir;
  Compiled tuned = compile(dir, tunedOptions());
  ASSERT_TRUE(tuned.session && !tuned.binary.empty());
  EXPECT_GT(tuned.session->timings().autotune_ms, 0.0);  // at compile, not at the first run
  ASSERT_GT(tunedKernels(tuned.model.partitions), 0u);
  for (const auto& p : tuned.model.partitions) {
    EXPECT_TRUE(p.tuning.requested);
    for (const auto& k : p.tuning.kernels) {
      EXPECT_GT(k.trials.size(), 1u) << k.label;
      EXPECT_FALSE(k.chosen.empty()) << k.label;
    }
  }
  const double compileTuneMs = tuned.session->timings().autotune_ms;
  auto expected = tuned.session->run(input());
  ASSERT_TRUE(expected.isOk()) << expected.status().toString();
  EXPECT_EQ(tuned.session->timings().autotune_ms, compileTuneMs);  // the first run tuned nothing more

  auto binary = ctxbin::ContextBinary::open(tuned.binary);
  ASSERT_TRUE(binary.isOk()) << binary.status().toString();
  EXPECT_TRUE(binary.value()->hasTuning());
  EXPECT_EQ(binary.value()->header().formatMinor, ctxbin::kFormatMinor);  // written at the current format
  auto stored = binary.value()->partitions();
  ASSERT_TRUE(stored.isOk()) << stored.status().toString();
  ASSERT_EQ(stored->size(), tuned.model.partitions.size());
  size_t spirv = 0;
  for (size_t p = 0; p < stored->size(); ++p) {
    const auto& a = tuned.model.partitions[p].tuning.kernels;
    const auto& b = (*stored)[p].tuning.kernels;
    ASSERT_EQ(a.size(), b.size());
    for (size_t k = 0; k < a.size(); ++k) {
      EXPECT_EQ(a[k].node, b[k].node);
      EXPECT_EQ(a[k].label, b[k].label);
      EXPECT_EQ(a[k].chosen, b[k].chosen);
      EXPECT_EQ(a[k].trials, b[k].trials);
    }
    spirv += (*stored)[p].spirv.size();
    // Pipeline users follow the chosen candidates: one entry per stored SPIR-V module, none for a dropped one.
    EXPECT_EQ((*stored)[p].pipelineUsers.size(), (*stored)[p].spirv.size()) << (*stored)[p].name;
  }

  SessionOptions loadOptions = testing::vulkanOptions();
  ASSERT_TRUE(loadOptions.addConfigEntry("kiln.vulkan.autotune", "1").isOk());  // ignored for stored partitions
  auto loaded = createSessionFromBinary(tuned.model.model, tuned.binary, loadOptions);
  ASSERT_TRUE(loaded.isOk()) << loaded.status().toString();
  EXPECT_EQ(loaded.value()->timings().autotune_ms, 0.0);
  EXPECT_LE(loaded.value()->counters().pipelines_created, static_cast<int64_t>(spirv));
  auto actual = loaded.value()->run(input());
  ASSERT_TRUE(actual.isOk()) << actual.status().toString();
  EXPECT_EQ(loaded.value()->timings().autotune_ms, 0.0);
  expectClose(*expected, *actual);

  // The choice is what the loaded kernels register: a stored choice naming another candidate, whose SPIR-V the
  // binary does not carry (only the chosen variants are stored), cannot load.
  std::vector<CompiledPartition> edited = *stored;
  bool changed = false;
  for (auto& p : edited) {
    for (auto& k : p.tuning.kernels) {
      if (changed || k.label.find("Conv") == std::string::npos) continue;
      for (const auto& [name, ms] : k.trials) {
        if (!changed && name != k.chosen) k.chosen = name, changed = true;
      }
    }
  }
  ASSERT_TRUE(changed);
  const std::string other = write(dir, edited, "other_vulkan.bin");
  auto refused = createSessionFromBinary(tuned.model.model, other, testing::vulkanOptions());
  ASSERT_FALSE(refused.isOk());
  EXPECT_EQ(refused.status().code(), StatusCode::INVALID_GRAPH) << refused.status().toString();
  EXPECT_NE(refused.status().message().find("lacks SPIR-V"), std::string::npos) << refused.status().toString();
}

// Without autotune there is no tuning section, and a session from the binary runs the kernels' defaults with no
// tuning, whatever kiln.vulkan.autotune says.
TEST(AutotuneBinary, BinaryWithoutTuningSectionRunsDefaults) {
  REQUIRE_VULKAN();
  testing::TempDir dir;
  Compiled plain = compile(dir, tunedOptions(false));
  ASSERT_TRUE(plain.session && !plain.binary.empty());
  EXPECT_EQ(plain.session->timings().autotune_ms, 0.0);
  auto binary = ctxbin::ContextBinary::open(plain.binary);
  ASSERT_TRUE(binary.isOk());
  EXPECT_FALSE(binary.value()->hasTuning());
  auto info = inspectContextBinary(plain.binary);
  ASSERT_TRUE(info.isOk());
  EXPECT_EQ(info->autotune, "off");
  SessionOptions options = testing::vulkanOptions();
  ASSERT_TRUE(options.addConfigEntry("kiln.vulkan.autotune", "1").isOk());
  auto loaded = createSessionFromBinary(plain.model.model, plain.binary, options);
  ASSERT_TRUE(loaded.isOk()) << loaded.status().toString();
  auto expected = plain.session->run(input());
  auto actual = loaded.value()->run(input());
  ASSERT_TRUE(expected.isOk() && actual.isOk()) << actual.status().toString();
  EXPECT_EQ(loaded.value()->timings().autotune_ms, 0.0);
  expectClose(*expected, *actual);
}

// A corrupt tuning section is a clear INVALID_GRAPH (never a silent guess): damaged bytes (hash mismatch),
// damage with the hashes fixed up (the decoder's own checks), and a choice naming a node the partition lacks.
TEST(AutotuneBinary, CorruptTuningSectionIsInvalidGraph) {
  REQUIRE_VULKAN();
  testing::TempDir dir;
  Compiled tuned = compile(dir, tunedOptions());
  ASSERT_FALSE(tuned.binary.empty());
  const std::vector<std::byte> original = readFileBytes(tuned.binary).value();
  auto parsed = ctxbin::parseHeader(original);
  ASSERT_TRUE(parsed.isOk());
  const ctxbin::SectionEntry* tuning = nullptr;
  for (const auto& s : parsed->sections) {
    if (s.kind == ctxbin::SectionKind::TUNING) tuning = &s;
  }
  ASSERT_NE(tuning, nullptr);

  auto flipped = original;
  flipped[tuning->offset + tuning->size / 2] ^= std::byte{0x10};
  auto opened = ctxbin::ContextBinary::fromBytes(flipped, "flipped");
  EXPECT_EQ(opened.status().code(), StatusCode::INVALID_GRAPH);
  EXPECT_NE(opened.status().message().find("tuning section content hash mismatch"), std::string::npos)
      << opened.status().toString();

  auto counted = original;
  const uint32_t huge = 0x7fffffff;
  std::memcpy(counted.data() + tuning->offset, &huge, 4);  // the record count
  testing::mutation_detail::rehash(counted);
  auto reopened = ctxbin::ContextBinary::fromBytes(counted, "counted");
  ASSERT_TRUE(reopened.isOk()) << reopened.status().toString();
  auto partitions = reopened.value()->partitions();
  EXPECT_EQ(partitions.status().code(), StatusCode::INVALID_GRAPH);
  EXPECT_NE(partitions.status().message().find("tuning section does not parse"), std::string::npos)
      << partitions.status().toString();
  ASSERT_TRUE(writeFileAtomically(dir.file("counted_vulkan.bin"), counted).isOk());
  auto session = createSessionFromBinary(tuned.model.model, dir.file("counted_vulkan.bin"), testing::vulkanOptions());
  EXPECT_EQ(session.status().code(), StatusCode::INVALID_GRAPH) << session.status().toString();

  std::vector<CompiledPartition> edited = tuned.model.partitions;
  for (auto& p : edited) {
    if (!p.tuning.kernels.empty()) p.tuning.kernels.front().node = 100000;
  }
  const std::string outOfRange = write(dir, edited, "range_vulkan.bin");
  auto refused = createSessionFromBinary(tuned.model.model, outOfRange, testing::vulkanOptions());
  EXPECT_EQ(refused.status().code(), StatusCode::INVALID_GRAPH);
  EXPECT_NE(refused.status().message().find("names node 100000"), std::string::npos) << refused.status().toString();

  // Every other damage: INVALID_GRAPH or a valid file, never a crash.
  std::vector<std::string> failures;
  testing::mutateContextBinary(original, [&](const std::string& what) { failures.push_back(what); });
  for (size_t i = 0; i < failures.size() && i < 20; ++i) ADD_FAILURE() << failures[i];
}

// Readers skip section kinds they do not know (what lets later minor versions add sections): a binary with an
// extra section of an unknown kind and a newer minor version opens, decodes and lists the section.
TEST(AutotuneBinary, UnknownSectionKindsAreSkipped) {
  REQUIRE_VULKAN();
  testing::TempDir dir;
  Compiled plain = compile(dir, tunedOptions(false));
  ASSERT_FALSE(plain.binary.empty());
  const std::vector<std::byte> original = readFileBytes(plain.binary).value();
  auto parsed = ctxbin::parseHeader(original);
  ASSERT_TRUE(parsed.isOk());
  // The table grows by one entry: every section moves by the same multiple of 64 bytes.
  auto aligned = [](uint64_t at) { return (at + ctxbin::kSectionAlignment - 1) / ctxbin::kSectionAlignment * ctxbin::kSectionAlignment; };
  const size_t count = parsed->sections.size();
  const uint64_t shift = aligned(ctxbin::kHeaderBytes + (count + 1) * ctxbin::kSectionEntryBytes) -
                         aligned(ctxbin::kHeaderBytes + count * ctxbin::kSectionEntryBytes);
  std::vector<ctxbin::SectionEntry> sections = parsed->sections;
  for (auto& s : sections) s.offset += shift;
  const std::vector<std::byte> extra(100, std::byte{0x42});
  const uint64_t extraAt = aligned(original.size() + shift);
  sections.push_back({static_cast<ctxbin::SectionKind>(42), extraAt, extra.size(), ctxbin::contentHash(extra), 1});
  ctxbin::Header header = parsed->header;
  header.formatMinor = 7;
  header.fileSize = extraAt + extra.size();
  std::vector<std::byte> bytes(header.fileSize);
  const auto head = ctxbin::encodeHeader(header, sections);
  std::memcpy(bytes.data(), head.data(), head.size());
  for (size_t i = 0; i < count; ++i) {
    std::memcpy(bytes.data() + sections[i].offset, original.data() + parsed->sections[i].offset, parsed->sections[i].size);
  }
  std::memcpy(bytes.data() + extraAt, extra.data(), extra.size());

  auto binary = ctxbin::ContextBinary::fromBytes(bytes, "newer.bin");
  ASSERT_TRUE(binary.isOk()) << binary.status().toString();
  auto partitions = binary.value()->partitions();
  ASSERT_TRUE(partitions.isOk()) << partitions.status().toString();
  EXPECT_EQ(partitions->size(), plain.model.partitions.size());
  auto info = inspectContextBinary(bytes, "newer.bin");
  ASSERT_TRUE(info.isOk()) << info.status().toString();
  EXPECT_EQ(info->formatVersion, "1.7");
  EXPECT_EQ(info->sections.back().kind, "unknown (kind 42)");
}

// The session flow that writes an EPContext model (ep.context_enable=1) stores the choices too; a session from that
// ctx model runs them with no tuning.
TEST(AutotuneBinary, EpContextGenerationStoresTheChoices) {
  REQUIRE_VULKAN();
  testing::TempDir dir;
  SessionOptions options = tunedOptions();
  ASSERT_TRUE(options.addConfigEntry("ep.context_enable", "1").isOk());
  ASSERT_TRUE(options.addConfigEntry("ep.context_file_path", dir.file("tiny_ctx.onnx")).isOk());
  auto generating = Session::create(kModel, options);
  ASSERT_TRUE(generating.isOk()) << generating.status().toString();
  EXPECT_GT(generating.value()->timings().autotune_ms, 0.0);
  auto info = inspectContextBinary(dir.file("tiny_vulkan.bin"));
  ASSERT_TRUE(info.isOk()) << info.status().toString();
  EXPECT_EQ(info->autotune, "tuned");
  size_t choices = 0;
  for (const auto& g : info->graphs) {
    for (const auto& k : g.tuning) {
      ++choices;
      EXPECT_GT(k.candidates.size(), 1u) << k.node;
      EXPECT_GT(k.chosenMs, 0.0) << k.node;
    }
  }
  EXPECT_GT(choices, 0u);
  auto loaded = Session::create(dir.file("tiny_ctx.onnx"), testing::vulkanOptions());
  ASSERT_TRUE(loaded.isOk()) << loaded.status().toString();
  auto expected = generating.value()->run(input());
  auto actual = loaded.value()->run(input());
  ASSERT_TRUE(expected.isOk() && actual.isOk()) << actual.status().toString();
  EXPECT_EQ(loaded.value()->timings().autotune_ms, 0.0);
  expectClose(*expected, *actual);
}

// Autotune reports progress kernel by kernel and honours a cancel between kernels (issue 33: a cancel pressed during
// the autotune stage waited for the whole tuning run, and progress stood at "0/1"): cancelled after the first kernel,
// the compile ends CANCELLED before the next is timed and writes nothing.
TEST(AutotuneBinary, ProgressIsPerKernelAndCancelStopsBetweenKernels) {
  REQUIRE_VULKAN();
  testing::TempDir dir;
  std::vector<std::pair<int64_t, int64_t>> tuning;  // (done, total) of each AUTOTUNE event
  SessionOptions options = tunedOptions();
  options.progress.onProgress = [&](const ProgressEvent& event) {
    if (event.step == ProgressStep::AUTOTUNE) tuning.emplace_back(event.done, event.total);
  };
  ModelCompilationOptions full(options);
  full.setInputModelPath(kModel);
  full.setOutputModelPath(dir.file("full_ctx.onnx"));
  ASSERT_TRUE(compileModel(full).isOk());
  ASSERT_GE(tuning.size(), 3u);  // before each kernel, then the end
  const int64_t kernels = tuning.front().second;
  ASSERT_GE(kernels, 2) << "tiny_cnn tunes several kernels";
  for (size_t i = 0; i + 1 < tuning.size(); ++i) EXPECT_EQ(tuning[i], std::make_pair(static_cast<int64_t>(i), kernels));
  EXPECT_EQ(tuning.back(), std::make_pair(kernels, kernels));

  tuning.clear();
  auto token = std::make_shared<CancellationToken>();
  options.progress.cancellation = token;
  options.progress.onProgress = [&](const ProgressEvent& event) {
    if (event.step != ProgressStep::AUTOTUNE) return;
    tuning.emplace_back(event.done, event.total);
    if (event.done == 1) token->cancel();  // one kernel tuned
  };
  ModelCompilationOptions cancelled(options);
  cancelled.setInputModelPath(kModel);
  cancelled.setOutputModelPath(dir.file("cancelled_ctx.onnx"));
  auto result = compileModel(cancelled);
  ASSERT_FALSE(result.isOk());
  EXPECT_EQ(result.status().code(), StatusCode::CANCELLED) << result.status().toString();
  ASSERT_EQ(tuning.size(), 2u) << "no kernel was timed after the cancel";
  EXPECT_FALSE(std::filesystem::exists(dir.file("cancelled_ctx.onnx")));
  EXPECT_FALSE(std::filesystem::exists(dir.file("cancelled_vulkan.bin")));
}

// A cross-compile for a device profile keeps the defaults and says so (timings here would not apply there).
TEST(AutotuneBinary, CrossCompileKeepsDefaultsAndSaysSo) {
  REQUIRE_VULKAN();
  testing::TempDir dir;
  SessionOptions options = tunedOptions();
  ASSERT_TRUE(options.addConfigEntry("kiln.vulkan.target_profile",
                                     std::string(KILN_SOURCE_DIR) + "/resources/profiles/vulkan11_minimal.json").isOk());
  Compiled cross = compile(dir, options);
  ASSERT_FALSE(cross.binary.empty());
  EXPECT_EQ(cross.session->timings().autotune_ms, 0.0);
  EXPECT_EQ(tunedKernels(cross.model.partitions), 0u);
  auto info = inspectContextBinary(cross.binary);
  ASSERT_TRUE(info.isOk()) << info.status().toString();
  EXPECT_EQ(info->autotune, "defaults");
  ASSERT_FALSE(info->graphs.empty());
  for (const auto& g : info->graphs) {
    EXPECT_TRUE(g.tuning.empty());
    EXPECT_NE(g.tuningNote.find("cross-compiled"), std::string::npos) << g.tuningNote;
  }
}

}  // namespace
}  // namespace kiln
