// Saves one pipeline cache file over and over, to show that concurrent savers (several of these processes, each
// with several threads) never leave an unreadable file or a temp file behind. Needs no Vulkan device.
//
// Usage: pipeline_cache_stress save PATH ITERATIONS [THREADS]   every iteration opens PATH (which must be absent or
//                                                                clean), adds SPIR-V and saves; exit 1 on any
//                                                                unreadable read or failed save
//        pipeline_cache_stress read PATH ITERATIONS              waits for PATH to appear, then opens it over and over
//                                                                while others save it; exit 1 on any read that is not
//                                                                clean (or "no file"), or when no read was clean
//        pipeline_cache_stress verify PATH                       PATH opens cleanly and is the only file in its folder
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include "ep/vulkan/pipeline_cache.h"
#include "pipeline_cache_fixtures.h"

namespace {

using kiln::vk::PipelineCacheFile;

std::atomic<int> failures{0};

void fail(const std::string& message) {
  std::fprintf(stderr, "pipeline_cache_stress[%d]: %s\n", static_cast<int>(::getpid()), message.c_str());
  ++failures;
}

void saveLoop(const std::string& path, int iterations, uint32_t writer) {
  const auto device = kiln::testing::lavapipeIdentity();
  for (int i = 0; i < iterations && failures == 0; ++i) {
    auto cache = PipelineCacheFile::open(path, device);
    const std::string reason = cache->missReason();
    if (!reason.empty() && reason != "no file") return fail("iteration " + std::to_string(i) + " read: " + reason);
    // Large enough that a torn write would show; different every time so that every save writes.
    cache->addSpirv(writer, kiln::testing::sampleSpirv(writer * 1000 + static_cast<uint32_t>(i), 4096));
    kiln::Status saved = cache->save(kiln::testing::driverBlobFor(device, 64));
    if (!saved.isOk()) return fail("iteration " + std::to_string(i) + " save: " + saved.message());
  }
}

// A reader beside the savers: every open sees either no file yet or a whole, valid one (never a torn write).
int readLoop(const std::string& path, int iterations) {
  const auto device = kiln::testing::lavapipeIdentity();
  // Start with the first save (within 60 s), so that the reads overlap the saves rather than precede them.
  for (int waited = 0; !std::filesystem::exists(path) && waited < 60000; ++waited) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  int clean = 0;
  for (int i = 0; i < iterations && failures == 0; ++i) {
    auto cache = PipelineCacheFile::open(path, device);
    const std::string reason = cache->missReason();
    if (reason.empty()) {
      ++clean;
    } else if (reason != "no file") {
      fail("read " + std::to_string(i) + ": " + reason);
    }
  }
  std::fprintf(stderr, "pipeline_cache_stress[%d]: %d of %d reads found a whole file\n", static_cast<int>(::getpid()),
               clean, iterations);
  if (clean == 0) fail("no read found the file");
  return failures == 0 ? 0 : 1;
}

int verify(const std::string& path) {
  auto cache = PipelineCacheFile::open(path, kiln::testing::lavapipeIdentity());
  if (!cache->missReason().empty()) fail("final file: " + cache->missReason());
  if (cache->entryCount() == 0) fail("final file has no entries");
  const std::filesystem::path file(path);
  for (const auto& entry : std::filesystem::directory_iterator(file.parent_path())) {
    if (entry.path().filename() != file.filename()) fail("left behind: " + entry.path().string());
  }
  return failures == 0 ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string mode = argc > 2 ? argv[1] : "";
  if (mode == "verify" && argc == 3) return verify(argv[2]);
  if (mode == "read" && argc == 4) return readLoop(argv[2], std::atoi(argv[3]));
  if (mode != "save" || argc < 4 || argc > 5) {
    std::fprintf(stderr, "usage: pipeline_cache_stress save PATH ITERATIONS [THREADS] | read PATH ITERATIONS | verify PATH\n");
    return 2;
  }
  const int iterations = std::atoi(argv[3]);
  const int threads = argc == 5 ? std::atoi(argv[4]) : 2;
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t) {
    // Writer ids differ across processes too (pid), so every process adds its own entries.
    const auto writer = static_cast<uint32_t>((::getpid() % 100000) * 8 + t);
    pool.emplace_back(saveLoop, std::string(argv[2]), iterations, writer);
  }
  for (auto& thread : pool) thread.join();
  return failures == 0 ? 0 : 1;
}
