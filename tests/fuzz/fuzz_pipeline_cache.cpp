// The Vulkan pipeline cache file reader: the input is a .vkcache file, read for the lavapipe device profile. Most
// mutations only break a checksum, so each input is read twice: as given, and re-sealed (the three XXH3 checksums
// recomputed over the sections the header claims) so the checks behind the checksums see mutated content too. A
// file that reads as usable must survive its own round trip (serialize, read again: usable, same entry count).
#include <xxhash.h>

#include <cstdlib>
#include <cstring>
#include <vector>

#include "device/device_profile.h"
#include "ep/vulkan/pipeline_cache.h"
#include "fuzz_support.h"

namespace {

namespace layout = kiln::vk::pipeline_cache_layout;

uint64_t u64At(const std::vector<std::byte>& bytes, size_t offset) {
  uint64_t value = 0;
  std::memcpy(&value, bytes.data() + offset, sizeof value);
  return value;
}

void setChecksum(std::vector<std::byte>& bytes, size_t at, size_t begin, size_t end) {
  uint64_t sum = XXH3_64bits(bytes.data() + begin, end - begin);
  std::memcpy(bytes.data() + at, &sum, sizeof sum);
}

// The input with valid checksums for the section sizes it claims (clamped to the file).
std::vector<std::byte> resealed(std::span<const std::byte> input) {
  std::vector<std::byte> bytes(input.begin(), input.end());
  if (bytes.size() < layout::kHeaderBytes) return bytes;
  const size_t spirvEnd = layout::kHeaderBytes +
                          static_cast<size_t>(std::min<uint64_t>(u64At(bytes, layout::kSpirvSizeOffset),
                                                                 bytes.size() - layout::kHeaderBytes));
  setChecksum(bytes, layout::kSpirvChecksumOffset, layout::kHeaderBytes, spirvEnd);
  setChecksum(bytes, layout::kDriverBlobChecksumOffset, spirvEnd, bytes.size());
  setChecksum(bytes, layout::kHeaderChecksumOffset, 0, layout::kHeaderChecksumOffset);
  return bytes;
}

void readOnce(std::span<const std::byte> bytes, const kiln::vk::DeviceInfo& device) {
  const std::string path = (kiln::fuzz::scratchDir() / "fuzz.vkcache").string();
  auto cache = kiln::vk::PipelineCacheFile::fromBytes(path, bytes, device);
  kiln::fuzz::note(cache->missReason().empty() ? "fromBytes: usable" : ("fromBytes: miss, " + cache->missReason()).c_str(), kiln::Status());
  (void)cache->driverBlobReason();
  (void)cache->findSpirv(0);
  if (!cache->missReason().empty()) return;
  auto image = cache->serialize(cache->driverBlob());
  auto again = kiln::vk::PipelineCacheFile::fromBytes(path, image, device);
  if (!again->missReason().empty()) std::abort();  // the engine's own output must read back
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static const kiln::vk::DeviceInfo device = [] {
    kiln::fuzz::quietLogging();
    auto profile = kiln::vk::readDeviceProfile((kiln::fuzz::sourceDir() / "resources/profiles/lavapipe.json").string());
    if (!profile.isOk()) std::abort();
    return *profile;
  }();
  const auto bytes = kiln::fuzz::asBytes(data, size);
  readOnce(bytes, device);
  readOnce(resealed(bytes), device);
  return 0;
}
