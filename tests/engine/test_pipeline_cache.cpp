// The Vulkan pipeline cache file: round trip, saving only what changed, environment mismatches named by field,
// corruption of every kind (flipped bytes, truncation, huge sizes behind valid checksums) as a counted miss, the
// driver blob's VkPipelineCacheHeaderVersionOne checks, spirvKey. Needs no Vulkan device; the session tests that
// do are in test_pipeline_cache_session.cpp.
#include <gtest/gtest.h>

#define XXH_INLINE_ALL  // the test recomputes checksums with its own copy of xxHash, as a second reader would
#include <xxhash.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <optional>
#include <utility>

#include "ep/vulkan/pipeline_cache.h"
#include "ep/vulkan/shader_library.h"
#include "kiln/log.h"
#include "kiln/pipeline_cache.h"
#include "kiln/version.h"
#include "pipeline_cache_fixtures.h"
#include "test_models.h"

namespace kiln {
namespace {

namespace layout = vk::pipeline_cache_layout;
using testing::driverBlobFor;
using testing::sampleSpirv;
using testing::lavapipeIdentity;
using Bytes = std::vector<std::byte>;

// A saved image with three entries and a driver blob with 16 payload bytes.
Bytes sampleImage(const vk::DeviceInfo& device = lavapipeIdentity()) {
  auto cache = vk::PipelineCacheFile::empty("unused.vkcache", device);
  for (uint32_t k = 1; k <= 3; ++k) cache->addSpirv(k * 1000, sampleSpirv(k, 4 + k));
  return cache->serialize(driverBlobFor(device, 16));
}

uint64_t getU64(const Bytes& b, size_t at) {
  uint64_t v = 0;
  for (size_t i = 0; i < 8; ++i) v |= static_cast<uint64_t>(b[at + i]) << (8 * i);
  return v;
}
void putU64(Bytes& b, size_t at, uint64_t v) {
  for (size_t i = 0; i < 8; ++i) b[at + i] = static_cast<std::byte>(v >> (8 * i));
}
void putU32(Bytes& b, size_t at, uint32_t v) {
  for (size_t i = 0; i < 4; ++i) b[at + i] = static_cast<std::byte>(v >> (8 * i));
}
uint32_t getU32(const Bytes& b, size_t at) { return static_cast<uint32_t>(getU64(b, at) & 0xffffffffu); }

// Recomputes the digest of the entry at `at` (as a writer that changed its key or words would).
void resealEntry(Bytes& b, size_t at) {
  std::vector<uint32_t> words(getU32(b, at + 8));
  std::memcpy(words.data(), b.data() + at + 16, 4 * words.size());
  putU32(b, at + 12, layout::entryDigest(getU64(b, at), words));
}

// Recomputes every checksum from the size fields (as far as they fit), so a patched field reaches the checks
// behind the checksums: bounds, counts and entry sizes.
void reseal(Bytes& b) {
  const uint64_t spirv = std::min<uint64_t>(getU64(b, layout::kSpirvSizeOffset), b.size() - layout::kHeaderBytes);
  putU64(b, layout::kSpirvChecksumOffset, XXH3_64bits(b.data() + layout::kHeaderBytes, spirv));
  const size_t blobAt = layout::kHeaderBytes + spirv;
  putU64(b, layout::kDriverBlobChecksumOffset, XXH3_64bits(b.data() + blobAt, b.size() - blobAt));
  putU64(b, layout::kHeaderChecksumOffset, XXH3_64bits(b.data(), layout::kHeaderChecksumOffset));
}

// The image must be rejected as a whole: a reason, no entries, no blob, and a lookup is a counted miss.
void expectRejected(const Bytes& image, const std::string& what, const std::string& reasonPart = "") {
  auto cache = vk::PipelineCacheFile::fromBytes("x.vkcache", image, lavapipeIdentity());
  const std::string reason = cache->missReason();
  EXPECT_FALSE(reason.empty()) << what;
  if (!reasonPart.empty()) {
    EXPECT_NE(reason.find(reasonPart), std::string::npos) << what << ": " << reason;
  }
  EXPECT_EQ(cache->entryCount(), 0u) << what;
  EXPECT_TRUE(cache->driverBlob().empty()) << what;
  EXPECT_FALSE(cache->findSpirv(1000).has_value()) << what;
  EXPECT_EQ(cache->misses(), 1) << what;
}

std::vector<std::string> folderEntries(const std::filesystem::path& folder) {
  std::vector<std::string> names;
  for (const auto& entry : std::filesystem::directory_iterator(folder)) names.push_back(entry.path().filename());
  return names;
}

// Captures the engine's log lines (info and above) instead of printing thousands of expected warnings.
class PipelineCacheFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    setLogSink(LogLevel::Info, [this](LogLevel, std::string_view line) { log_ += std::string(line) + "\n"; });
  }
  void TearDown() override { setLogSink(LogLevel::Warn, nullptr); }
  // The lines logged since the last call.
  std::string takeLog() { return std::exchange(log_, ""); }

