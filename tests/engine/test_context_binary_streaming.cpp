// Streaming the context binary (issue 23, item 4): the writer lays the binary out and hashes it in a first pass
// over the weights and streams it in a second, reading each weight from its source (a tensor in memory, or an
// external-data file in bounded chunks). Small cases check the streamed bytes against the in-memory encoding and
// the bad inputs; the large case streams a binary of more than 2 GB of weights (64 MiB tensors held in an
// external-data file the test writes) through a hashing sink with at most 256 MB resident. No Vulkan device.
#include <gtest/gtest.h>
#include <xxhash.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "context_binary/context_binary.h"
#include "context_binary/format.h"
#include "device/device_profile.h"
#include "test_models.h"
#include "process_status.h"

namespace kiln {
namespace {

namespace fs = std::filesystem;

vk::DeviceInfo syntheticDevice() {
  vk::DeviceInfo d;
  d.name = "Synthetic GPU";
  d.type = VulkanDeviceType::DISCRETE;
  d.vendorId = 0x1002;
  d.apiVersion = (1u << 22) | (3u << 12);
  d.driverName = "synthetic";
  d.driverInfo = "synthetic 1.0";
  d.subgroupSize = 32;
  d.maxComputeWorkGroupInvocations = 1024;
  d.maxComputeWorkGroupSize = {1024, 1024, 64};
  d.maxComputeWorkGroupCount = {65535, 65535, 65535};
  d.maxPushConstantsSize = 128;
  d.maxStorageBufferRange = 128u << 20;
  return d;
}

// One partition whose single node reads every initializer `names` (so each is stored); `value(i)` gives tensor i.
template <class ValueOf>
ctxbin::BinaryContents contentsWith(size_t count, ValueOf value) {
  auto graph = std::make_shared<ir::Graph>();
  graph->name = "streamed_vulkan_0";
  ir::Node concat;
  concat.name = "concat";
  concat.opType = "Concat";
  concat.outputs = {"y"};
  for (size_t i = 0; i < count; ++i) {
    const std::string name = "w" + std::to_string(i);
    concat.inputs.push_back(name);
    graph->initializers[name] = value(i);
  }
  graph->nodes = {concat};
  graph->outputs = {{"y", ir::ValueKind::TENSOR, DataType::FLOAT, std::nullopt}};
  CompiledPartition p;
  p.name = graph->name;
  p.executionProvider = "VulkanExecutionProvider";
  p.outputs = {"y"};
  p.graph = graph;
  p.opsets = {{"", 17}};
  p.nodes = {CompiledNode{}};
  ctxbin::BinaryContents contents;
  contents.target = syntheticDevice();
  contents.targetKind = ctxbin::TargetKind::PROFILE;
  contents.partitions = {p};
  return contents;
}

// Tensor i's bytes: distinct per tensor, cheap to generate at GB scale (tensor `copyOf` repeats tensor 0).
void fillTensorBytes(size_t tensor, uint64_t offset, std::span<std::byte> out) {
  auto* words = reinterpret_cast<uint32_t*>(out.data());
  const uint64_t first = offset / 4;
  for (size_t k = 0; k < out.size() / 4; ++k) {
    const uint64_t x = (first + k) * 0x9E3779B97F4A7C15ull ^ (static_cast<uint64_t>(tensor) << 40);
    words[k] = static_cast<uint32_t>(x >> 29) & 0x3f7fffffu;  // finite floats
  }
}

// Writes `count` tensors of `tensorBytes` each into `path`, back to back; tensor `count - 1` repeats tensor 0
// (deduplicated by the writer after comparing the two file ranges). Returns false when writing failed.
bool writeWeightsFile(const std::string& path, size_t count, uint64_t tensorBytes) {
  std::FILE* file = std::fopen(path.c_str(), "wb");
  if (!file) return false;
  std::vector<std::byte> chunk(std::min<uint64_t>(tensorBytes, 4u << 20));
  bool ok = true;
  for (size_t t = 0; t < count && ok; ++t) {
    for (uint64_t at = 0; at < tensorBytes && ok; at += chunk.size()) {
      const auto piece = std::span(chunk).first(static_cast<size_t>(std::min<uint64_t>(chunk.size(), tensorBytes - at)));
      fillTensorBytes(t + 1 == count ? 0 : t, at, piece);
      ok = std::fwrite(piece.data(), 1, piece.size(), file) == piece.size();
    }
  }
  return std::fclose(file) == 0 && ok;
}

// Contents whose `count` float tensors of `elements` each lie in `path` (as writeWeightsFile wrote them).
ctxbin::BinaryContents externalContents(const std::string& path, size_t count, int64_t elements) {
  auto contents = contentsWith(count, [&](size_t) { return Tensor::wrap(DataType::FLOAT, {elements}, nullptr); });
  const uint64_t bytes = static_cast<uint64_t>(elements) * 4;
  for (size_t i = 0; i < count; ++i) contents.externalWeights["w" + std::to_string(i)] = {path, i * bytes, bytes};
  return contents;
}

// The same tensors in memory.
ctxbin::BinaryContents inMemoryContents(size_t count, int64_t elements) {
  return contentsWith(count, [&](size_t i) {
    Tensor t(DataType::FLOAT, {elements});
    fillTensorBytes(i + 1 == count ? 0 : i, 0, std::span(static_cast<std::byte*>(t.rawData()), t.byteSize()));
    return t;
  });
}

std::vector<std::byte> collect(const ctxbin::PreparedContextBinary& binary, size_t* largestChunk = nullptr) {
  std::vector<std::byte> bytes;
  const Status streamed = binary.stream([&](std::span<const std::byte> chunk) {
    if (largestChunk) *largestChunk = std::max(*largestChunk, chunk.size());
    bytes.insert(bytes.end(), chunk.begin(), chunk.end());
    return Status::ok();
  });
  EXPECT_TRUE(streamed.isOk()) << streamed.toString();
  return bytes;
}

TEST(ContextBinaryStreaming, ExternalWeightsStreamTheSameBytesAsTensorsInMemory) {
  testing::TempDir dir;
  const std::string path = dir.file("weights.bin");
  constexpr size_t kCount = 4;
  constexpr int64_t kElements = 3 * 1024 * 1024 + 5;  // chunks of 4 MiB and an odd tail
  ASSERT_TRUE(writeWeightsFile(path, kCount, kElements * 4));

  auto memory = ctxbin::encodeContextBinary(inMemoryContents(kCount, kElements));
  ASSERT_TRUE(memory.isOk()) << memory.status().toString();
  auto prepared = ctxbin::PreparedContextBinary::prepare(externalContents(path, kCount, kElements));
  ASSERT_TRUE(prepared.isOk()) << prepared.status().toString();
  EXPECT_EQ(prepared.value()->weightStats().blobs, kCount - 1);  // the repeated tensor is stored once
  size_t largest = 0;
  const auto streamed = collect(*prepared.value(), &largest);
  EXPECT_LE(largest, ctxbin::kStreamChunkBytes);
  ASSERT_EQ(streamed.size(), prepared.value()->fileSize());
  EXPECT_TRUE(streamed == memory.value()) << "the streamed binary differs from the in-memory encoding";
  EXPECT_EQ(std::memcmp(streamed.data(), prepared.value()->head().bytes.data(), prepared.value()->head().bytes.size()), 0);

  // It reads back: every hash checks and the weights are the file's bytes.
  auto binary = ctxbin::ContextBinary::fromBytes(streamed, "streamed");
  ASSERT_TRUE(binary.isOk()) << binary.status().toString();
  auto partitions = binary.value()->partitions();
  ASSERT_TRUE(partitions.isOk()) << partitions.status().toString();
  const Tensor& w1 = partitions.value()[0].graph->initializers.at("w1");
  std::vector<std::byte> expected(w1.byteSize());
  fillTensorBytes(1, 0, expected);
  EXPECT_EQ(std::memcmp(w1.rawData(), expected.data(), expected.size()), 0);
}

TEST(ContextBinaryStreaming, BadExternalWeightSourcesFailClearly) {
  testing::TempDir dir;
  const std::string path = dir.file("weights.bin");
  ASSERT_TRUE(writeWeightsFile(path, 2, 4096));

  auto missing = ctxbin::PreparedContextBinary::prepare(externalContents(dir.file("absent.bin"), 2, 1024));
  ASSERT_FALSE(missing.isOk());
  EXPECT_EQ(missing.status().code(), StatusCode::NO_SUCHFILE) << missing.status().toString();

  auto folder = ctxbin::PreparedContextBinary::prepare(externalContents(dir.path().string(), 2, 1024));
  ASSERT_FALSE(folder.isOk());
  EXPECT_EQ(folder.status().code(), StatusCode::INVALID_ARGUMENT) << folder.status().toString();

  auto wrongSize = externalContents(path, 2, 1024);
  wrongSize.externalWeights["w1"].size = 4000;
  auto refused = ctxbin::PreparedContextBinary::prepare(wrongSize);
  ASSERT_FALSE(refused.isOk());
  EXPECT_EQ(refused.status().code(), StatusCode::INVALID_ARGUMENT) << refused.status().toString();

  auto pastEnd = externalContents(path, 2, 1024);
  pastEnd.externalWeights["w1"].offset = 6000;  // the file has 8192 bytes
  auto truncated = ctxbin::PreparedContextBinary::prepare(pastEnd);
  ASSERT_FALSE(truncated.isOk());
  EXPECT_NE(truncated.status().message().find("ends at 8192"), std::string::npos) << truncated.status().toString();

  // A sink's failure stops the stream with its status.
  auto prepared = ctxbin::PreparedContextBinary::prepare(externalContents(path, 2, 1024));
  ASSERT_TRUE(prepared.isOk()) << prepared.status().toString();
  const Status stopped = prepared.value()->stream([](std::span<const std::byte>) {
    return Status(StatusCode::FAIL, "database is full");
  });
  EXPECT_EQ(stopped.message(), "database is full");
}

using testing::procStatusKb;

// A folder with room for `bytes` (and 512 MiB to spare): $TMPDIR, /tmp, /dev/shm, then the test's working folder
// (the build tree, which had room for the build); "" when none has it.
std::string roomyTempFolder(uint64_t bytes) {
  std::vector<std::string> folders;
  if (const char* tmp = std::getenv("TMPDIR"); tmp && *tmp) folders.emplace_back(tmp);
  folders.insert(folders.end(), {"/tmp", "/dev/shm", fs::current_path().string()});
  for (const std::string& folder : folders) {
    std::error_code ec;
    const auto space = fs::space(folder, ec);
    if (!ec && space.available > bytes + (512ull << 20)) return folder;
  }
  return {};
}

// The bar of issue 23: a binary of more than 2 GB of weights (34 tensors of 64 MiB, lavapipe's largest buffer is
// 128 MiB, one a repeat) streams through a hashing sink with at most 256 MB more resident, nothing of the binary on
// disk; a second stream of the same prepared binary hashes the same, and every section's bytes hash as the
// section table (written before them, from the first pass) says.
TEST(ContextBinaryStreaming, MoreThanTwoGigabytesOfWeightsStreamWithBoundedMemory) {
  constexpr size_t kTensors = 34;
  constexpr int64_t kElements = 16 * 1024 * 1024;  // 64 MiB of floats
  constexpr uint64_t kTensorBytes = kElements * 4;
  const std::string folder = roomyTempFolder(kTensors * kTensorBytes);
  if (folder.empty()) GTEST_SKIP() << "no room for the 2.2 GB external-data file in $TMPDIR, /tmp, /dev/shm or the build tree";
  testing::TempDir dir;  // under the system temp folder
  const std::string path = (fs::path(folder) / (dir.path().filename().string() + "_weights.bin")).string();
  struct Remove {
    std::string path;
    ~Remove() { std::remove(path.c_str()); }
  } removeAfter{path};
  ASSERT_TRUE(writeWeightsFile(path, kTensors, kTensorBytes)) << path;

  // Peak RSS from here on: "5" resets VmHWM to the current RSS (Linux 4.0+); without it the peak since start.
  { std::ofstream("/proc/self/clear_refs") << "5"; }
  const uint64_t baselineKb = procStatusKb("VmRSS");

  auto prepared = ctxbin::PreparedContextBinary::prepare(externalContents(path, kTensors, kElements));
  ASSERT_TRUE(prepared.isOk()) << prepared.status().toString();
  const ctxbin::PreparedContextBinary& binary = *prepared.value();
  EXPECT_EQ(binary.weightStats().blobs, kTensors - 1);
  const auto& sections = binary.head().sections;
  uint64_t weightBytes = 0;
  for (const auto& s : sections) weightBytes += s.kind == ctxbin::SectionKind::WEIGHTS ? s.size : 0;
  EXPECT_GT(weightBytes, 2'000'000'000u);
  EXPECT_GT(binary.fileSize(), uint64_t{2} << 30);

  // The hashing sink: the whole stream, and each section's bytes as they pass.
  struct Hashing {
    std::unique_ptr<XXH3_state_t, decltype(&XXH3_freeState)> whole{XXH3_createState(), &XXH3_freeState};
    std::unique_ptr<XXH3_state_t, decltype(&XXH3_freeState)> section{XXH3_createState(), &XXH3_freeState};
    uint64_t at = 0;
    size_t largestChunk = 0;
    std::vector<std::byte> head;
    std::vector<uint64_t> sectionHashes;
  };
  auto hashStream = [&](Hashing& h) {
    XXH3_64bits_reset(h.whole.get());
    size_t next = 0;  // the section whose bytes come next
    const Status streamed = binary.stream([&](std::span<const std::byte> chunk) {
      h.largestChunk = std::max(h.largestChunk, chunk.size());
      XXH3_64bits_update(h.whole.get(), chunk.data(), chunk.size());
      while (!chunk.empty()) {
        if (h.head.size() < binary.head().bytes.size()) {
          const size_t take = std::min(chunk.size(), binary.head().bytes.size() - h.head.size());
          h.head.insert(h.head.end(), chunk.begin(), chunk.begin() + static_cast<ptrdiff_t>(take));
        }
        // Within section `next`, or in the padding before it.
        const auto& s = next < sections.size() ? sections[next] : sections.back();
        uint64_t take = chunk.size();
        if (next < sections.size() && h.at < s.offset) {
          take = std::min<uint64_t>(take, s.offset - h.at);
        } else if (next < sections.size()) {
          if (h.at == s.offset) XXH3_64bits_reset(h.section.get());
          take = std::min<uint64_t>(take, s.offset + s.size - h.at);
          XXH3_64bits_update(h.section.get(), chunk.data(), take);
          if (h.at + take == s.offset + s.size) {
            h.sectionHashes.push_back(XXH3_64bits_digest(h.section.get()));
            ++next;
          }
        }
        h.at += take;
        chunk = chunk.subspan(take);
      }
      return Status::ok();
    });
    EXPECT_TRUE(streamed.isOk()) << streamed.toString();
    return static_cast<uint64_t>(XXH3_64bits_digest(h.whole.get()));
  };
  Hashing first, second;
  const uint64_t firstHash = hashStream(first);
  const uint64_t secondHash = hashStream(second);
  const uint64_t peakKb = procStatusKb("VmHWM");

  EXPECT_EQ(first.at, binary.fileSize());
  EXPECT_EQ(firstHash, secondHash);
  EXPECT_TRUE(first.head == binary.head().bytes);
  ASSERT_EQ(first.sectionHashes.size(), sections.size());
  for (size_t i = 0; i < sections.size(); ++i) {
    EXPECT_EQ(first.sectionHashes[i], sections[i].hash) << ctxbin::sectionKindName(sections[i].kind) << " section";
  }
  EXPECT_LE(first.largestChunk, ctxbin::kStreamChunkBytes);
  const uint64_t growthMb = peakKb > baselineKb ? (peakKb - baselineKb) / 1024 : 0;
  std::printf("streamed %llu bytes (%llu of weights) twice, peak RSS growth %llu MiB\n",
              static_cast<unsigned long long>(binary.fileSize()), static_cast<unsigned long long>(weightBytes),
              static_cast<unsigned long long>(growthMb));
  EXPECT_LE(peakKb - std::min(peakKb, baselineKb), 256'000'000u / 1024)  // 256 MB
      << "baseline " << baselineKb << " kB, peak " << peakKb << " kB";
}

}  // namespace
}  // namespace kiln
