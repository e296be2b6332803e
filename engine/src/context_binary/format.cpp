#include "context_binary/format.h"

#include <xxhash.h>

#include <algorithm>
#include <cassert>
#include <cstdio>
#include <cstring>
#include <set>

#include "context_binary/byte_io.h"

namespace kiln::ctxbin {
namespace {

constexpr size_t kChecksumOffset = kHeaderBytes - 8;

Status corrupt(const std::string& why) { return Status(StatusCode::INVALID_GRAPH, "corrupt context binary: " + why); }

}  // namespace

std::string sectionKindName(SectionKind kind) {
  switch (kind) {
    case SectionKind::DEVICE: return "device";
    case SectionKind::GRAPHS: return "graphs";
    case SectionKind::SPIRV: return "spirv";
    case SectionKind::DRIVER_CACHE: return "driver_cache";
    case SectionKind::WEIGHTS: return "weights";
    case SectionKind::TUNING: return "tuning";
    case SectionKind::PIPELINE_USERS: return "pipeline_users";
    case SectionKind::COMPILE_RECORD: return "compile_record";
    case SectionKind::WEIGHT_REFS: return "weight_refs";
    case SectionKind::SPIRV_DIGESTS: return "spirv_digests";
    case SectionKind::PROVIDER_DATA: return "provider_data";
  }
  return "unknown (kind " + std::to_string(static_cast<uint32_t>(kind)) + ")";
}

bool isKnownSectionKind(uint32_t kind) {
  return kind >= 1 && kind <= 11;  // DEVICE .. PROVIDER_DATA, all assigned
}

std::string featureNames(uint32_t features) {
  static const std::pair<uint32_t, const char*> kNames[] = {
      {kFeatureSubgroupArithmetic, "subgroup_arithmetic"}, {kFeatureFloat16, "float16"},
      {kFeatureInt64, "int64"},   {kFeatureStorage8Bit, "storage_8bit"},
      {kFeatureStorage16Bit, "storage_16bit"}, {kFeatureInt16, "int16"},
      {kFeatureInt8, "int8"}};
  std::string text;
  for (const auto& [bit, name] : kNames) {
    if (features & bit) text += (text.empty() ? "" : ", ") + std::string(name);
  }
  return text;
}

uint32_t packVersion(const std::string& dotted) {
  uint32_t parts[3] = {0, 0, 0};
  size_t part = 0;
  for (char c : dotted) {
    if (c == '.') {
      if (++part == 3) break;
    } else if (c >= '0' && c <= '9') {
      parts[part] = std::min<uint32_t>(parts[part] * 10 + static_cast<uint32_t>(c - '0'), 1023);
    } else {
      break;  // "0.1.0-dev": the suffix does not count
    }
  }
  return parts[0] << 20 | parts[1] << 10 | parts[2];
}

std::string unpackVersion(uint32_t packed) {
  return std::to_string(packed >> 20) + "." + std::to_string(packed >> 10 & 1023) + "." + std::to_string(packed & 1023);
}

uint64_t contentHash(std::span<const std::byte> bytes) { return XXH3_64bits(bytes.data(), bytes.size()); }
uint64_t stringHash(const std::string& text) { return XXH3_64bits(text.data(), text.size()); }

std::vector<std::byte> encodeHeader(const Header& h, const std::vector<SectionEntry>& sections) {
  ByteWriter w;
  w.bytes(kMagic, sizeof(kMagic));
  w.u16(h.formatMajor);
  w.u16(h.formatMinor);
  w.u8(1);  // little-endian
  w.u8(static_cast<uint8_t>(sizeof(void*)));
  w.u16(static_cast<uint16_t>(kHeaderBytes));
  w.u32(h.producerVersion);
  w.u32(h.readableMin);
  w.u32(h.readableMax);
  w.u32(h.vendorId);
  w.u32(h.deviceId);
  w.u32(h.driverId);
  w.u32(h.driverVersion);
  w.u32(h.apiVersion);
  w.u64(h.driverInfoHash);
  w.u64(h.deviceNameHash);
  w.bytes(h.pipelineCacheUuid.data(), 16);
  w.u32(static_cast<uint32_t>(h.target));
  w.u32(h.requiredFeatures);
  w.u32(h.subgroupSize);
  w.u32(h.requiredWorkgroupInvocations);
  for (uint32_t v : h.requiredWorkgroupSize) w.u32(v);
  w.u32(h.requiredPushConstantBytes);
  assert(w.size() == kSectionCountOffset);
  w.u32(static_cast<uint32_t>(sections.size()));
  w.u32(0);
  w.u64(kHeaderBytes);  // section table offset
  w.u64(h.fileSize);
  w.align(8);
  while (w.size() < kChecksumOffset) w.u8(0);  // reserved
  w.u64(0);  // checksum, below
  for (const auto& s : sections) {
    w.u32(static_cast<uint32_t>(s.kind));
    w.u32(0);
    w.u64(s.offset);
    w.u64(s.size);
    w.u64(s.hash);
    w.u64(s.items);
  }
  std::vector<std::byte> bytes = w.take();
  std::vector<std::byte> hashed(bytes);
  const uint64_t checksum = contentHash(hashed);  // with the checksum field still zero
  std::memcpy(bytes.data() + kChecksumOffset, &checksum, 8);
  return bytes;
}

Result<std::pair<uint16_t, uint16_t>> readFormatVersion(std::span<const std::byte> file) {
  if (file.size() < 12 || std::memcmp(file.data(), kMagic, sizeof(kMagic)) != 0) {
    return Status(StatusCode::INVALID_GRAPH, "not a Kiln context binary (bad magic or shorter than its header)");
  }
  ByteReader r(file.subspan(8, 4));
  const uint16_t major = r.u16();
  const uint16_t minor = r.u16();
  return std::make_pair(major, minor);
}

std::string unreadableFormatMessage(uint16_t major, uint16_t minor) {
  return "context binary format " + std::to_string(major) + "." + std::to_string(minor) +
         " is not readable by this engine (it reads format " + std::to_string(kFormatMajor) + ".x)";
}

Result<ParsedHeader> parseHeader(std::span<const std::byte> file) {
  KILN_ASSIGN_OR_RETURN(ParsedHeader parsed, parseHeaderStructure(file));
  for (const auto& s : parsed.sections) {
    if (contentHash(file.subspan(s.offset, s.size)) != s.hash) {
      return corrupt(std::string(sectionKindName(s.kind)) + " section content hash mismatch");
    }
  }
  return parsed;
}

Result<ParsedHeader> parseHeaderStructure(std::span<const std::byte> file) {
  KILN_ASSIGN_OR_RETURN(auto version, readFormatVersion(file));
  if (version.first != kFormatMajor) {
    return Status(StatusCode::INVALID_GRAPH, unreadableFormatMessage(version.first, version.second));
  }
  if (file.size() < kHeaderBytes) return corrupt("file is " + std::to_string(file.size()) + " bytes, shorter than its header");
  ParsedHeader parsed;
  Header& h = parsed.header;
  ByteReader r(file.first(kHeaderBytes));
  r.bytes(8);
  h.formatMajor = r.u16();
  h.formatMinor = r.u16();
  const uint8_t littleEndian = r.u8();
  r.u8();  // pointer size: informative (nothing in the format depends on it)
  const uint16_t headerBytes = r.u16();
  h.producerVersion = r.u32();
  h.readableMin = r.u32();
  h.readableMax = r.u32();
  h.vendorId = r.u32();
  h.deviceId = r.u32();
  h.driverId = r.u32();
  h.driverVersion = r.u32();
  h.apiVersion = r.u32();
  h.driverInfoHash = r.u64();
  h.deviceNameHash = r.u64();
  std::memcpy(h.pipelineCacheUuid.data(), r.bytes(16).data(), 16);
  h.target = static_cast<TargetKind>(r.u32());
  h.requiredFeatures = r.u32();
  h.subgroupSize = r.u32();
  h.requiredWorkgroupInvocations = r.u32();
  for (auto& v : h.requiredWorkgroupSize) v = r.u32();
  h.requiredPushConstantBytes = r.u32();
  const uint32_t sectionCount = r.u32();
  r.u32();
  const uint64_t tableOffset = r.u64();
  h.fileSize = r.u64();
  if (!r.ok()) return corrupt("header does not parse");
  if (littleEndian != 1) return corrupt("not marked little-endian");
  if (headerBytes != kHeaderBytes) return corrupt("header size " + std::to_string(headerBytes) + " is not " + std::to_string(kHeaderBytes));
  if (sectionCount > kMaxSections) return corrupt(std::to_string(sectionCount) + " sections (at most " + std::to_string(kMaxSections) + ")");
  if (tableOffset != kHeaderBytes) return corrupt("section table offset " + std::to_string(tableOffset));
  const size_t tableEnd = kHeaderBytes + sectionCount * kSectionEntryBytes;
  if (tableEnd > file.size()) return corrupt("section table runs past the end of the file");
  if (h.fileSize != file.size()) {
    return corrupt("file is " + std::to_string(file.size()) + " bytes, its header says " + std::to_string(h.fileSize) +
                   " (truncated or extended)");
  }
  // The checksum covers the header (checksum field as zero) and the section table.
  std::vector<std::byte> hashed(file.begin(), file.begin() + static_cast<ptrdiff_t>(tableEnd));
  uint64_t stored = 0;
  std::memcpy(&stored, hashed.data() + kChecksumOffset, 8);
  std::memset(hashed.data() + kChecksumOffset, 0, 8);
  if (contentHash(hashed) != stored) return corrupt("header checksum mismatch");
  if (h.target != TargetKind::DEVICE && h.target != TargetKind::PROFILE) return corrupt("unknown target kind");

  ByteReader table(file.subspan(kHeaderBytes, sectionCount * kSectionEntryBytes));
  std::set<uint32_t> seenKinds;
  for (uint32_t i = 0; i < sectionCount; ++i) {
    SectionEntry s;
    const uint32_t kind = table.u32();
    table.u32();
    s.offset = table.u64();
    s.size = table.u64();
    s.hash = table.u64();
    s.items = table.u64();
    if (kind == 0) return corrupt("section " + std::to_string(i) + " has kind 0");
    s.kind = static_cast<SectionKind>(kind);  // an unknown kind is skipped by every reader (a newer minor version)
    const std::string name = sectionKindName(s.kind);
    if (!seenKinds.insert(kind).second) return corrupt("two " + name + " sections");
    if (s.offset % kSectionAlignment != 0 || s.offset < tableEnd || s.offset > file.size() ||
        s.size > file.size() - s.offset) {
      return corrupt(name + " section [" + std::to_string(s.offset) + ", +" + std::to_string(s.size) +
                     ") lies outside the file or overlaps the header");
    }
    parsed.sections.push_back(s);
  }
  auto sorted = parsed.sections;
  std::sort(sorted.begin(), sorted.end(), [](const auto& a, const auto& b) { return a.offset < b.offset; });
  for (size_t i = 1; i < sorted.size(); ++i) {
    if (sorted[i - 1].offset + sorted[i - 1].size > sorted[i].offset) {
      return corrupt(sectionKindName(sorted[i - 1].kind) + " and " + sectionKindName(sorted[i].kind) +
                     " sections overlap");
    }
  }
  for (auto kind : {SectionKind::DEVICE, SectionKind::GRAPHS, SectionKind::SPIRV, SectionKind::WEIGHTS}) {
    if (!seenKinds.count(static_cast<uint32_t>(kind))) return corrupt("no " + sectionKindName(kind) + " section");
  }
  return parsed;
}

uint64_t contentIdOf(std::span<const std::byte> file) {
  uint32_t sections = 0;
  if (file.size() >= kHeaderBytes) std::memcpy(&sections, file.data() + kSectionCountOffset, sizeof sections);
  const size_t tableEnd = kHeaderBytes + std::min<size_t>(sections, kMaxSections) * kSectionEntryBytes;
  return contentHash(file.first(std::min(tableEnd, file.size())));
}

std::string contentIdHex(uint64_t id) {
  char text[17];
  std::snprintf(text, sizeof text, "%016llx", static_cast<unsigned long long>(id));
  return text;
}

}  // namespace kiln::ctxbin
