// The pipeline cache file in sessions (kiln.vulkan.pipeline_cache_path): the first session counts misses and
// writes the file, the next one is served by it (file hits are counted before the process-wide SPIR-V cache is
// asked, so this shows within one process too); corrupt and foreign files are misses with a logged reason and are
// rewritten; with the key unset nothing is read or written. Skips without a Vulkan device unless
// KILN_REQUIRE_VULKAN=1.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "ep/vulkan/pipeline_cache.h"
#include "ep/vulkan/vulkan_device.h"
#include "kiln/device.h"
#include "kiln/log.h"
#include "kiln/session.h"
#include "model_builder.h"
#include "pipeline_cache_fixtures.h"
#include "test_models.h"
#include "gtest_requirements.h"

namespace kiln {
namespace {

namespace fs = std::filesystem;

// Relu → Sigmoid → Add → Mul: a few shader variants, all on Vulkan.
std::string model(const testing::TempDir& dir) {
  testing::ModelBuilder m(13);
  m.input("x", {2, 8});
  m.initializer("b", {1, 8}, {1, 2, 3, 4, 5, 6, 7, 8});
  m.node("Relu", {"x"}, {"r"});
  m.node("Sigmoid", {"r"}, {"s"});
  m.node("Add", {"s", "b"}, {"a"});
  m.node("Mul", {"a", "a"}, {"y"});
  m.output("y", {2, 8});
  return m.save(dir.file("model.onnx"));
}

SessionOptions cacheOptions(const std::string& cachePath) {
  SessionOptions options;
  EXPECT_TRUE(options.addConfigEntry("kiln.execution_providers", "vulkan,cpu").isOk());
  EXPECT_TRUE(options.addConfigEntry("session.disable_cpu_ep_fallback", "1").isOk());
  if (!cachePath.empty()) {
    EXPECT_TRUE(options.addConfigEntry("kiln.vulkan.pipeline_cache_path", cachePath).isOk());
  }
  return options;
}

std::vector<float> run(Session& session) {
  std::vector<float> x(16);
  for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(i) * 0.37f - 3.0f;
  auto out = session.run({{"x", Tensor::fromVector<float>({2, 8}, x)}});
  EXPECT_TRUE(out.isOk()) << out.status().toString();
  if (!out.isOk()) return {};
  const Tensor& y = (*out)[0].tensor;
  return std::vector<float>(y.data<float>(), y.data<float>() + y.numel());
}

vk::DeviceInfo sessionDevice() {
  auto device = vk::selectDevice("", true);  // what kiln.execution_providers=vulkan picks
  EXPECT_TRUE(device.isOk()) << device.status().toString();
  return device.isOk() ? *device : vk::DeviceInfo{};
}

class LogCapture {
 public:
  LogCapture() {
    setLogSink(LogLevel::Info, [this](LogLevel, std::string_view line) { text_ += std::string(line) + "\n"; });
  }
  ~LogCapture() { setLogSink(LogLevel::Warn, nullptr); }
  const std::string& text() const { return text_; }