 private:
  std::string log_;
};

TEST_F(PipelineCacheFileTest, RoundTripKeepsSpirvAndDriverBlob) {
  testing::TempDir dir;
  const std::string path = dir.file("sub/folder/model.vkcache");  // missing folders are created
  const auto device = lavapipeIdentity();
  auto first = vk::PipelineCacheFile::open(path, device);
  EXPECT_EQ(first->missReason(), "no file");
  EXPECT_FALSE(first->findSpirv(7).has_value());
  first->addSpirv(7, sampleSpirv(7));
  first->addSpirv(8, sampleSpirv(8, 100));
  const Bytes blob = driverBlobFor(device, 40);
  ASSERT_TRUE(first->needsSave(blob));
  ASSERT_TRUE(first->save(blob).isOk());
  EXPECT_FALSE(first->needsSave(blob));
  EXPECT_EQ(folderEntries(dir.path() / "sub/folder"), std::vector<std::string>{"model.vkcache"});  // no temp files

  auto second = vk::PipelineCacheFile::open(path, device);
  EXPECT_EQ(second->missReason(), "");
  EXPECT_EQ(second->driverBlobReason(), "");
  EXPECT_EQ(second->entryCount(), 2u);
  EXPECT_EQ(second->findSpirv(7), sampleSpirv(7));
  EXPECT_EQ(second->findSpirv(8), sampleSpirv(8, 100));
  EXPECT_FALSE(second->findSpirv(9).has_value());
  EXPECT_EQ(second->hits(), 2);
  EXPECT_EQ(second->misses(), 1);
  EXPECT_EQ(second->driverBlob(), blob);
  EXPECT_FALSE(second->needsSave(blob));
}

TEST_F(PipelineCacheFileTest, NeedsSaveOnlyWhenSomethingChanged) {
  const auto device = lavapipeIdentity();
  auto cache = vk::PipelineCacheFile::fromBytes("x.vkcache", sampleImage(), device);
  ASSERT_EQ(cache->missReason(), "");
  const Bytes blob = cache->driverBlob();
  EXPECT_FALSE(cache->needsSave(blob));
  cache->addSpirv(2000, sampleSpirv(2, 6));  // the same words it holds
  EXPECT_FALSE(cache->needsSave(blob));
  EXPECT_TRUE(cache->needsSave(driverBlobFor(device, 17)));  // the driver's blob grew
  Bytes foreign = driverBlobFor(device, 16);
  foreign[8] = std::byte{0x42};  // another vendor's blob is not written, so the file would lose its blob
  EXPECT_TRUE(cache->needsSave(foreign));
  cache->addSpirv(2000, sampleSpirv(99, 6));  // different words under a known key
  EXPECT_TRUE(cache->needsSave(blob));
}

