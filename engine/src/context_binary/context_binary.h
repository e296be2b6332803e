// Writing and reading context binaries: the compiled partitions of one model (or several: merges and
// weight-sharing groups), the SPIR-V they dispatch, the driver pipeline cache and the deduplicated weights. Writing
// streams: the header (with every section's hash) comes first, so a first pass lays the binary out and hashes it,
// and a second streams it in chunks, each weight read from its source (weight_source.h).
#pragma once

#include <functional>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "context_binary/format.h"
#include "context_binary/pipeline_users_section.h"
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
  // Initializers (by name) whose tensors hold no data because their bytes stay in an external-data file: the
  // weights section reads them from there while it streams (a binary larger than memory).
  std::map<std::string, FileRange> externalWeights;
  std::string compileRecord;                 // the COMPILE_RECORD section's JSON; "" writes none
  // Weightless (format 1.1): weights `findExternal` locates in `weightSources` are referenced, not stored.
  ExternalWeightFinder findExternal;
  std::vector<WeightSourceModel> weightSources;
};

// What a ctx model records of a binary before (or without) its body: header, section table and their encoding.
struct BinaryHead {
  Header header;
  std::vector<SectionEntry> sections;
  std::vector<std::byte> bytes;  // header + section table: contentIdOf(bytes) is the binary's content id
};

// One section as the writer produces it: its table facts and a way to stream its bytes (more than once: the
// first pass hashes them, the second writes them). Adding a section kind is one more producer in the list.
struct SectionProducer {
  SectionKind kind;
  uint64_t items = 0;
  uint64_t size = 0;
  std::function<Status(const ChunkSink&)> stream;
};

// A binary laid out and hashed but not yet written: what streaming it costs is the non-weight sections (graphs,
// SPIR-V, driver cache, held in memory) plus one chunk; the weights are read from their sources as they stream.
class PreparedContextBinary {
 public:
  // Encodes everything but the weights, reads every weight once to hash and deduplicate it and once more to hash
  // the weights section (its blob table comes first). Errors as encodeContextBinary, and the file errors of
  // external weights.
  static Result<std::shared_ptr<const PreparedContextBinary>> prepare(const BinaryContents& contents);

  const BinaryHead& head() const { return head_; }
  uint64_t fileSize() const { return head_.header.fileSize; }
  const WeightStats& weightStats() const { return weights_.stats(); }
  // The whole binary to `sink`, in file order, as consecutive chunks of at most kStreamChunkBytes (small pieces
  // coalesced); a non-OK status from `sink` or a weight source stops it with that status.
  Status stream(const ChunkSink& sink) const;

 private:
  PreparedContextBinary() = default;
  PreparedContextBinary(const PreparedContextBinary&) = delete;  // the weights producer points at weights_
  PreparedContextBinary& operator=(const PreparedContextBinary&) = delete;
  std::vector<CompiledPartition> partitions_;  // what the weight sources point into (tensors shared)
  WeightTableWriter weights_;
  std::vector<SectionProducer> producers_;
  BinaryHead head_;
};

// The engine version range a binary written now declares readable (engine/ARCHITECTURE.md, Versions).
std::pair<uint32_t, uint32_t> readableEngineVersions();

// Serializes `contents`. INVALID_ARGUMENT when a partition cannot be stored or the partitions target different
// devices; INVALID_GRAPH when a SPIR-V module is malformed. `stats` receives the weight deduplication figures.
Result<std::vector<std::byte>> encodeContextBinary(const BinaryContents& contents, WeightStats* stats = nullptr);
// The binary of `contents` streamed to `sink` (PreparedContextBinary::prepare, then stream); `stats` as above.
Status streamContextBinary(const BinaryContents& contents, const ChunkSink& sink, WeightStats* stats = nullptr);
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

  // Every partition, with its autotune record (tuning section) and pipeline users (pipeline_users section) where
  // there are; a weightless binary's referenced weights come from `external` (without it they read as type and
  // shape only: enough to describe, not to run). INVALID_GRAPH when a section is corrupt (the tuning and
  // pipeline_users sections included: a choice is never guessed at, a user never misattributed).
  Result<std::vector<CompiledPartition>> partitions(const ExternalBlobs* external = nullptr) const;
  // The execution provider whose partitions the binary holds (one binary is one EP's), read from the first graph
  // record alone: what picks the hooks that judge and load it. INVALID_GRAPH when the graphs section has none.
  Result<std::string> executionProvider() const;
  // Whether the binary has a tuning section (compiled with autotune), and its records by partition name.
  bool hasTuning() const;
  Result<std::map<std::string, PartitionTuning>> tuning() const;
  // Whether the binary records which nodes dispatch each SPIR-V module (a PIPELINE_USERS section, format 1.2), and
  // that record (empty without the section); partitions() attaches it to each partition's pipelineUsers.
  bool hasPipelineUsers() const;
  Result<PipelineUsers> pipelineUsers() const;
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

// What the EP that compiled a partition says of its providerData (EpContextHooks::describePartition).
using PartitionDescriber = std::function<std::vector<std::pair<std::string, std::string>>(const CompiledPartition&)>;

// The public description (kiln/context_binary.h) of an open binary; `path` is what it reports as its origin.
// `describePartition` (when set) fills each graph's providerDetails.
Result<ContextBinaryInfo> describeContextBinary(const ContextBinary& binary, const std::string& path,
                                                const PartitionDescriber& describePartition = {});
// The facts of `info` that the header, the section table and the device section give (everything but graphs,
// SPIR-V, driver cache and weights): shared by describeContextBinary and the partial read of a damaged binary.
void describeHeaderFacts(const Header& header, const vk::DeviceInfo& target, const std::vector<SectionEntry>& sections,
                         ContextBinaryInfo& info);

}  // namespace kiln::ctxbin
