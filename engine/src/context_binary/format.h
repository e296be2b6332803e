// The context binary's fixed parts: header, section table, section kinds and feature bits (engine/ARCHITECTURE.md,
// "Context binary"). Layout, all little-endian:
//   [0, 192)        header (fixed size; its last 8 bytes are an xxHash3-64 of the header and the section table)
//   [192, 192+40n)  section table: kind u32, reserved u32, offset u64, size u64, xxHash3-64 of the content u64,
//                   item count u64
//   sections        each starting on a 64-byte boundary, in any order, never overlapping
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "kiln/status.h"

namespace kiln::ctxbin {

inline constexpr char kMagic[8] = {'K', 'I', 'L', 'N', 'V', 'K', 'C', 'B'};
inline constexpr uint16_t kFormatMajor = 1;
inline constexpr uint16_t kFormatMinor = 4;  // 1.1: COMPILE_RECORD, WEIGHT_REFS, TUNING; 1.2: PIPELINE_USERS; 1.3: SPIRV_DIGESTS; 1.4: PROVIDER_DATA
inline constexpr size_t kHeaderBytes = 192;
inline constexpr size_t kSectionEntryBytes = 40;
inline constexpr size_t kSectionAlignment = 64;
inline constexpr uint32_t kMaxSections = 16;
inline constexpr size_t kSectionCountOffset = 112;  // u32 in the header (tools that re-seal edited files read it)

// Kinds this engine reads. A reader skips (bounds-, overlap- and hash-checks, then ignores) kinds it does not know,
// so new data comes as new kinds with a minor version bump. Format 1.1 added COMPILE_RECORD (the compile record
// JSON, epcontext/compile_record.h), WEIGHT_REFS (a weightless binary's references to its source models' weights,
// weight_refs_section.h) and TUNING (autotune choices, tuning_section.h); 1.2 added PIPELINE_USERS (the nodes that
// dispatch each SPIR-V module, pipeline_users_section.h), which 1.1 readers skip; 1.3 added SPIRV_DIGESTS (one digest
// per SPIR-V module bound to its variant key, checked before a module is used: graphs_section.h); 1.4 added
// PROVIDER_DATA (what an execution provider stores of a partition in its own format, opaque to the format:
// provider_data_section.h).
enum class SectionKind : uint32_t {
  DEVICE = 1, GRAPHS = 2, SPIRV = 3, DRIVER_CACHE = 4, WEIGHTS = 5, COMPILE_RECORD = 6, WEIGHT_REFS = 7, TUNING = 8,
  PIPELINE_USERS = 9, SPIRV_DIGESTS = 10, PROVIDER_DATA = 11
};
// "weights"; "unknown (kind 10)" for a kind this engine does not know.
std::string sectionKindName(SectionKind kind);
bool isKnownSectionKind(uint32_t kind);

// What the producing device (or target profile) was: where the compiled SPIR-V and the driver blob came from.
enum class TargetKind : uint32_t { DEVICE = 0, PROFILE = 1 };

// Device features SPIR-V modules may rely on (derived from their OpCapability instructions).
enum FeatureBit : uint32_t {
  kFeatureSubgroupArithmetic = 1u << 0,
  kFeatureFloat16 = 1u << 1,
  kFeatureInt64 = 1u << 2,
  kFeatureStorage8Bit = 1u << 3,
  kFeatureStorage16Bit = 1u << 4,
  kFeatureInt16 = 1u << 5,
  kFeatureInt8 = 1u << 6,
};
// "subgroup_arithmetic, int64" for the bits set in `features`.
std::string featureNames(uint32_t features);

// Engine versions packed as major << 20 | minor << 10 | patch (each part < 1024).
uint32_t packVersion(const std::string& dotted);
std::string unpackVersion(uint32_t packed);

struct Header {
  uint16_t formatMajor = kFormatMajor, formatMinor = kFormatMinor;
  uint32_t producerVersion = 0;            // engine that wrote the file
  uint32_t readableMin = 0, readableMax = 0;  // engine versions that can read it
  // Producer device identity.
  uint32_t vendorId = 0, deviceId = 0, driverId = 0, driverVersion = 0, apiVersion = 0;
  uint64_t driverInfoHash = 0, deviceNameHash = 0;
  std::array<uint8_t, 16> pipelineCacheUuid{};
  TargetKind target = TargetKind::DEVICE;
  // What the stored SPIR-V needs from a device.
  uint32_t requiredFeatures = 0;
  uint32_t subgroupSize = 0;  // the producer's: kernels sized their work by it when subgroup operations are used
  uint32_t requiredWorkgroupInvocations = 0;
  std::array<uint32_t, 3> requiredWorkgroupSize{};
  uint32_t requiredPushConstantBytes = 0;
  uint64_t fileSize = 0;
};

struct SectionEntry {
  SectionKind kind = SectionKind::DEVICE;
  uint64_t offset = 0, size = 0, hash = 0, items = 0;
};

// xxHash3-64, the one content hash of the format.
uint64_t contentHash(std::span<const std::byte> bytes);
uint64_t stringHash(const std::string& text);

// The identity of a whole binary: the hash of its header and section table, which hold every section's hash.
// What a ctx model records for each binary it references (cheap: no pass over the sections). The file must be at
// least a header long (any file ContextBinary accepted is).
uint64_t contentIdOf(std::span<const std::byte> file);
// contentIdOf as the 16 lower-case hex digits ctx models store.
std::string contentIdHex(uint64_t id);

// Header + section table bytes, checksum filled in.
std::vector<std::byte> encodeHeader(const Header& header, const std::vector<SectionEntry>& sections);

// The format version in the first 12 bytes, readable before anything else is trusted (so a newer major version
// is reported as such rather than as corruption). INVALID_GRAPH when the magic is wrong or the file is shorter.
Result<std::pair<uint16_t, uint16_t>> readFormatVersion(std::span<const std::byte> file);

// "context binary format 2.0 is not readable by this engine (it reads format 1.x)".
std::string unreadableFormatMessage(uint16_t major, uint16_t minor);

struct ParsedHeader {
  Header header;
  std::vector<SectionEntry> sections;
};
// Parses and checks header and section table against `file`: sizes, checksum, every section inside the file,
// aligned, not overlapping, each kind at most once and content hashes matching. INVALID_GRAPH with the reason.
// Sections of kinds this engine does not know are checked the same way and kept in the table (nothing reads them).
// The format major version must be kFormatMajor (check readFormatVersion first for a friendlier verdict).
Result<ParsedHeader> parseHeader(std::span<const std::byte> file);
// parseHeader without the content hashes: header, checksum and section table only (a viewer's partial read of a
// binary whose section content is damaged).
Result<ParsedHeader> parseHeaderStructure(std::span<const std::byte> file);

}  // namespace kiln::ctxbin