TEST_F(PipelineCacheFileTest, RewriteDropsEntriesNobodyAskedFor) {
  testing::TempDir dir;
  const std::string path = dir.file("m.vkcache");
  const auto device = lavapipeIdentity();
  std::ofstream(path, std::ios::binary).write(reinterpret_cast<const char*>(sampleImage().data()),
                                              static_cast<std::streamsize>(sampleImage().size()));
  auto cache = vk::PipelineCacheFile::open(path, device);
  ASSERT_EQ(cache->entryCount(), 3u);
  ASSERT_TRUE(cache->findSpirv(1000).has_value());
  cache->addSpirv(42, sampleSpirv(42));
  ASSERT_TRUE(cache->save(cache->driverBlob()).isOk());
  auto reread = vk::PipelineCacheFile::open(path, device);
  EXPECT_EQ(reread->entryCount(), 2u);
  EXPECT_TRUE(reread->findSpirv(1000).has_value());
  EXPECT_TRUE(reread->findSpirv(42).has_value());
  EXPECT_FALSE(reread->findSpirv(2000).has_value());
}

// Each identity field of the device, changed alone, is a miss whose reason names it (and is logged).
TEST_F(PipelineCacheFileTest, EnvironmentMismatchNamesTheField) {
  const Bytes image = sampleImage();
  const std::vector<std::pair<std::string, std::function<void(vk::DeviceInfo&)>>> changes = {
      {"driverInfo", [](auto& d) { d.driverInfo = "Mesa 23.0.0 (LLVM 15.0.6)"; }},
      {"device name", [](auto& d) { d.name = "llvmpipe (LLVM 16.0.0, 256 bits)"; }},
      {"vendorID", [](auto& d) { d.vendorId = 0x10de; }},
      {"deviceID", [](auto& d) { d.deviceId = 0x2204; }},
      {"driverID", [](auto& d) { d.driverId = VK_DRIVER_ID_NVIDIA_PROPRIETARY; }},
      {"driverVersion", [](auto& d) { d.driverVersion = 2; }},
      {"apiVersion", [](auto& d) { d.apiVersion = VK_MAKE_API_VERSION(0, 1, 3, 239); }},
      {"pipelineCacheUUID", [](auto& d) { d.pipelineCacheUuid[15] = 1; }},
  };
  for (const auto& [field, change] : changes) {
    vk::DeviceInfo device = lavapipeIdentity();
    change(device);
    takeLog();
    auto cache = vk::PipelineCacheFile::fromBytes("x.vkcache", image, device);
    EXPECT_NE(cache->missReason().find(field + " differs"), std::string::npos) << field << ": " << cache->missReason();
    const std::string log = takeLog();
    EXPECT_NE(log.find(field + " differs"), std::string::npos) << log;
    EXPECT_EQ(cache->entryCount(), 0u);
    EXPECT_FALSE(cache->findSpirv(1000).has_value());
    EXPECT_EQ(cache->misses(), 1);
  }
}

TEST_F(PipelineCacheFileTest, OtherEngineVersionIsAMiss) {
  Bytes image = sampleImage();
  const std::string other = "9.9.9";
  putU64(image, 40, XXH3_64bits(other.data(), other.size()));
  std::fill(image.begin() + 48, image.begin() + 80, std::byte{0});
  std::memcpy(image.data() + 48, other.data(), other.size());
  reseal(image);
  expectRejected(image, "engine version", "engine version differs (written by Kiln 9.9.9, this is Kiln " +
                                              std::string(engineVersion()) + ")");
}

TEST_F(PipelineCacheFileTest, EveryFlippedHeaderByteIsAMiss) {
  const Bytes image = sampleImage();
  for (size_t i = 0; i < layout::kHeaderBytes; ++i) {
    for (uint8_t mask : {0x01, 0x80, 0xff}) {
      Bytes mutated = image;
      mutated[i] ^= std::byte{mask};
      expectRejected(mutated, "header byte " + std::to_string(i));
    }
  }
}

TEST_F(PipelineCacheFileTest, FlippedBodyBytesAreAMiss) {
  const Bytes image = sampleImage();
  for (size_t i = layout::kHeaderBytes; i < image.size(); i += 3) {
    Bytes mutated = image;
    mutated[i] ^= std::byte{0x10};
    expectRejected(mutated, "body byte " + std::to_string(i), "checksum");
  }
}

TEST_F(PipelineCacheFileTest, TruncationAndTrailingBytesAreAMiss) {
  const Bytes image = sampleImage();
  for (size_t size = 0; size < image.size(); ++size) {
    expectRejected(Bytes(image.begin(), image.begin() + static_cast<std::ptrdiff_t>(size)),
                   "truncated to " + std::to_string(size));
  }
  Bytes longer = image;
  longer.push_back(std::byte{0});
  expectRejected(longer, "one trailing byte");
}

