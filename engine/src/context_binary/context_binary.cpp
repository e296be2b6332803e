#include "context_binary/context_binary.h"

#include <xxhash.h>

#include <algorithm>

#include "context_binary/graphs_section.h"
#include "context_binary/pipeline_users_section.h"
#include "context_binary/provider_data_section.h"
#include "context_binary/spirv_features.h"
#include "context_binary/tuning_section.h"
#include "device/device_profile.h"
#include "kiln/version.h"
#include "util/file_io.h"
#include "util/mapped_file.h"

namespace kiln::ctxbin {
namespace {

// Format 1.0 arrived with engine 0.1.0; any 0.x engine reads it. From format 1.1 (the COMPILE_RECORD, WEIGHT_REFS
// and TUNING sections) readers skip section kinds they do not know, so new data comes as new kinds with a minor
// bump; a change that readers could misread must bump the major version instead. (Engines built before 1.1 refused
// unknown kinds: a 1.1 binary is refused by them as corrupt, never misread; a weightless binary's empty blobs fail
// in an older reader rather than misread.)
constexpr const char* kFirstReader = "0.1.0";
constexpr const char* kLastReader = "0.1023.1023";

Status corrupt(const std::string& why) { return Status(StatusCode::INVALID_GRAPH, "corrupt context binary: " + why); }

// Header identity and requirements from the target device and the SPIR-V modules.
Result<Header> makeHeader(const BinaryContents& contents, const SpirvTableWriter& spirv) {
  Header h;
  h.producerVersion = packVersion(engineVersion());
  std::tie(h.readableMin, h.readableMax) = readableEngineVersions();
  const vk::DeviceInfo& d = contents.target;
  h.vendorId = d.vendorId;
  h.deviceId = d.deviceId;
  h.driverId = d.driverId;
  h.driverVersion = d.driverVersion;
  h.apiVersion = d.apiVersion;
  h.driverInfoHash = stringHash(d.driverInfo);
  h.deviceNameHash = stringHash(d.name);
  h.pipelineCacheUuid = d.pipelineCacheUuid;
  h.target = contents.targetKind;
  h.subgroupSize = d.subgroupSize;
  h.requiredPushConstantBytes = contents.requiredPushConstantBytes;
  for (const auto& [key, words] : spirv.modules()) {
    auto needs = scanSpirv(words);
    if (!needs.isOk()) return needs.status().withContext("SPIR-V of " + key);
    h.requiredFeatures |= needs.value().features;
    const auto& l = needs.value().localSize;
    h.requiredWorkgroupInvocations = std::max(h.requiredWorkgroupInvocations, l[0] * l[1] * l[2]);
    for (size_t i = 0; i < 3; ++i) h.requiredWorkgroupSize[i] = std::max(h.requiredWorkgroupSize[i], l[i]);
  }
  return h;
}

}  // namespace

std::pair<uint32_t, uint32_t> readableEngineVersions() { return {packVersion(kFirstReader), packVersion(kLastReader)}; }

namespace {

// A producer for a section held in memory.
SectionProducer bytesSection(SectionKind kind, uint64_t items, std::vector<std::byte> bytes) {
  auto held = std::make_shared<const std::vector<std::byte>>(std::move(bytes));
  return {kind, items, held->size(), [held](const ChunkSink& sink) { return sink(*held); }};
}

std::vector<std::byte> textBytes(const std::string& text) {
  const auto* p = reinterpret_cast<const std::byte*>(text.data());
  return std::vector<std::byte>(p, p + text.size());
}

// Coalesces small pieces (tables, padding) into chunks of kStreamChunkBytes; large pieces pass through in
// kStreamChunkBytes slices without a copy.
class ChunkCoalescer {
 public:
  explicit ChunkCoalescer(const ChunkSink& sink) : sink_(sink) { buffer_.reserve(kStreamChunkBytes); }
  Status write(std::span<const std::byte> piece) {
    if (piece.size() <= kStreamChunkBytes - buffer_.size()) {
      buffer_.insert(buffer_.end(), piece.begin(), piece.end());
      return buffer_.size() == kStreamChunkBytes ? flush() : Status::ok();
    }
    KILN_RETURN_IF_ERROR(flush());
    while (piece.size() >= kStreamChunkBytes) {
      KILN_RETURN_IF_ERROR(sink_(piece.first(kStreamChunkBytes)));
      piece = piece.subspan(kStreamChunkBytes);
    }
    buffer_.assign(piece.begin(), piece.end());
    return Status::ok();
  }
  Status flush() {
    if (buffer_.empty()) return Status::ok();
    const Status written = sink_(buffer_);
    buffer_.clear();
    return written;
  }

