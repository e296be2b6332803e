// Writing and reading whole context binaries: the compiled partitions of one model (or several: merges and
// weight-sharing groups), the SPIR-V they dispatch, the driver pipeline cache and the deduplicated weights.
#pragma once

#include <memory>
#include <span>
#include <string>
#include <vector>

#include "context_binary/format.h"
#include "context_binary/weights_section.h"
#include "device/device_info.h"
#include "ep/execution_provider.h"
#include "kiln/context_binary.h"

namespace kiln::ctxbin {

struct BinaryContents {
  std::vector<CompiledPartition> partitions;  // every partition's targetProfile must be the same device
  vk::DeviceInfo target;                     // the device (or profile) the SPIR-V was compiled for
  TargetKind targetKind = TargetKind::DEVICE;
  std::vector<std::byte> driverCache;        // vkGetPipelineCacheData of the producer (DEVICE targets only)
  uint32_t requiredPushConstantBytes = 0;    // the push-constant block the partitions' kernels use
  std::string compileRecord;                 // the COMPILE_RECORD section's JSON; "" writes none
  // Weightless (format 1.1): weights `findExternal` locates in `weightSources` are referenced, not stored.
  ExternalWeightFinder findExternal;
  std::vector<WeightSourceModel> weightSources;
};

// The engine version range a binary written now declares readable (architecture.md, Versions).
std::pair<uint32_t, uint32_t> readableEngineVersions();

// Serializes `contents`. INVALID_ARGUMENT when a partition cannot be stored or the partitions target different
// devices; INVALID_GRAPH when a SPIR-V module is malformed. `stats` receives the weight deduplication figures.
Result<std::vector<std::byte>> encodeContextBinary(const BinaryContents& contents, WeightStats* stats = nullptr);
// encodeContextBinary written atomically to `path`.
Status writeContextBinary(const BinaryContents& contents, const std::string& path, WeightStats* stats = nullptr);

// A validated binary: the header, section table and every section hash were checked when it was opened; the
// sections are decoded on demand. Weights decoded from a mapped file are used in place.
class ContextBinary {
 public:
  // Maps and validates `path`. NO_SUCHFILE when missing, INVALID_GRAPH with the reason otherwise.
  static Result<std::shared_ptr<const ContextBinary>> open(const std::string& path);
  // Validates a binary held in memory (EPContext embed mode).
  static Result<std::shared_ptr<const ContextBinary>> fromBytes(std::vector<std::byte> bytes, std::string origin);

  const std::string& origin() const { return origin_; }
  const Header& header() const { return header_; }
  const std::vector<SectionEntry>& sections() const { return sections_; }
  uint64_t fileSize() const { return bytes_.size(); }
  // contentIdOf the whole binary (what ctx models record to detect a binary that does not match them).
  uint64_t contentId() const { return contentIdOf(bytes_); }
  // The target device as stored (its profile): what kernels are re-created for, and the names inspect shows.
  const vk::DeviceInfo& target() const { return target_; }
  // The driver pipeline-cache blob (empty span when the binary has none).
  std::span<const std::byte> driverCache() const;
  bool hasDriverCache() const;

  // The partitions; a weightless binary's referenced weights come from `external` (without it they read as type
  // and shape only: enough to describe, not to run).
  Result<std::vector<CompiledPartition>> partitions(const ExternalBlobs* external = nullptr) const;
  Result<std::vector<std::pair<std::string, std::vector<uint32_t>>>> spirvModules() const;
  Result<WeightTableReader> weights(const ExternalBlobs* external = nullptr) const;
  // Whether the binary refers to its source models' weights instead of storing them (a WEIGHT_REFS section).
  bool isWeightless() const { return !section(SectionKind::WEIGHT_REFS).empty(); }
  // The WEIGHT_REFS section decoded (empty references for a binary that stores its weights).
  Result<WeightRefs> weightRefs() const;
  // The COMPILE_RECORD section's JSON ("" when the binary has none).
  std::string compileRecord() const;

 private:
  ContextBinary() = default;
  static Result<std::shared_ptr<const ContextBinary>> validate(std::shared_ptr<const void> owner,
                                                               std::span<const std::byte> bytes, std::string origin);
  std::span<const std::byte> section(SectionKind kind) const;

  std::shared_ptr<const void> owner_;  // the mapping or the buffer
  std::span<const std::byte> bytes_;
  std::string origin_;
  Header header_;
  std::vector<SectionEntry> sections_;
  vk::DeviceInfo target_;
};

// The public description (kiln/context_binary.h) of an open binary; `path` is what it reports as its origin.
Result<ContextBinaryInfo> describeContextBinary(const ContextBinary& binary, const std::string& path);

}  // namespace kiln::ctxbin