// Huge or inconsistent sizes and counts behind valid checksums reach the bounds checks themselves.
TEST_F(PipelineCacheFileTest, HugeSizesAndCountsAreAMiss) {
  const Bytes image = sampleImage();
  const size_t firstEntry = layout::kHeaderBytes;
  const std::vector<std::tuple<std::string, std::function<void(Bytes&)>, std::string>> patches = {
      {"entry count max", [](Bytes& b) { putU32(b, layout::kEntryCountOffset, 0xffffffffu); }, "more than the limit"},
      {"entry count +1", [](Bytes& b) { putU32(b, layout::kEntryCountOffset, 4); }, "runs past"},
      {"entry count 0", [](Bytes& b) { putU32(b, layout::kEntryCountOffset, 0); }, "follow the last"},
      {"SPIR-V size max", [](Bytes& b) { putU64(b, layout::kSpirvSizeOffset, ~0ull); }, "SPIR-V section claims"},
      {"SPIR-V size -4", [](Bytes& b) { putU64(b, layout::kSpirvSizeOffset, getU64(b, layout::kSpirvSizeOffset) - 4); },
       "driver blob claims"},
      {"blob size max", [](Bytes& b) { putU64(b, layout::kDriverBlobSizeOffset, ~0ull); }, "driver blob claims"},
      {"blob size 0", [](Bytes& b) { putU64(b, layout::kDriverBlobSizeOffset, 0); }, "driver blob claims"},
      {"entry words max", [=](Bytes& b) { putU32(b, firstEntry + 8, 0xffffffffu); }, "claims 4294967295 words"},
      {"entry words 2", [=](Bytes& b) { putU32(b, firstEntry + 8, 2); }, "claims 2 words"},
      {"entry digest", [=](Bytes& b) { putU32(b, firstEntry + 12, getU32(b, firstEntry + 12) + 1); }, "its digest"},
      {"entry not SPIR-V", [=](Bytes& b) { putU32(b, firstEntry + 16, 0x12345678); }, "not SPIR-V"},
      {"one word changed", [=](Bytes& b) { putU32(b, firstEntry + 16 + 4 * 6, 0x12345678); }, "its digest"},
      {"duplicate key", [=](Bytes& b) {
         const size_t second = firstEntry + 16 + 4 * getU32(b, firstEntry + 8);
         putU64(b, second, 1000);
         resealEntry(b, second);
       }, "repeats key"},
      {"header size", [](Bytes& b) { putU32(b, 12, 0xffffffffu); }, "header size"},
      {"format version", [](Bytes& b) { putU32(b, 8, 3); }, "format version 3"},
      {"format 1 (no digests)", [](Bytes& b) { putU32(b, 8, 1); }, "format version 1"},
  };
  for (const auto& [what, patch, reason] : patches) {
    Bytes mutated = image;
    patch(mutated);
    reseal(mutated);
    expectRejected(mutated, what, reason);
  }
}

// A module behind a recomputed digest and checksums (a buggy writer, or a tampered file) that is not valid SPIR-V
// never reaches a driver: lavapipe crashed inside vkCreateComputePipelines on one (issue 31). findSpirv drops it, a
// counted miss that is compiled again, and the next save rewrites the file; the other entries are still hits.
TEST_F(PipelineCacheFileTest, InvalidSpirvBehindAValidDigestIsDroppedNotHandedOut) {
  Bytes image = sampleImage();
  const size_t firstEntry = layout::kHeaderBytes;
  putU32(image, firstEntry + 16 + 4 * 6, 0x12345678);  // OpCapability's operand: no such capability
  resealEntry(image, firstEntry);
  reseal(image);
  auto cache = vk::PipelineCacheFile::fromBytes("x.vkcache", image, lavapipeIdentity());
  ASSERT_EQ(cache->missReason(), "") << "the file itself is intact";
  const Bytes blob = cache->driverBlob();
  EXPECT_FALSE(cache->findSpirv(1000).has_value());
  EXPECT_EQ(cache->findSpirv(2000), sampleSpirv(2, 6));
  EXPECT_TRUE(cache->needsSave(blob));
  EXPECT_FALSE(cache->findSpirv(1000).has_value()) << "dropped, not revalidated";
}

