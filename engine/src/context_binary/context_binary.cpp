#include "context_binary/context_binary.h"

#include <algorithm>

#include "context_binary/graphs_section.h"
#include "context_binary/spirv_features.h"
#include "device/device_profile.h"
#include "kiln/version.h"
#include "util/file_io.h"
#include "util/mapped_file.h"

namespace kiln::ctxbin {
namespace {

// Format 1.0 arrived with engine 0.1.0; any 0.x engine reads it. Readers skip section kinds they do not know
// (format 1.1 added COMPILE_RECORD and WEIGHT_REFS); a change that older engines could misread must bump the major
// version instead (a weightless binary's empty blobs fail in an older reader rather than misread).
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

Result<std::vector<std::byte>> encodeContextBinary(const BinaryContents& contents, WeightStats* stats) {
  const std::string profile = vk::deviceProfileJson(contents.target);
  std::vector<CompiledPartition> partitions = contents.partitions;
  for (auto& p : partitions) {
    if (!p.targetProfile.empty() && p.targetProfile != profile) {
      return Status(StatusCode::INVALID_ARGUMENT, "partition '" + p.name + "' was compiled for another device than " +
                                                      contents.target.name);
    }
    p.targetProfile.clear();  // stored once, in the device section
  }
  WeightTableWriter weights;
  if (contents.findExternal) weights.setWeightless(contents.findExternal);
  SpirvTableWriter spirv;
  KILN_ASSIGN_OR_RETURN(std::vector<std::byte> graphs, encodeGraphs(partitions, weights, spirv));
  KILN_ASSIGN_OR_RETURN(Header header, makeHeader(contents, spirv));

  struct Pending {
    SectionKind kind;
    std::vector<std::byte> bytes;
    uint64_t items;
  };
  std::vector<Pending> pending;
  pending.push_back({SectionKind::DEVICE, std::vector<std::byte>(reinterpret_cast<const std::byte*>(profile.data()),
                                                                 reinterpret_cast<const std::byte*>(profile.data()) + profile.size()), 1});
  pending.push_back({SectionKind::GRAPHS, std::move(graphs), partitions.size()});
  pending.push_back({SectionKind::SPIRV, spirv.encode(), spirv.modules().size()});
  if (contents.targetKind == TargetKind::DEVICE) {
    pending.push_back({SectionKind::DRIVER_CACHE, contents.driverCache, contents.driverCache.empty() ? 0u : 1u});
  }
  pending.push_back({SectionKind::WEIGHTS, weights.encode(), weights.stats().blobs});
  if (!contents.compileRecord.empty()) {
    const auto* record = reinterpret_cast<const std::byte*>(contents.compileRecord.data());
    pending.push_back({SectionKind::COMPILE_RECORD, std::vector<std::byte>(record, record + contents.compileRecord.size()), 1});
  }
  if (weights.weightless()) {
    const WeightRefs refs{contents.weightSources, weights.externalRefs(), weights.derivedConstants()};
    pending.push_back({SectionKind::WEIGHT_REFS, encodeWeightRefs(refs), refs.refs.size()});
  }
  if (stats) *stats = weights.stats();

  std::vector<SectionEntry> table;
  uint64_t offset = kHeaderBytes + pending.size() * kSectionEntryBytes;
  for (const auto& p : pending) {
    offset = (offset + kSectionAlignment - 1) / kSectionAlignment * kSectionAlignment;
    table.push_back({p.kind, offset, p.bytes.size(), contentHash(p.bytes), p.items});
    offset += p.bytes.size();
  }
  header.fileSize = offset;
  ByteWriter out;
  const auto head = encodeHeader(header, table);
  out.bytes(head.data(), head.size());
  for (size_t i = 0; i < pending.size(); ++i) {
    out.align(kSectionAlignment);
    out.bytes(pending[i].bytes.data(), pending[i].bytes.size());
  }
  return out.take();
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

Result<std::vector<CompiledPartition>> ContextBinary::partitions(const ExternalBlobs* external) const {
  KILN_ASSIGN_OR_RETURN(auto spirv, spirvModules());
  KILN_ASSIGN_OR_RETURN(WeightTableReader weights, this->weights(external));
  auto partitions = decodeGraphs(section(SectionKind::GRAPHS), weights, spirv);
  if (!partitions.isOk()) return partitions.status().withContext(origin_);
  const std::string profile = vk::deviceProfileJson(target_);
  for (auto& p : partitions.value()) p.targetProfile = profile;
  return partitions;
}

}  // namespace kiln::ctxbin
