// kiln/context_binary.h over the format's internals.
#include <algorithm>
#include <set>

#include "context_binary/context_binary.h"
#include "context_binary/verdict.h"
#include "device/device_profile.h"
#include "kiln/context_binary.h"

namespace kiln {
namespace {

ContextBinaryGraph describe(const CompiledPartition& p) {
  ContextBinaryGraph g;
  g.name = p.name;
  g.executionProvider = p.executionProvider;
  g.inputs = p.inputs;
  g.outputs = p.outputs;
  for (const auto* list : {&p.graph->inputs, &p.graph->outputs}) {
    for (const auto& value : *list) g.valueTypes.push_back(ir::toValueMetadata(value));
  }
  g.nodes = static_cast<int64_t>(p.graph->nodes.size());
  std::set<std::string> ops;
  for (const auto& node : p.graph->nodes) ops.insert(node.domain.empty() ? node.opType : node.domain + "." + node.opType);
  g.opTypes.assign(ops.begin(), ops.end());
  for (const auto& n : p.nodes) {
    g.hostNodes += n.onHost ? 1 : 0;
    g.prepackedConstants += static_cast<int64_t>(n.constants.size());
  }
  g.initializers = static_cast<int64_t>(p.graph->initializers.size());
  g.spirvModules = static_cast<int64_t>(p.spirv.size());
  g.tuningNote = p.tuning.note;
  g.providerDataBytes = static_cast<int64_t>(p.providerData.size());
  for (const auto& k : p.tuning.kernels) {
    ContextBinaryTunedKernel tuned{static_cast<int64_t>(k.node), k.label, k.chosen, 0, k.trials};
    for (const auto& [name, ms] : k.trials) {
      if (name == k.chosen) tuned.chosenMs = ms;
    }
    g.tuning.push_back(std::move(tuned));
  }
  return g;
}

}  // namespace

Result<CompatibilityVerdict> checkContextBinaryAgainstProfile(std::span<const std::byte> bytes,
                                                              const std::string& origin, const std::string& profilePath) {
  KILN_ASSIGN_OR_RETURN(const vk::DeviceInfo device, vk::readDeviceProfile(profilePath));
  return ctxbin::judgeBytes(bytes, origin, device, "profile " + profilePath);
}

void ctxbin::describeHeaderFacts(const Header& h, const vk::DeviceInfo& t, const std::vector<SectionEntry>& sections,
                                 ContextBinaryInfo& info) {
  info.formatVersion = std::to_string(h.formatMajor) + "." + std::to_string(h.formatMinor);
  info.producerEngineVersion = ctxbin::unpackVersion(h.producerVersion);
  info.readableEngineVersions = ctxbin::unpackVersion(h.readableMin) + " - " + ctxbin::unpackVersion(h.readableMax);
  info.target = h.target == ctxbin::TargetKind::PROFILE ? "profile" : "device";
  info.deviceName = t.name;
  info.driverName = t.driverName;
  info.driverInfo = t.driverInfo;
  info.apiVersion = t.apiVersionString();
  info.pipelineCacheUuid = t.pipelineCacheUuidHex();
  info.vendorId = h.vendorId;
  info.deviceId = h.deviceId;
  info.driverId = h.driverId;
  info.driverVersion = h.driverVersion;
  for (uint32_t bit = 1; bit != 0 && bit <= h.requiredFeatures; bit <<= 1) {
    if (h.requiredFeatures & bit) info.requiredFeatures.push_back(ctxbin::featureNames(bit));
  }
  info.subgroupSize = h.subgroupSize;
  info.requiredWorkgroupInvocations = h.requiredWorkgroupInvocations;
  info.requiredPushConstantBytes = h.requiredPushConstantBytes;
  for (const auto& s : sections) {
    info.sections.push_back({ctxbin::sectionKindName(s.kind), s.offset, s.size, ctxbin::contentIdHex(s.hash), s.items});
  }
}

Result<ContextBinaryInfo> ctxbin::describeContextBinary(const ContextBinary& opened, const std::string& path,
                                                       const PartitionDescriber& describePartition) {
  const ContextBinary* binary = &opened;
  ContextBinaryInfo info;
  info.path = path;
  info.fileSize = binary->fileSize();
  describeHeaderFacts(binary->header(), binary->target(), binary->sections(), info);
  info.driverCacheBytes = binary->driverCache().size();
  KILN_ASSIGN_OR_RETURN(auto modules, binary->spirvModules());
  for (const auto& [key, words] : modules) {
    info.spirvModules.push_back(key);
    info.spirvBytes += words.size() * 4;
  }
  info.compileRecord = binary->compileRecord();
  KILN_ASSIGN_OR_RETURN(const ctxbin::WeightRefs refs, binary->weightRefs());
  info.weightless = binary->isWeightless();
  for (const auto& source : refs.sources) info.weightSources.push_back(source.relativePath);
  info.externalWeights = refs.refs.size();
  for (const auto& ref : refs.refs) {
    info.externalWeightBytes += ref.blobBytes;
    info.weightRefs.push_back({ref.name, refs.sources[ref.source].relativePath, ctxbin::weightTransformName(ref.transform),
                               ref.blobBytes});
  }
  info.derivedConstants = refs.derivedConstants;
  KILN_ASSIGN_OR_RETURN(auto partitions, binary->partitions());
  info.pipelineUsersRecorded = binary->hasPipelineUsers();
  for (const auto& [key, words] : modules) {
    ContextBinaryPipeline pipeline{key, words.size() * 4, {}, ctxbin::pipelineNodes(partitions, key)};
    for (const auto& p : partitions) {
      if (p.spirv.count(key)) pipeline.graphs.push_back(p.name);
    }
    info.pipelines.push_back(std::move(pipeline));
  }
  KILN_ASSIGN_OR_RETURN(auto weights, binary->weights());
  info.weightBlobs = weights.blobCount();
  info.weightBytes = weights.blobBytes();
  if (binary->hasTuning()) {
    const bool anyChoice = std::any_of(partitions.begin(), partitions.end(),
                                       [](const auto& p) { return !p.tuning.kernels.empty(); });
    info.autotune = anyChoice ? "tuned" : "defaults";
  }
  for (const auto& p : partitions) {
    info.graphs.push_back(describe(p));
    if (describePartition && !p.providerData.empty()) info.graphs.back().providerDetails = describePartition(p);
    // Every reference counts, so referenced - stored is what deduplication saved.
    auto count = [&](const Tensor& t) {
      if (!t.rawData() && t.numel() > 0) return;  // shape only: folded into a prepacked constant
      info.weightReferences++;
      info.weightBytesReferenced += t.dtype() == DataType::STRING ? ctxbin::tensorBytes(t).size() : t.byteSize();
    };
    for (const auto& [name, t] : p.graph->initializers) count(t);
    for (const auto& n : p.nodes) for (const auto& c : n.constants) count(c);
  }
  return info;
}

Result<CompatibilityVerdict> checkContextBinaryAgainstProfile(const std::string& path, const std::string& profilePath) {
  KILN_ASSIGN_OR_RETURN(const vk::DeviceInfo device, vk::readDeviceProfile(profilePath));
  const std::string against = "profile " + profilePath;
  return ctxbin::judgeFile(path, device, against);
}

}  // namespace kiln