// Random flips behind valid checksums: never a crash (run under the asan preset), and never more entries.
TEST_F(PipelineCacheFileTest, ResealedRandomFlipsNeverCrash) {
  const Bytes image = sampleImage();
  uint32_t state = 12345;
  for (int round = 0; round < 3000; ++round) {
    Bytes mutated = image;
    for (int flips = 0; flips < 1 + round % 4; ++flips) {
      state = state * 1664525u + 1013904223u;
      mutated[layout::kEntryCountOffset + (state >> 8) % (mutated.size() - layout::kEntryCountOffset)] ^=
          static_cast<std::byte>(1u << (state % 8));
    }
    reseal(mutated);
    auto cache = vk::PipelineCacheFile::fromBytes("x.vkcache", mutated, lavapipeIdentity());
    const uint64_t claimed = getU64(mutated, layout::kEntryCountOffset) & 0xffffffffu;
    EXPECT_EQ(cache->entryCount(), cache->missReason().empty() ? claimed : 0u) << cache->missReason();
    EXPECT_LE(cache->entryCount(), 3u);
  }
}

TEST_F(PipelineCacheFileTest, DriverBlobHeaderChecks) {
  const auto device = lavapipeIdentity();
  const Bytes good = driverBlobFor(device, 8);
  EXPECT_EQ(vk::validateDriverBlob(good, device), "");
  EXPECT_EQ(vk::validateDriverBlob({}, device), "");
  const std::vector<std::tuple<std::string, std::function<void(Bytes&)>, std::string>> patches = {
      {"short", [](Bytes& b) { b.resize(31); }, "shorter than"},
      {"headerSize 16", [](Bytes& b) { putU32(b, 0, 16); }, "headerSize 16"},
      {"headerSize past the end", [](Bytes& b) { putU32(b, 0, 41); }, "headerSize 41"},
      {"headerVersion", [](Bytes& b) { putU32(b, 4, 2); }, "headerVersion 2"},
      {"vendorID", [](Bytes& b) { putU32(b, 8, 0x1002); }, "vendorID"},
      {"deviceID", [](Bytes& b) { putU32(b, 12, 7); }, "deviceID"},
      {"pipelineCacheUUID", [](Bytes& b) { b[31] ^= std::byte{1}; }, "pipelineCacheUUID"},
  };
  for (const auto& [what, patch, reason] : patches) {
    Bytes blob = good;
    patch(blob);
    const std::string verdict = vk::validateDriverBlob(blob, device);
    EXPECT_NE(verdict.find(reason), std::string::npos) << what << ": " << verdict;

    // In a file: the blob is dropped with the reason and the SPIR-V is kept.
    auto writer = vk::PipelineCacheFile::empty("x.vkcache", device);
    writer->addSpirv(5, sampleSpirv(5));
    Bytes image = writer->serialize(good);
    const size_t blobAt = image.size() - good.size();
    image.resize(blobAt);
    image.insert(image.end(), blob.begin(), blob.end());
    putU64(image, layout::kDriverBlobSizeOffset, blob.size());
    reseal(image);
    auto reader = vk::PipelineCacheFile::fromBytes("x.vkcache", image, device);
    EXPECT_EQ(reader->missReason(), "") << what;
    EXPECT_NE(reader->driverBlobReason().find(reason), std::string::npos) << what << ": " << reader->driverBlobReason();
    EXPECT_TRUE(reader->driverBlob().empty()) << what;
    EXPECT_TRUE(reader->findSpirv(5).has_value()) << what;

    // On save: a blob that fails is not written.
    takeLog();
    const Bytes saved = writer->serialize(blob);
    EXPECT_EQ(getU64(saved, layout::kDriverBlobSizeOffset), 0u) << what;
    EXPECT_EQ(saved.size(), blobAt) << what;
    const std::string log = takeLog();
    EXPECT_NE(log.find("the driver blob is not saved"), std::string::npos) << what << ": " << log;
    EXPECT_NE(log.find(reason), std::string::npos) << what << ": " << log;
  }
}

