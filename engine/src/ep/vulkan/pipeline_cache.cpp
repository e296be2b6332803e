#include "ep/vulkan/pipeline_cache.h"

#include <xxhash.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <filesystem>

#include "ep/vulkan/spirv_validation.h"
#include "kiln/version.h"
#include "util/file_io.h"
#include "util/log.h"
#include "util/stopwatch.h"

namespace kiln::vk {
namespace {

namespace layout = pipeline_cache_layout;

constexpr uint32_t kSpirvMagic = 0x07230203;
constexpr uint32_t kSpirvHeaderWords = 5;
constexpr size_t kDriverHeaderBytes = 32;  // VkPipelineCacheHeaderVersionOne

// Offsets of the identity fields (see the layout in pipeline_cache.h).
constexpr size_t kPointerSizeOffset = 16, kVendorOffset = 20, kDeviceOffset = 24, kDriverIdOffset = 28,
                 kDriverVersionOffset = 32, kApiVersionOffset = 36, kEngineHashOffset = 40, kEngineTextOffset = 48,
                 kDriverInfoOffset = 80, kDeviceNameOffset = 88, kUuidOffset = 96, kReservedOffset = 116;

// Little-endian reads; callers have checked the bounds.
uint32_t readU32(std::span<const std::byte> bytes, size_t offset) {
  uint32_t value = 0;
  for (size_t i = 0; i < 4; ++i) value |= static_cast<uint32_t>(bytes[offset + i]) << (8 * i);
  return value;
}

uint64_t readU64(std::span<const std::byte> bytes, size_t offset) {
  return readU32(bytes, offset) | static_cast<uint64_t>(readU32(bytes, offset + 4)) << 32;
}

void setU32(std::vector<std::byte>& out, size_t offset, uint32_t value) {
  for (size_t i = 0; i < 4; ++i) out[offset + i] = static_cast<std::byte>(value >> (8 * i));
}

void setU64(std::vector<std::byte>& out, size_t offset, uint64_t value) {
  setU32(out, offset, static_cast<uint32_t>(value));
  setU32(out, offset + 4, static_cast<uint32_t>(value >> 32));
}

void appendU32(std::vector<std::byte>& out, uint32_t value) {
  out.resize(out.size() + 4);
  setU32(out, out.size() - 4, value);
}

uint64_t checksum(std::span<const std::byte> bytes) { return XXH3_64bits(bytes.data(), bytes.size()); }
uint64_t textHash(const std::string& text) { return XXH3_64bits(text.data(), text.size()); }

std::string hex(uint64_t value) {
  char text[24];
  std::snprintf(text, sizeof text, "0x%llx", static_cast<unsigned long long>(value));
  return text;
}

std::string uuidHex(std::span<const std::byte> uuid) {
  std::string text;
  for (std::byte b : uuid) {
    char pair[3];
    std::snprintf(pair, sizeof pair, "%02x", static_cast<unsigned>(b));
    text += pair;
  }
  return text;
}

std::span<const std::byte> uuidOf(const DeviceInfo& device) {
  return std::as_bytes(std::span<const uint8_t>(device.pipelineCacheUuid));
}

// The engine version a file records, printable (it is only used in messages).
std::string storedEngineVersion(std::span<const std::byte> header) {
  std::string text;
  for (size_t i = 0; i < layout::kEngineVersionTextBytes; ++i) {
    const auto c = static_cast<unsigned char>(header[kEngineTextOffset + i]);
    if (c == 0) break;
    text += c >= 0x20 && c < 0x7f ? static_cast<char>(c) : '?';
  }
  return text;
}

// The first environment field of a (checksum-verified) header that differs from `device` and this engine, as a
// reason naming it; "" when all match.
std::string environmentMismatch(std::span<const std::byte> header, const DeviceInfo& device) {
  const std::string version = engineVersion();
  if (readU64(header, kEngineHashOffset) != textHash(version)) {
    return "engine version differs (written by Kiln " + storedEngineVersion(header) + ", this is Kiln " + version + ")";
  }
  const struct {
    const char* name;
    size_t offset;
    uint32_t expected;
  } fields[] = {{"pointer size", kPointerSizeOffset, static_cast<uint32_t>(sizeof(void*))},
                {"vendorID", kVendorOffset, device.vendorId},
                {"deviceID", kDeviceOffset, device.deviceId},
                {"driverID", kDriverIdOffset, device.driverId},
                {"driverVersion", kDriverVersionOffset, device.driverVersion},
                {"apiVersion", kApiVersionOffset, device.apiVersion}};
  for (const auto& field : fields) {
    const uint32_t stored = readU32(header, field.offset);
    if (stored != field.expected) {
      return std::string(field.name) + " differs (file " + hex(stored) + ", device " + hex(field.expected) + ")";
    }
  }
  // lavapipe's pipelineCacheUUID and driverVersion are constants: only driverInfo tells Mesa versions apart.
  if (readU64(header, kDriverInfoOffset) != textHash(device.driverInfo)) {
    return "driverInfo differs (written by another driver build; this driver is '" + device.driverInfo + "')";
  }
  if (readU64(header, kDeviceNameOffset) != textHash(device.name)) {
    return "device name differs (this device is '" + device.name + "')";
  }
  const auto storedUuid = header.subspan(kUuidOffset, 16);
  if (!std::equal(storedUuid.begin(), storedUuid.end(), uuidOf(device).begin())) {
    return "pipelineCacheUUID differs (file " + uuidHex(storedUuid) + ", device " + uuidHex(uuidOf(device)) + ")";
  }
  return "";
}

struct ParsedFile {
  std::map<uint64_t, std::vector<uint32_t>> spirv;
  std::span<const std::byte> driverBlob;
};

// Checks and decodes a whole file image. Returns "" on success, else the reason; `corrupt` tells damage (logged
// as a warning) from a file that is intact but was written for another environment (logged as information).
std::string parseImage(std::span<const std::byte> bytes, const DeviceInfo& device, ParsedFile& out, bool& corrupt) {
  corrupt = true;
  if (bytes.size() > layout::kMaxFileBytes) {
    return "the file is " + std::to_string(bytes.size()) + " bytes, over the " +
           std::to_string(layout::kMaxFileBytes) + "-byte limit";
  }
  if (bytes.size() < layout::kHeaderBytes) {
    return "truncated: " + std::to_string(bytes.size()) + " bytes, shorter than the " +
           std::to_string(layout::kHeaderBytes) + "-byte header";
  }
  if (std::memcmp(bytes.data(), layout::kMagic, sizeof layout::kMagic) != 0) {
    return "not a Kiln pipeline cache file (bad magic)";
  }
  const uint32_t format = readU32(bytes, 8);
  if (format != layout::kFormatVersion) {
    corrupt = false;
    return "format version " + std::to_string(format) + ", this Kiln reads " + std::to_string(layout::kFormatVersion);
  }
  if (const uint32_t headerSize = readU32(bytes, 12); headerSize != layout::kHeaderBytes) {
    return "header size " + std::to_string(headerSize) + ", expected " + std::to_string(layout::kHeaderBytes);
  }
  if (readU64(bytes, layout::kHeaderChecksumOffset) != checksum(bytes.first(layout::kHeaderChecksumOffset))) {
    return "header checksum mismatch";
  }
  corrupt = false;
  if (std::string mismatch = environmentMismatch(bytes, device); !mismatch.empty()) return mismatch;
  corrupt = true;

  // Sizes are compared against what is left, never added, so huge values cannot overflow.
  const uint64_t body = bytes.size() - layout::kHeaderBytes;
  const uint64_t spirvSize = readU64(bytes, layout::kSpirvSizeOffset);
  const uint64_t blobSize = readU64(bytes, layout::kDriverBlobSizeOffset);
  if (spirvSize > body) {
    return "the SPIR-V section claims " + std::to_string(spirvSize) + " bytes, the file has " + std::to_string(body) +
           " after the header";
  }
  if (blobSize != body - spirvSize) {
    return "the driver blob claims " + std::to_string(blobSize) + " bytes, the file has " +
           std::to_string(body - spirvSize) + " after the SPIR-V section";
  }
  const auto section = bytes.subspan(layout::kHeaderBytes, static_cast<size_t>(spirvSize));
  const auto blob = bytes.subspan(layout::kHeaderBytes + static_cast<size_t>(spirvSize));
  if (checksum(section) != readU64(bytes, layout::kSpirvChecksumOffset)) return "SPIR-V section checksum mismatch";
  if (checksum(blob) != readU64(bytes, layout::kDriverBlobChecksumOffset)) return "driver blob checksum mismatch";
  if (readU32(bytes, kReservedOffset) != 0) return "a reserved header field is not zero";

  const uint32_t count = readU32(bytes, layout::kEntryCountOffset);
  if (count > layout::kMaxEntries) {
    return "the file claims " + std::to_string(count) + " SPIR-V entries, more than the limit of " +
           std::to_string(layout::kMaxEntries);
  }
  size_t offset = 0;
  for (uint32_t i = 0; i < count; ++i) {
    const std::string entry = "SPIR-V entry " + std::to_string(i);
    if (section.size() - offset < layout::kEntryHeaderBytes) return entry + " runs past the end of its section";
    const uint64_t key = readU64(section, offset);
    const uint32_t words = readU32(section, offset + 8);
    const uint32_t digest = readU32(section, offset + 12);
    offset += layout::kEntryHeaderBytes;
    if (words < kSpirvHeaderWords || words > (section.size() - offset) / 4) {
      return entry + " claims " + std::to_string(words) + " words, its section has room for " +
             std::to_string((section.size() - offset) / 4);
    }
    std::vector<uint32_t> module(words);
    for (uint32_t w = 0; w < words; ++w) module[w] = readU32(section, offset + 4ull * w);
    offset += 4ull * words;
    if (module[0] != kSpirvMagic) return entry + " is not SPIR-V (bad magic number)";
    if (layout::entryDigest(key, module) != digest) return entry + "'s words do not match its digest (key " + hex(key) + ")";
    if (!out.spirv.emplace(key, std::move(module)).second) return entry + " repeats key " + hex(key);
  }
  if (offset != section.size()) {
    return std::to_string(section.size() - offset) + " bytes follow the last SPIR-V entry";
  }
  out.driverBlob = blob;
  return "";
}

}  // namespace

std::string validateDriverBlob(std::span<const std::byte> blob, const DeviceInfo& device) {
  if (blob.empty()) return "";
  if (blob.size() < kDriverHeaderBytes) {
    return "driver blob is " + std::to_string(blob.size()) + " bytes, shorter than VkPipelineCacheHeaderVersionOne";
  }
  // The spec writes these fields least significant byte first whatever the host's byte order.
  const uint32_t headerSize = readU32(blob, 0);
  if (headerSize < kDriverHeaderBytes || headerSize > blob.size()) {
    return "driver blob headerSize " + std::to_string(headerSize) + " is outside [32, " + std::to_string(blob.size()) +
           "]";
  }
  if (const uint32_t version = readU32(blob, 4); version != VK_PIPELINE_CACHE_HEADER_VERSION_ONE) {
    return "driver blob headerVersion " + std::to_string(version) + ", expected VK_PIPELINE_CACHE_HEADER_VERSION_ONE";
  }
  if (const uint32_t vendor = readU32(blob, 8); vendor != device.vendorId) {
    return "driver blob vendorID " + hex(vendor) + " differs from the device's " + hex(device.vendorId);
  }
  if (const uint32_t id = readU32(blob, 12); id != device.deviceId) {
    return "driver blob deviceID " + hex(id) + " differs from the device's " + hex(device.deviceId);
  }
  const auto uuid = blob.subspan(16, 16);
  if (!std::equal(uuid.begin(), uuid.end(), uuidOf(device).begin())) {
    return "driver blob pipelineCacheUUID " + uuidHex(uuid) + " differs from the device's " + uuidHex(uuidOf(device));
  }
  return "";
}

std::shared_ptr<PipelineCacheFile> PipelineCacheFile::open(std::string path, const DeviceInfo& device) {
  namespace fs = std::filesystem;
  Stopwatch clock;
  std::shared_ptr<PipelineCacheFile> cache = empty(std::move(path), device);
  std::error_code ec;
  const fs::file_status status = fs::status(cache->path_, ec);
  std::string problem;
  if (!fs::exists(status)) {
    log::debug("pipeline cache {}: no file yet", cache->path_);
    return cache;
  }
  if (!fs::is_regular_file(status)) {
    problem = "not a regular file";
  } else if (const auto size = fs::file_size(cache->path_, ec); !ec && size > layout::kMaxFileBytes) {
    problem = "the file is " + std::to_string(size) + " bytes, over the " + std::to_string(layout::kMaxFileBytes) +
              "-byte limit";
  } else if (auto bytes = readFileBytes(cache->path_); !bytes.isOk()) {
    problem = bytes.status().message();
  } else {
    cache->load(*bytes);
    log::debug("pipeline cache {}: read and checked in {:.2f} ms", cache->path_, clock.elapsedMs());
    return cache;
  }
  cache->missReason_ = problem;
  cache->corrupt_ = true;
  log::warn("pipeline cache {} not used: {}", cache->path_, problem);
  return cache;
}

std::shared_ptr<PipelineCacheFile> PipelineCacheFile::empty(std::string path, const DeviceInfo& device) {
  std::shared_ptr<PipelineCacheFile> cache(new PipelineCacheFile(std::move(path), device));
  cache->missReason_ = "no file";
  return cache;
}

std::shared_ptr<PipelineCacheFile> PipelineCacheFile::fromBytes(std::string path, std::span<const std::byte> bytes,
                                                                const DeviceInfo& device) {
  std::shared_ptr<PipelineCacheFile> cache(new PipelineCacheFile(std::move(path), device));
  cache->load(bytes);
  return cache;
}

void PipelineCacheFile::load(std::span<const std::byte> bytes) {
  std::lock_guard lock(mutex_);
  ParsedFile parsed;
  bool corrupt = false;
  missReason_ = parseImage(bytes, device_, parsed, corrupt);
  corrupt_ = !missReason_.empty() && corrupt;
  if (!missReason_.empty()) {
    if (corrupt) {
      log::warn("pipeline cache {} not used (corrupt): {}", path_, missReason_);
    } else {
      log::info("pipeline cache {} not used: {}", path_, missReason_);
    }
    return;
  }
  for (auto& [key, words] : parsed.spirv) entries_.emplace(key, Entry{std::move(words), false});
  driverBlobReason_ = validateDriverBlob(parsed.driverBlob, device_);
  if (driverBlobReason_.empty()) {
    driverBlob_.assign(parsed.driverBlob.begin(), parsed.driverBlob.end());
  } else {
    log::info("pipeline cache {}: driver blob dropped, SPIR-V kept: {}", path_, driverBlobReason_);
  }
  log::debug("pipeline cache {}: {} SPIR-V entries, {}-byte driver blob", path_, entries_.size(), driverBlob_.size());
}

std::string PipelineCacheFile::missReason() const {
  std::lock_guard lock(mutex_);
  return missReason_;
}

bool PipelineCacheFile::corrupt() const {
  std::lock_guard lock(mutex_);
  return corrupt_;
}

std::string PipelineCacheFile::driverBlobReason() const {
  std::lock_guard lock(mutex_);
  return driverBlobReason_;
}

std::optional<std::vector<uint32_t>> PipelineCacheFile::findSpirv(uint64_t key) {
  std::vector<uint32_t> unchecked;
  {
    std::lock_guard lock(mutex_);
    auto it = entries_.find(key);
    if (it == entries_.end()) {
      ++misses_;
      return std::nullopt;
    }
    if (it->second.checked) {
      ++hits_;
      it->second.used = true;
      return it->second.words;
    }
    unchecked = it->second.words;
  }
  // SPIRV-Tools' validator runs outside the lock: other kernels' lookups do not wait behind it.
  const std::string problem = spirvProblem(unchecked);
  std::lock_guard lock(mutex_);
  auto it = entries_.find(key);
  // Meanwhile another thread may have dropped the entry (it found the same problem) or replaced it (addSpirv: its
  // own compile, checked); only the words validated here are judged here.
  if (it != entries_.end() && it->second.words == unchecked) {
    if (!problem.empty()) {
      log::warn("pipeline cache {}: SPIR-V entry {} is not valid SPIR-V ({}): compiled again", path_, hex(key), problem);
      entries_.erase(it);
      it = entries_.end();
      changed_ = true;
    } else {
      it->second.checked = true;
    }
  }
  if (it == entries_.end() || !it->second.checked) {
    ++misses_;
    return std::nullopt;
  }
  ++hits_;
  it->second.used = true;
  return it->second.words;
}

void PipelineCacheFile::addSpirv(uint64_t key, std::vector<uint32_t> words) {
  std::lock_guard lock(mutex_);
  Entry& entry = entries_[key];
  if (entry.words != words) {
    entry.words = std::move(words);
    changed_ = true;
  }
  entry.used = true;
  entry.checked = true;  // this process compiled it
}

std::vector<std::byte> PipelineCacheFile::driverBlob() const {
  std::lock_guard lock(mutex_);
  return driverBlob_;
}

int64_t PipelineCacheFile::hits() const {
  std::lock_guard lock(mutex_);
  return hits_;
}

int64_t PipelineCacheFile::misses() const {
  std::lock_guard lock(mutex_);
  return misses_;
}

size_t PipelineCacheFile::entryCount() const {
  std::lock_guard lock(mutex_);
  return entries_.size();
}

bool PipelineCacheFile::needsSave(std::span<const std::byte> driverBlob) const {
  std::lock_guard lock(mutex_);
  if (changed_) return true;
  if (!validateDriverBlob(driverBlob, device_).empty()) driverBlob = {};  // would not be written
  return !std::equal(driverBlob.begin(), driverBlob.end(), driverBlob_.begin(), driverBlob_.end());
}

std::vector<std::byte> PipelineCacheFile::serialize(std::span<const std::byte> driverBlob) const {
  std::lock_guard lock(mutex_);
  return serializeLocked(driverBlob);
}

std::vector<std::byte> PipelineCacheFile::serializeLocked(std::span<const std::byte> driverBlob) const {
  if (std::string reason = validateDriverBlob(driverBlob, device_); !reason.empty()) {
    log::info("pipeline cache {}: the driver blob is not saved: {}", path_, reason);
    driverBlob = {};
  }
  std::vector<std::byte> out(layout::kHeaderBytes);
  std::memcpy(out.data(), layout::kMagic, sizeof layout::kMagic);
  setU32(out, 8, layout::kFormatVersion);
  setU32(out, 12, static_cast<uint32_t>(layout::kHeaderBytes));
  setU32(out, kPointerSizeOffset, static_cast<uint32_t>(sizeof(void*)));
  setU32(out, kVendorOffset, device_.vendorId);
  setU32(out, kDeviceOffset, device_.deviceId);
  setU32(out, kDriverIdOffset, device_.driverId);
  setU32(out, kDriverVersionOffset, device_.driverVersion);
  setU32(out, kApiVersionOffset, device_.apiVersion);
  const std::string version = engineVersion();
  setU64(out, kEngineHashOffset, textHash(version));
  std::memcpy(out.data() + kEngineTextOffset, version.data(),
              std::min(version.size(), layout::kEngineVersionTextBytes - 1));
  setU64(out, kDriverInfoOffset, textHash(device_.driverInfo));
  setU64(out, kDeviceNameOffset, textHash(device_.name));
  std::memcpy(out.data() + kUuidOffset, device_.pipelineCacheUuid.data(), 16);

  uint32_t count = 0;
  for (const auto& [key, entry] : entries_) {
    if (!entry.used) continue;
    out.resize(out.size() + 8);
    setU64(out, out.size() - 8, key);
    appendU32(out, static_cast<uint32_t>(entry.words.size()));
    appendU32(out, layout::entryDigest(key, entry.words));
    for (uint32_t word : entry.words) appendU32(out, word);
    ++count;
  }
  const auto section = std::span<const std::byte>(out).subspan(layout::kHeaderBytes);
  setU32(out, layout::kEntryCountOffset, count);
  setU64(out, layout::kSpirvSizeOffset, section.size());
  setU64(out, layout::kSpirvChecksumOffset, checksum(section));
  setU64(out, layout::kDriverBlobSizeOffset, driverBlob.size());
  setU64(out, layout::kDriverBlobChecksumOffset, checksum(driverBlob));
  out.insert(out.end(), driverBlob.begin(), driverBlob.end());
  setU64(out, layout::kHeaderChecksumOffset, checksum(std::span<const std::byte>(out).first(layout::kHeaderChecksumOffset)));
  return out;
}

Status PipelineCacheFile::save(std::span<const std::byte> driverBlob) {
  namespace fs = std::filesystem;
  std::lock_guard lock(mutex_);
  Stopwatch clock;
  const std::vector<std::byte> image = serializeLocked(driverBlob);
  const fs::path target(path_);
  std::error_code ec;
  if (target.has_parent_path()) fs::create_directories(target.parent_path(), ec);  // a failure shows in the write
  KILN_RETURN_IF_ERROR(writeFileAtomically(path_, image).withContext("saving pipeline cache " + path_));
  // Memory now mirrors the file: unused entries went, the blob is the one written.
  std::erase_if(entries_, [](const auto& item) { return !item.second.used; });
  if (validateDriverBlob(driverBlob, device_).empty()) {
    driverBlob_.assign(driverBlob.begin(), driverBlob.end());
  } else {
    driverBlob_.clear();
  }
  changed_ = false;
  log::debug("pipeline cache {}: saved {} SPIR-V entries and a {}-byte driver blob ({} bytes, {:.1f} ms)", path_,
             entries_.size(), driverBlob_.size(), image.size(), clock.elapsedMs());
  return Status::ok();
}

uint32_t pipeline_cache_layout::entryDigest(uint64_t key, std::span<const uint32_t> words) {
  return static_cast<uint32_t>(XXH3_64bits_withSeed(words.data(), words.size_bytes(), key));
}

}  // namespace kiln::vk
