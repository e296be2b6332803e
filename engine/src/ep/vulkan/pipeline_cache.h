// The Vulkan pipeline cache file (ncnn's design, engine/ARCHITECTURE.md "Names"): the SPIR-V of shader variants keyed by
// spirvKey, and the driver's VkPipelineCache blob, in one file whose header records the environment it was
// written in (engine version, device and driver identity). A cache file is untrusted input and only ever an
// optimization: a missing, foreign, stale or corrupt file is an empty cache with a logged reason, never an error.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "ep/vulkan/vulkan_device.h"
#include "kiln/status.h"

namespace kiln::vk {

// The file layout, format 2. Every integer is little-endian. Public so tests can patch single fields.
//   header (kHeaderBytes):
//     0 magic "KILNVKPC" | 8 u32 format version | 12 u32 header size | 16 u32 pointer size
//     20 u32 vendorID | 24 u32 deviceID | 28 u32 driverID | 32 u32 driverVersion | 36 u32 apiVersion
//     40 u64 XXH3 of the engine version | 48 char[32] engine version (NUL-padded, for messages only)
//     80 u64 XXH3 of driverInfo | 88 u64 XXH3 of the device name | 96 u8[16] pipelineCacheUUID
//     112 u32 SPIR-V entry count | 116 u32 reserved (0)
//     120 u64 SPIR-V section size | 128 u64 XXH3 of the SPIR-V section
//     136 u64 driver blob size | 144 u64 XXH3 of the driver blob | 152 u64 XXH3 of header bytes [0, 152)
//   SPIR-V section: entries in key order, each {u64 key, u32 word count, u32 entry digest} then the words; the
//     digest is the low 32 bits of XXH3-64 of the words seeded with the key (entryDigest), binding each module to
//     the key it is stored under (format 1 had a reserved 0 there: such files are a miss, and are rewritten)
//   driver blob: vkGetPipelineCacheData's output, verbatim (may be empty); the file ends with it
namespace pipeline_cache_layout {
// The digest of one SPIR-V entry (format 2).
uint32_t entryDigest(uint64_t key, std::span<const uint32_t> words);
constexpr char kMagic[8] = {'K', 'I', 'L', 'N', 'V', 'K', 'P', 'C'};
constexpr uint32_t kFormatVersion = 2;
constexpr size_t kHeaderBytes = 160;
constexpr size_t kEngineVersionTextBytes = 32;
constexpr size_t kEntryHeaderBytes = 16;
constexpr size_t kEntryCountOffset = 112;
constexpr size_t kSpirvSizeOffset = 120;
constexpr size_t kSpirvChecksumOffset = 128;
constexpr size_t kDriverBlobSizeOffset = 136;
constexpr size_t kDriverBlobChecksumOffset = 144;
constexpr size_t kHeaderChecksumOffset = 152;
// Limits on what a file may claim (beyond them it is treated as corrupt).
constexpr uint64_t kMaxFileBytes = 256ull << 20;
constexpr uint32_t kMaxEntries = 1u << 16;
}  // namespace pipeline_cache_layout

// "" when `blob` is empty or a VkPipelineCacheHeaderVersionOne blob for `device` (headerSize in [32, size],
// headerVersion ONE, vendorID, deviceID and pipelineCacheUUID equal to the device's); otherwise why not.
std::string validateDriverBlob(std::span<const std::byte> blob, const DeviceInfo& device);

// One pipeline cache file, loaded for one device. Thread-safe.
class PipelineCacheFile {
 public:
  // Reads `path` for `device`. Never fails: a missing file is an empty cache, and a file that does not match the
  // environment or is corrupt is an empty cache whose missReason() says why (logged: info for a mismatch, warn
  // for corruption).
  static std::shared_ptr<PipelineCacheFile> open(std::string path, const DeviceInfo& device);
  // An empty cache for `device` (as for a missing file) that save() writes to `path`.
  static std::shared_ptr<PipelineCacheFile> empty(std::string path, const DeviceInfo& device);
  // The same as open() for file contents already in memory; save() writes to `path`.
  static std::shared_ptr<PipelineCacheFile> fromBytes(std::string path, std::span<const std::byte> bytes,
                                                      const DeviceInfo& device);

  const std::string& path() const { return path_; }
  // Why the file's contents are not used: "" when they are, "no file" when there was none, else the failed check.
  std::string missReason() const;
  // Whether the miss is damage (a failed integrity or structure check), not another environment or no file.
  bool corrupt() const;
  // Why the file's driver blob was dropped while its SPIR-V was kept ("" when it was kept or absent).
  std::string driverBlobReason() const;

  // The SPIR-V stored under `key` (a spirvKey), counting a hit; nullopt, counting a miss, when there is none or when
  // the module read from the file fails SPIR-V validation (then it is dropped, and the file rewritten on save).
  std::optional<std::vector<uint32_t>> findSpirv(uint64_t key);
  // Stores SPIR-V under `key`; the cache then needs saving unless the same words were there already.
  void addSpirv(uint64_t key, std::vector<uint32_t> words);
  // The file's driver blob (validated for the device; empty when there was none or it was dropped).
  std::vector<std::byte> driverBlob() const;

  int64_t hits() const;
  int64_t misses() const;
  size_t entryCount() const;

  // True when save(driverBlob) would write something new: SPIR-V was added since the file was read or last
  // saved, or `driverBlob` differs from the one the file holds.
  bool needsSave(std::span<const std::byte> driverBlob) const;
  // The file image: the entries this process looked up or added (entries nobody asked for, such as SPIR-V of an
  // edited shader, are dropped so they do not pile up) and `driverBlob` when validateDriverBlob accepts it (a blob
  // it rejects is left out and the reason logged).
  std::vector<std::byte> serialize(std::span<const std::byte> driverBlob) const;
  // Writes serialize(driverBlob) to path() atomically (a unique temp file in the same folder, fsync, rename),
  // creating missing folders; concurrent savers, in this process or others, never leave a partial file. FAIL
  // with the reason when writing fails (the cache then still needs saving).
  Status save(std::span<const std::byte> driverBlob);

 private:
  struct Entry {
    std::vector<uint32_t> words;
    bool used = false;     // looked up or added by this process
    bool checked = false;  // validated (spirv_validation.h) or compiled by this process
  };

  PipelineCacheFile(std::string path, const DeviceInfo& device) : path_(std::move(path)), device_(device) {}
  void load(std::span<const std::byte> bytes);
  std::vector<std::byte> serializeLocked(std::span<const std::byte> driverBlob) const;

  const std::string path_;
  const DeviceInfo device_;
  mutable std::mutex mutex_;
  std::map<uint64_t, Entry> entries_;
  std::vector<std::byte> driverBlob_;
  std::string missReason_, driverBlobReason_;
  bool corrupt_ = false;
  bool changed_ = false;
  int64_t hits_ = 0, misses_ = 0;
};

}  // namespace kiln::vk