TEST_F(PipelineCacheFileTest, UnreadablePathsAreAMissNotAnError) {
  testing::TempDir dir;
  auto folder = vk::PipelineCacheFile::open(dir.path().string(), lavapipeIdentity());
  EXPECT_EQ(folder->missReason(), "not a regular file");
  std::filesystem::create_directories(dir.path() / "blocker");
  auto blocked = vk::PipelineCacheFile::open(dir.file("blocker/x/y.vkcache"), lavapipeIdentity());
  std::ofstream(dir.file("blocker/x"), std::ios::binary) << "a file where a folder should be";
  blocked->addSpirv(1, sampleSpirv(1));
  const Status saved = blocked->save({});
  EXPECT_FALSE(saved.isOk());
  EXPECT_NE(saved.message().find("y.vkcache"), std::string::npos) << saved.message();
  EXPECT_TRUE(blocked->needsSave({}));  // still to be saved
}

TEST_F(PipelineCacheFileTest, SpirvKeyCoversDeviceDefinesVariantAndWorkgroup) {
  const auto device = lavapipeIdentity();
  vk::ShaderVariant variant{"unary", {}, 2, 64};
  variant.define("OP(v)", "(max(v, 0.0))");
  const uint64_t key = vk::spirvKey(variant, device);
  EXPECT_EQ(key, vk::spirvKey(variant, device));
  auto otherDevice = device;
  otherDevice.subgroupSize = 32;
  EXPECT_NE(key, vk::spirvKey(variant, otherDevice));
  otherDevice = device;
  otherDevice.shaderFloat16 = otherDevice.storageBuffer16Bit = true;
  EXPECT_NE(key, vk::spirvKey(variant, otherDevice));
  auto wider = variant;
  wider.localSizeX = 128;
  EXPECT_NE(key, vk::spirvKey(wider, device));
  auto otherOp = variant;
  otherOp.defines[0].second = "(min(v, 0.0))";
  EXPECT_NE(key, vk::spirvKey(otherOp, device));
  auto otherShader = variant;
  otherShader.shader = "binary";
  EXPECT_NE(key, vk::spirvKey(otherShader, device));
}

// Restores an environment variable when the test ends.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) {
    if (const char* old = std::getenv(name)) old_ = old;
    value ? ::setenv(name, value, 1) : ::unsetenv(name);
  }
  ~ScopedEnv() { old_ ? ::setenv(name_, old_->c_str(), 1) : ::unsetenv(name_); }

 private:
  const char* name_;
  std::optional<std::string> old_;
};

TEST(DefaultPipelineCachePath, IsTheModelHashUnderTheXdgCacheFolder) {
  testing::TempDir dir;
  const std::string model = dir.file("m.onnx");
  const std::string content(3 << 20, 'k');  // several of the hash's read chunks
  std::ofstream(model, std::ios::binary) << content;
  char hex[17];
  std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(XXH64(content.data(), content.size(), 0)));
  ASSERT_EQ(modelContentHash(model).value(), hex);

  ScopedEnv home("HOME", "/home/someone");
  {
    ScopedEnv xdg("XDG_CACHE_HOME", "/var/cache/me");
    EXPECT_EQ(defaultPipelineCachePath(model).value(), "/var/cache/me/kiln/" + std::string(hex) + ".vkcache");
  }
  for (const char* ignored : {static_cast<const char*>(nullptr), "", "relative/cache"}) {
    ScopedEnv xdg("XDG_CACHE_HOME", ignored);
    EXPECT_EQ(defaultPipelineCachePath(model).value(), "/home/someone/.cache/kiln/" + std::string(hex) + ".vkcache");
  }
  auto missing = defaultPipelineCachePath(dir.file("absent.onnx"));
  ASSERT_FALSE(missing.isOk());
  EXPECT_EQ(missing.status().code(), StatusCode::NO_SUCHFILE);
}

}  // namespace
}  // namespace kiln