 private:
  const ChunkSink& sink_;
  std::vector<std::byte> buffer_;
};

// xxHash3-64 of what `stream` produces.
Result<uint64_t> hashOfStream(const std::function<Status(const ChunkSink&)>& stream) {
  std::unique_ptr<XXH3_state_t, decltype(&XXH3_freeState)> state(XXH3_createState(), &XXH3_freeState);
  XXH3_64bits_reset(state.get());
  KILN_RETURN_IF_ERROR(stream([&](std::span<const std::byte> chunk) {
    XXH3_64bits_update(state.get(), chunk.data(), chunk.size());
    return Status::ok();
  }));
  return static_cast<uint64_t>(XXH3_64bits_digest(state.get()));
}

uint64_t alignSection(uint64_t offset) { return (offset + kSectionAlignment - 1) / kSectionAlignment * kSectionAlignment; }

}  // namespace

Result<std::shared_ptr<const PreparedContextBinary>> PreparedContextBinary::prepare(const BinaryContents& contents) {
  const std::string profile = vk::deviceProfileJson(contents.target);
  std::shared_ptr<PreparedContextBinary> binary(new PreparedContextBinary());
  binary->partitions_ = contents.partitions;
  for (auto& p : binary->partitions_) {
    if (!p.targetProfile.empty() && p.targetProfile != profile) {
      return Status(StatusCode::INVALID_ARGUMENT, "partition '" + p.name + "' was compiled for another device than " +
                                                      contents.target.name);
    }
    p.targetProfile.clear();  // stored once, in the device section
  }
  WeightTableWriter& weights = binary->weights_;
  weights.setExternalWeights(&contents.externalWeights);  // read (and hashed) during encodeGraphs only
  if (contents.findExternal) weights.setWeightless(contents.findExternal);
  SpirvTableWriter spirv;
  KILN_ASSIGN_OR_RETURN(std::vector<std::byte> graphs, encodeGraphs(binary->partitions_, weights, spirv));
  weights.setExternalWeights(nullptr);
  KILN_ASSIGN_OR_RETURN(Header header, makeHeader(contents, spirv));

  // The sections, in file order.
  auto& producers = binary->producers_;
  producers.push_back(bytesSection(SectionKind::DEVICE, 1, textBytes(profile)));
  producers.push_back(bytesSection(SectionKind::GRAPHS, binary->partitions_.size(), std::move(graphs)));
  producers.push_back(bytesSection(SectionKind::SPIRV, spirv.modules().size(), spirv.encode()));
  producers.push_back(bytesSection(SectionKind::SPIRV_DIGESTS, spirv.modules().size(), spirv.encodeDigests()));
  if (contents.targetKind == TargetKind::DEVICE) {
    producers.push_back(bytesSection(SectionKind::DRIVER_CACHE, contents.driverCache.empty() ? 0u : 1u, contents.driverCache));
  }
  const WeightTableWriter* table = &weights;  // owned by `binary`, which owns the producer too
  producers.push_back({SectionKind::WEIGHTS, weights.stats().blobs, weights.encodedSize(),
                       [table](const ChunkSink& sink) { return table->stream(sink); }});
  if (std::any_of(binary->partitions_.begin(), binary->partitions_.end(), [](const auto& p) { return p.tuning.requested; })) {
    uint64_t records = 0;
    std::vector<std::byte> tuning = encodeTuningSection(binary->partitions_, &records);
    producers.push_back(bytesSection(SectionKind::TUNING, records, std::move(tuning)));
  }
  if (std::any_of(binary->partitions_.begin(), binary->partitions_.end(), [](const auto& p) { return !p.pipelineUsers.empty(); })) {
    uint64_t records = 0;
    std::vector<std::byte> users = encodePipelineUsersSection(binary->partitions_, &records);
    producers.push_back(bytesSection(SectionKind::PIPELINE_USERS, records, std::move(users)));
  }
  if (std::any_of(binary->partitions_.begin(), binary->partitions_.end(), [](const auto& p) { return !p.providerData.empty(); })) {
    uint64_t records = 0;
    std::vector<std::byte> data = encodeProviderDataSection(binary->partitions_, &records);
    producers.push_back(bytesSection(SectionKind::PROVIDER_DATA, records, std::move(data)));
  }
  if (!contents.compileRecord.empty()) {
    producers.push_back(bytesSection(SectionKind::COMPILE_RECORD, 1, textBytes(contents.compileRecord)));
  }
  if (weights.weightless()) {
    const WeightRefs refs{contents.weightSources, weights.externalRefs(), weights.derivedConstants()};
    producers.push_back(bytesSection(SectionKind::WEIGHT_REFS, refs.refs.size(), encodeWeightRefs(refs)));
  }

  uint64_t offset = kHeaderBytes + producers.size() * kSectionEntryBytes;
  for (const auto& p : producers) {
    offset = alignSection(offset);
    KILN_ASSIGN_OR_RETURN(const uint64_t hash, hashOfStream(p.stream));
    binary->head_.sections.push_back({p.kind, offset, p.size, hash, p.items});
    offset += p.size;
  }
  header.fileSize = offset;
  binary->head_.header = header;
  binary->head_.bytes = encodeHeader(header, binary->head_.sections);
  return std::shared_ptr<const PreparedContextBinary>(std::move(binary));
}

Status PreparedContextBinary::stream(const ChunkSink& sink) const {
  static constexpr std::byte kZeros[kSectionAlignment] = {};
  ChunkCoalescer out(sink);
  KILN_RETURN_IF_ERROR(out.write(head_.bytes));
  uint64_t at = head_.bytes.size();
  for (size_t i = 0; i < producers_.size(); ++i) {
    const SectionEntry& entry = head_.sections[i];
    KILN_RETURN_IF_ERROR(out.write(std::span(kZeros, static_cast<size_t>(entry.offset - at))));
    uint64_t written = 0;
    KILN_RETURN_IF_ERROR(producers_[i].stream([&](std::span<const std::byte> chunk) {
      written += chunk.size();
      return out.write(chunk);
    }));
    if (written != entry.size) {  // a source changed between the passes: never emit a binary its table misdescribes
      return Status(StatusCode::FAIL, std::string(sectionKindName(entry.kind)) + " section streamed " +
                                          std::to_string(written) + " bytes, its layout says " + std::to_string(entry.size));
    }
    at = entry.offset + entry.size;
  }
  return out.flush();
}

Status streamContextBinary(const BinaryContents& contents, const ChunkSink& sink, WeightStats* stats) {
  KILN_ASSIGN_OR_RETURN(auto binary, PreparedContextBinary::prepare(contents));
  if (stats) *stats = binary->weightStats();
  return binary->stream(sink);
}

Result<std::vector<std::byte>> encodeContextBinary(const BinaryContents& contents, WeightStats* stats) {
  KILN_ASSIGN_OR_RETURN(auto binary, PreparedContextBinary::prepare(contents));
  if (stats) *stats = binary->weightStats();
  std::vector<std::byte> bytes;
  bytes.reserve(static_cast<size_t>(binary->fileSize()));
  KILN_RETURN_IF_ERROR(binary->stream([&](std::span<const std::byte> chunk) {
    bytes.insert(bytes.end(), chunk.begin(), chunk.end());
    return Status::ok();
  }));
  return bytes;
}

Status writeContextBinary(const BinaryContents& contents, const std::string& path, WeightStats* stats) {
  KILN_ASSIGN_OR_RETURN(std::vector<std::byte> bytes, encodeContextBinary(contents, stats));
  return writeFileAtomically(path, bytes);
}

Result<std::shared_ptr<const ContextBinary>> ContextBinary::open(const std::string& path) {
  KILN_ASSIGN_OR_RETURN(std::shared_ptr<MappedFile> file, MappedFile::open(path));
  const auto bytes = file->bytes();
  return validate(std::move(file), bytes, path);
}

Result<std::shared_ptr<const ContextBinary>> ContextBinary::fromBytes(std::vector<std::byte> bytes, std::string origin) {
  auto owner = std::make_shared<std::vector<std::byte>>(std::move(bytes));
  const std::span<const std::byte> view(*owner);
  return validate(std::move(owner), view, std::move(origin));
}

Result<std::shared_ptr<const ContextBinary>> ContextBinary::validate(std::shared_ptr<const void> owner,
                                                                     std::span<const std::byte> bytes, std::string origin) {
  auto parsed = parseHeader(bytes);
  if (!parsed.isOk()) return parsed.status().withContext(origin);
  std::shared_ptr<ContextBinary> binary(new ContextBinary());
  binary->owner_ = std::move(owner);
  binary->bytes_ = bytes;
  binary->origin_ = std::move(origin);
  binary->header_ = parsed.value().header;
  binary->sections_ = std::move(parsed.value().sections);
  const auto device = binary->section(SectionKind::DEVICE);
  auto target = vk::parseDeviceProfile(std::string_view(reinterpret_cast<const char*>(device.data()), device.size()),
                                       binary->origin_ + " device section");
  if (!target.isOk()) return corrupt(target.status().message()).withContext(binary->origin_);
  binary->target_ = std::move(target).value();
  return std::shared_ptr<const ContextBinary>(std::move(binary));
}

std::span<const std::byte> ContextBinary::section(SectionKind kind) const {
  for (const auto& s : sections_) {
    if (s.kind == kind) return bytes_.subspan(s.offset, s.size);
  }
  return {};
}

bool ContextBinary::hasDriverCache() const {
  return std::any_of(sections_.begin(), sections_.end(), [](const auto& s) { return s.kind == SectionKind::DRIVER_CACHE && s.size > 0; });
}

std::span<const std::byte> ContextBinary::driverCache() const { return section(SectionKind::DRIVER_CACHE); }

Result<std::vector<std::pair<std::string, std::vector<uint32_t>>>> ContextBinary::spirvModules() const {
  auto modules = decodeSpirvSection(section(SectionKind::SPIRV));
  if (!modules.isOk()) return modules.status().withContext(origin_);
  // Binaries before format 1.3 have no digests: their modules are checked by the section hash alone.
  const bool hasDigests =
      std::any_of(sections_.begin(), sections_.end(), [](const auto& s) { return s.kind == SectionKind::SPIRV_DIGESTS; });
  if (hasDigests) {
    if (Status digests = checkSpirvDigests(*modules, section(SectionKind::SPIRV_DIGESTS)); !digests.isOk()) {
      return digests.withContext(origin_);
    }
  }
  return modules;
}

Result<WeightTableReader> ContextBinary::weights(const ExternalBlobs* external) const {
  ExternalBlobs unresolved;
  if (!external && isWeightless()) {
    KILN_ASSIGN_OR_RETURN(const WeightRefs refs, weightRefs());
    for (const auto& ref : refs.refs) unresolved[ref.blob] = Tensor();
    external = &unresolved;
  }
  auto table = WeightTableReader::parse(section(SectionKind::WEIGHTS), owner_, external);
  if (!table.isOk()) return table.status().withContext(origin_);
  return table;
}

Result<WeightRefs> ContextBinary::weightRefs() const {
  if (!isWeightless()) return WeightRefs{};
  auto refs = decodeWeightRefs(section(SectionKind::WEIGHT_REFS));
  if (!refs.isOk()) return refs.status().withContext(origin_);
  return refs;
}

std::string ContextBinary::compileRecord() const {
  const auto bytes = section(SectionKind::COMPILE_RECORD);
  return std::string(reinterpret_cast<const char*>(bytes.data()), bytes.size());
}

Result<std::string> ContextBinary::executionProvider() const {
  auto provider = firstPartitionProvider(section(SectionKind::GRAPHS));
  if (!provider.isOk()) return provider.status().withContext(origin_);
  return provider;
}

Result<std::vector<CompiledPartition>> ContextBinary::partitions(const ExternalBlobs* external) const {
  KILN_ASSIGN_OR_RETURN(auto spirv, spirvModules());
  KILN_ASSIGN_OR_RETURN(WeightTableReader weights, this->weights(external));
  auto partitions = decodeGraphs(section(SectionKind::GRAPHS), weights, spirv);
  if (!partitions.isOk()) return partitions.status().withContext(origin_);
  const std::string profile = vk::deviceProfileJson(target_);
  for (auto& p : partitions.value()) p.targetProfile = profile;
  KILN_ASSIGN_OR_RETURN(auto tuning, this->tuning());
  for (auto& p : partitions.value()) {
    auto record = tuning.find(p.name);
    if (record == tuning.end()) continue;
    p.tuning = std::move(record->second);
    tuning.erase(record);
  }
  if (!tuning.empty()) {
    return corrupt("the tuning section names partition '" + tuning.begin()->first + "', which the binary does not hold")
        .withContext(origin_);
  }
  const bool hasProviderData =
      std::any_of(sections_.begin(), sections_.end(), [](const auto& s) { return s.kind == SectionKind::PROVIDER_DATA; });
  if (hasProviderData) {
    if (Status data = attachProviderData(section(SectionKind::PROVIDER_DATA), partitions.value()); !data.isOk()) {
      return data.withContext(origin_);
    }
  }
  KILN_ASSIGN_OR_RETURN(auto users, pipelineUsers());
  const Status attached = attachPipelineUsers(std::move(users), partitions.value());
  if (!attached.isOk()) return attached.withContext(origin_);
  return partitions;
}

bool ContextBinary::hasPipelineUsers() const {
  return std::any_of(sections_.begin(), sections_.end(), [](const auto& s) { return s.kind == SectionKind::PIPELINE_USERS; });
}

Result<PipelineUsers> ContextBinary::pipelineUsers() const {
  if (!hasPipelineUsers()) return PipelineUsers();
  auto users = decodePipelineUsersSection(section(SectionKind::PIPELINE_USERS));
  if (!users.isOk()) return users.status().withContext(origin_);
  return users;
}

bool ContextBinary::hasTuning() const {
  return std::any_of(sections_.begin(), sections_.end(), [](const auto& s) { return s.kind == SectionKind::TUNING; });
}

Result<std::map<std::string, PartitionTuning>> ContextBinary::tuning() const {
  if (!hasTuning()) return std::map<std::string, PartitionTuning>();
  auto records = decodeTuningSection(section(SectionKind::TUNING));
  if (!records.isOk()) return records.status().withContext(origin_);
  return records;
}

}  // namespace kiln::ctxbin