 private:
  std::string text_;
};

TEST(PipelineCacheSession, FirstSessionWritesTheFileSecondIsServedByIt) {
  REQUIRE_VULKAN();
  testing::TempDir dir;
  const std::string path = model(dir);
  const std::string cache = dir.file("cache/model.vkcache");
  auto first = Session::create(path, cacheOptions(cache));
  ASSERT_TRUE(first.isOk()) << first.status().toString();
  const WorkCounters& cold = (*first)->counters();
  EXPECT_GT(cold.pipeline_cache_misses, 0);
  EXPECT_EQ(cold.pipeline_cache_hits, 0);
  ASSERT_TRUE(fs::exists(cache));
  EXPECT_EQ(std::distance(fs::directory_iterator(dir.path() / "cache"), fs::directory_iterator()), 1);

  const vk::DeviceInfo device = sessionDevice();
  auto file = vk::PipelineCacheFile::open(cache, device);
  EXPECT_EQ(file->missReason(), "");
  EXPECT_EQ(static_cast<int64_t>(file->entryCount()), cold.pipeline_cache_misses);
  EXPECT_FALSE(file->driverBlob().empty());  // at least the driver's VkPipelineCacheHeaderVersionOne
  EXPECT_EQ(vk::validateDriverBlob(file->driverBlob(), device), "");
  const auto written = fs::last_write_time(cache);

  auto second = Session::create(path, cacheOptions(cache));
  ASSERT_TRUE(second.isOk()) << second.status().toString();
  const WorkCounters& warm = (*second)->counters();
  EXPECT_EQ(warm.pipeline_cache_hits, cold.pipeline_cache_misses);
  EXPECT_EQ(warm.pipeline_cache_misses, 0);
  EXPECT_EQ(warm.glslang_compiles, 0);
  EXPECT_EQ(warm.spirv_cache_hits, 0);  // the file answered before the process-wide cache was asked
  EXPECT_EQ(fs::last_write_time(cache), written);  // nothing new: not rewritten
  EXPECT_EQ(run(**first), run(**second));
}

TEST(PipelineCacheSession, CorruptFileIsALoggedMissAndIsRewritten) {
  REQUIRE_VULKAN();
  testing::TempDir dir;
  const std::string path = model(dir);
  const std::string cache = dir.file("model.vkcache");
  std::ofstream(cache, std::ios::binary) << "KILNVKPC and then nothing that makes sense";
  LogCapture log;
  auto session = Session::create(path, cacheOptions(cache));
  ASSERT_TRUE(session.isOk()) << session.status().toString();
  EXPECT_GT((*session)->counters().pipeline_cache_misses, 0);
  EXPECT_EQ((*session)->counters().pipeline_cache_hits, 0);
  EXPECT_NE(log.text().find("not used (corrupt): truncated"), std::string::npos) << log.text();
  auto file = vk::PipelineCacheFile::open(cache, sessionDevice());
  EXPECT_EQ(file->missReason(), "");
  EXPECT_EQ(static_cast<int64_t>(file->entryCount()), (*session)->counters().pipeline_cache_misses);
}

// A file from another Mesa build: on lavapipe only driverInfo tells them apart.
TEST(PipelineCacheSession, OtherDriverBuildIsAMissNamingDriverInfo) {
  REQUIRE_VULKAN();
  testing::TempDir dir;
  const std::string path = model(dir);
  const std::string cache = dir.file("model.vkcache");
  {
    auto first = Session::create(path, cacheOptions(cache));
    ASSERT_TRUE(first.isOk()) << first.status().toString();
  }
  vk::DeviceInfo older = sessionDevice();
  older.driverInfo = "Mesa 22.2.0 (LLVM 14.0.0)";
  auto foreign = vk::PipelineCacheFile::empty(cache, older);
  for (uint64_t key = 1; key <= 3; ++key) foreign->addSpirv(key, testing::sampleSpirv(static_cast<uint32_t>(key)));
  ASSERT_TRUE(foreign->save({}).isOk());

  LogCapture log;
  auto session = Session::create(path, cacheOptions(cache));
  ASSERT_TRUE(session.isOk()) << session.status().toString();
  EXPECT_GT((*session)->counters().pipeline_cache_misses, 0);
  EXPECT_EQ((*session)->counters().pipeline_cache_hits, 0);
  EXPECT_NE(log.text().find("driverInfo differs"), std::string::npos) << log.text();
  EXPECT_EQ(vk::PipelineCacheFile::open(cache, sessionDevice())->missReason(), "");  // rewritten for this driver
}

TEST(PipelineCacheSession, UnsetKeyReadsAndWritesNothing) {
  REQUIRE_VULKAN();
  testing::TempDir dir;
  const std::string path = model(dir);
  auto session = Session::create(path, cacheOptions(""));
  ASSERT_TRUE(session.isOk()) << session.status().toString();
  EXPECT_EQ((*session)->counters().pipeline_cache_hits, 0);
  EXPECT_EQ((*session)->counters().pipeline_cache_misses, 0);
  EXPECT_EQ(std::distance(fs::directory_iterator(dir.path()), fs::directory_iterator()), 1);  // the model only
}

}  // namespace
}  // namespace kiln
