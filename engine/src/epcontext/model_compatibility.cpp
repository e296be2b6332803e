// kiln/compatibility.h: onnxruntime's four compatibility states for a ctx model, a context binary or a plain model,
// answered from the model's compatibility info when it can and from its binaries otherwise.
#include "epcontext/model_compatibility.h"

#include <filesystem>

#include "kiln/compatibility.h"

#include "context_binary/compatibility_info.h"
#include "context_binary/format.h"
#include "context_binary/verdict.h"
#include "device/device_profile.h"
#include "epcontext/binary_admission.h"
#include "epcontext/compile_record.h"
#include "epcontext/ctx_model_writer.h"
#include "epcontext/epcontext_names.h"
#include "epcontext/io_signature.h"
#include "ir/graph_paths.h"
#include "kiln/epcontext.h"
#include "onnx/model_loader.h"
#include "onnx/path_rules.h"
#include "util/guarded.h"
#include "util/mapped_file.h"

namespace kiln {

const char* compiledModelCompatibilityName(CompiledModelCompatibility value) {
  switch (value) {
    case CompiledModelCompatibility::NOT_APPLICABLE: return "NOT_APPLICABLE";
    case CompiledModelCompatibility::SUPPORTED_OPTIMAL: return "SUPPORTED_OPTIMAL";
    case CompiledModelCompatibility::SUPPORTED_PREFER_RECOMPILATION: return "SUPPORTED_PREFER_RECOMPILATION";
    case CompiledModelCompatibility::UNSUPPORTED: return "UNSUPPORTED";
  }
  return "UNSUPPORTED";
}

CompiledModelCompatibility compiledModelCompatibilityOf(Compatibility verdict) {
  switch (verdict) {
    case Compatibility::OPTIMAL: return CompiledModelCompatibility::SUPPORTED_OPTIMAL;
    case Compatibility::COMPATIBLE: return CompiledModelCompatibility::SUPPORTED_PREFER_RECOMPILATION;
    case Compatibility::UNSUPPORTED: return CompiledModelCompatibility::UNSUPPORTED;
  }
  return CompiledModelCompatibility::UNSUPPORTED;
}

namespace {

struct Device {
  vk::DeviceInfo info;
  std::string against;
};

Result<Device> targetDevice(const CompatibilityQuery& query, const ctxbin::EpContextHooks& hooks) {
  if (!query.profilePath.empty()) {
    KILN_ASSIGN_OR_RETURN(vk::DeviceInfo info, vk::readDeviceProfile(query.profilePath));
    return Device{std::move(info), "profile " + query.profilePath};
  }
  KILN_ASSIGN_OR_RETURN(vk::DeviceInfo info, hooks.liveDevice(query.deviceSelector));
  std::string against = describeDevice(info);
  return Device{std::move(info), std::move(against)};
}

void apply(ModelCompatibility& result, const CompatibilityVerdict& verdict) {
  result.verdict = verdict.compatibility;
  result.state = compiledModelCompatibilityOf(verdict.compatibility);
  result.against = verdict.against;
  result.reasons = verdict.reasons;
}

std::string metadataValue(const ir::Model& model, const std::string& key) {
  for (const auto& [k, v] : model.metadata) {
    if (k == key) return v;
  }
  return "";
}

// The EPContext nodes of every graph that an EP of this build claims, the hooks of the first one's EP (what judges
// the model), and whether the model has foreign ones.
struct ContextNodes {
  std::vector<const ir::Node*> kiln;
  const ctxbin::EpContextHooks* owner = nullptr;
  bool foreign = false;
};

void collect(const ir::Graph& graph, const std::string& path, const ctxbin::ContextHooksLookup& providers,
             ContextNodes& nodes) {
  for (size_t i = 0; i < graph.nodes.size(); ++i) {
    const ir::Node& node = graph.nodes[i];
    if (epctx::isEpContextNode(node)) {
      if (const auto* hooks = providers(node.attrString(epctx::kSource, ""))) {
        nodes.kiln.push_back(&node);
        if (!nodes.owner) nodes.owner = hooks;
      } else {
        nodes.foreign = true;
      }
    }
    ir::forEachBody(node, i, path, [&](const ir::Graph& body, const std::string& bodyPath) {
      collect(body, bodyPath, providers, nodes);
    });
  }
}

std::string holdsNoKnownProvider(const std::string& origin, const std::string& provider) {
  return origin + " holds partitions of " + provider + ", which this build cannot load";
}

// A binary judged by `hooks` against `device`; one of another format major version is `unsupported`, not an error.
Result<CompatibilityVerdict> judgeBinaryBytes(std::span<const std::byte> bytes, const std::string& origin,
                                              const Device& device, const ctxbin::EpContextHooks& hooks) {
  KILN_ASSIGN_OR_RETURN(auto otherFormat, ctxbin::judgeFormatVersion(bytes, origin, device.against));
  if (otherFormat) return *otherFormat;
  KILN_ASSIGN_OR_RETURN(auto binary,
                        ctxbin::ContextBinary::fromBytes(std::vector<std::byte>(bytes.begin(), bytes.end()), origin));
  return hooks.judgeContext(*binary, device.info, device.against);
}

Result<CompatibilityVerdict> judgeBinaryFile(const std::string& path, const Device& device,
                                             const ctxbin::EpContextHooks& hooks) {
  KILN_ASSIGN_OR_RETURN(auto otherFormat, ctxbin::judgeFormatVersion(path, device.against));
  if (otherFormat) return *otherFormat;
  KILN_ASSIGN_OR_RETURN(auto binary, ctxbin::ContextBinary::open(path));
  return hooks.judgeContext(*binary, device.info, device.against);
}

// True when every binary file the model's main-context nodes name lies inside `baseFolder` and is the very binary
// the model recorded (its content id: a hash of header and section table only, so no section is read). The
// metadata's answer is trusted only then; the full path reports what is wrong otherwise.
bool referencedBinariesMatch(const ir::Model& model, const std::vector<const ir::Node*>& nodes,
                             const std::string& baseFolder) {
  for (const ir::Node* node : nodes) {
    if (node->attrInt(epctx::kMainContext, 1) == 0 || node->attrInt(epctx::kEmbedMode, 1) == 1) continue;
    const std::string reference = node->attrString(epctx::kEpCacheContext, "");
    const std::string recorded = metadataValue(model, epctx::kBinaryHashKeyPrefix + reference);
    if (baseFolder.empty() || recorded.empty()) return false;
    auto path = resolveContainedPath(baseFolder, reference, "ep_cache_context");
    if (!path.isOk()) return false;
    auto file = MappedFile::open(path->string());
    if (!file.isOk() || ctxbin::contentIdHex(ctxbin::contentIdOf((*file)->bytes())) != recorded) return false;
  }
  return true;
}

const CompatibilityVerdict& worse(const CompatibilityVerdict& a, const CompatibilityVerdict& b) {
  return static_cast<int>(b.compatibility) > static_cast<int>(a.compatibility) ? b : a;
}

// Judges every binary the ctx model references (inspectEpContextModel follows them); node and model problems
// (a missing, escaping or mismatched binary) are `unsupported`.
Result<CompatibilityVerdict> judgeBinaries(std::span<const std::byte> bytes, const std::string& baseFolder,
                                           const Device& device, const ctxbin::EpContextHooks& hooks) {
  KILN_ASSIGN_OR_RETURN(const EpContextModelInfo info, inspectEpContextModel(bytes, baseFolder));
  CompatibilityVerdict unsupported{Compatibility::UNSUPPORTED, {}, device.against};
  for (const auto& node : info.nodes) {
    if (node.vulkan && !node.problem.empty()) unsupported.reasons.push_back("EPContext node '" + node.name + "': " + node.problem);
  }
  for (const auto& problem : info.problems) unsupported.reasons.push_back(problem);
  if (!unsupported.reasons.empty()) return unsupported;

  CompatibilityVerdict overall{Compatibility::OPTIMAL, {}, device.against};
  for (const auto& node : info.nodes) {
    if (!node.vulkan || node.mainContext == 0 || node.binary.empty()) continue;
    Result<CompatibilityVerdict> verdict = Status(StatusCode::FAIL, "");
    if (node.embedded) {
      if (node.payloadOffset + node.payloadSize > bytes.size()) continue;  // inspect already read it: cannot happen
      verdict = judgeBinaryBytes(bytes.subspan(node.payloadOffset, node.payloadSize), node.binary, device, hooks);
    } else {
      verdict = judgeBinaryFile(node.binary, device, hooks);
    }
    if (!verdict.isOk()) {
      verdict = CompatibilityVerdict{Compatibility::UNSUPPORTED, {verdict.status().message()}, device.against};
    }
    CompatibilityVerdict named = *verdict;
    for (auto& reason : named.reasons) reason = node.binary + ": " + reason;
    const Compatibility before = overall.compatibility;
    overall.compatibility = worse(overall, named).compatibility;
    if (named.compatibility == overall.compatibility || named.compatibility != Compatibility::OPTIMAL) {
      if (overall.compatibility != before && static_cast<int>(overall.compatibility) > static_cast<int>(before)) {
        overall.reasons.clear();  // only the reasons of the worst state are kept
      }
      if (named.compatibility == overall.compatibility) {
        overall.reasons.insert(overall.reasons.end(), named.reasons.begin(), named.reasons.end());
      }
    }
  }
  return overall;
}

// Adds the compile record's staleness: source changed -> UNSUPPORTED; options changed or another Kiln -> at best
// SUPPORTED_PREFER_RECOMPILATION (the Kiln verdict stays what the device says).
Status applyStaleness(ModelCompatibility& result, const std::string& baseFolder, const CompatibilityQuery& query,
                      const std::optional<std::map<std::string, std::string>>& options) {
  const auto record = epctx::decodeCompileRecord(result.compileRecord);
  if (!record) {
    if (!query.sourceModelPath.empty()) {
      result.reasons.push_back("the ctx model records no compile (compiled by an older Kiln): the source cannot be compared");
    }
    return Status::ok();
  }
  std::string source = query.sourceModelPath;
  if (source.empty() && !record->sourceModel.empty() && !baseFolder.empty()) {
    std::error_code error;
    const auto recorded = (std::filesystem::path(baseFolder) / record->sourceModel).lexically_normal();
    if (std::filesystem::is_regular_file(recorded, error)) source = recorded.string();
  }
  if (source.empty() && record->weightless()) {
    result.state = CompiledModelCompatibility::UNSUPPORTED;
    result.reasons.push_back("weightless: its weights are read from the source model '" + record->sourceModel +
                             "' (relative to the ctx model's folder), which is not there: give the source model's path "
                             "(ep.context_source_model_path)");
  }
  std::optional<std::string> sourceHash;
  if (!source.empty()) {
    KILN_ASSIGN_OR_RETURN(sourceHash, epctx::sourceContentHash(source));
    result.sourceChecked = source;
  }
  const epctx::Staleness staleness = epctx::stalenessOf(*record, sourceHash, options);
  if (staleness.reasons.empty()) return Status::ok();
  result.reasons.insert(result.reasons.end(), staleness.reasons.begin(), staleness.reasons.end());
  if (staleness.sourceChanged) {
    result.state = CompiledModelCompatibility::UNSUPPORTED;
  } else if (result.state == CompiledModelCompatibility::SUPPORTED_OPTIMAL) {
    result.state = CompiledModelCompatibility::SUPPORTED_PREFER_RECOMPILATION;
  }
  return Status::ok();
}

}  // namespace

namespace epctx {

Result<std::optional<CompatibilityVerdict>> judgeOtherFormat(std::span<const std::byte> bytes, const std::string& origin,
                                                             const CompatibilityQuery& query,
                                                             const ctxbin::ContextHooksLookup& providers) {
  KILN_ASSIGN_OR_RETURN(const auto version, ctxbin::readFormatVersion(bytes));
  if (version.first == ctxbin::kFormatMajor) return std::optional<CompatibilityVerdict>();
  const ctxbin::EpContextHooks* fallback = providers ? providers("") : nullptr;
  if (!fallback) return Status(StatusCode::NOT_IMPLEMENTED, holdsNoKnownProvider(origin, "an unknown EP"));
  KILN_ASSIGN_OR_RETURN(const Device device, targetDevice(query, *fallback));
  return ctxbin::judgeFormatVersion(bytes, origin, device.against);
}

Result<CompatibilityVerdict> judgeContextBinary(const ctxbin::ContextBinary& binary, const CompatibilityQuery& query,
                                                const ctxbin::ContextHooksLookup& providers) {
  KILN_ASSIGN_OR_RETURN(const std::string provider, binary.executionProvider());
  const ctxbin::EpContextHooks* hooks = providers ? providers(provider) : nullptr;
  if (!hooks) return Status(StatusCode::NOT_IMPLEMENTED, holdsNoKnownProvider(binary.origin(), provider));
  KILN_ASSIGN_OR_RETURN(const Device device, targetDevice(query, *hooks));
  return hooks->judgeContext(binary, device.info, device.against);
}


Result<ModelCompatibility> judgeModel(std::span<const std::byte> bytes, const std::string& baseFolder,
                                      const std::string& origin, const CompatibilityQuery& query,
                                      const std::optional<std::map<std::string, std::string>>& currentOptions,
                                      const ctxbin::ContextHooksLookup& providers) {
  ModelCompatibility result;
  if (ctxbin::readFormatVersion(bytes).isOk()) {  // a context binary: its magic is unmistakable
    result.fileKind = "context_binary";
    KILN_ASSIGN_OR_RETURN(auto otherFormat, judgeOtherFormat(bytes, origin, query, providers));
    if (otherFormat) {
      apply(result, *otherFormat);
      return result;
    }
    KILN_ASSIGN_OR_RETURN(auto binary,
                          ctxbin::ContextBinary::fromBytes(std::vector<std::byte>(bytes.begin(), bytes.end()), origin));
    KILN_ASSIGN_OR_RETURN(const CompatibilityVerdict verdict, judgeContextBinary(*binary, query, providers));
    apply(result, verdict);
    // Format 1.1 binaries carry the compile record too: a binary alone can be found stale.
    if (auto parsed = ctxbin::parseHeader(bytes); parsed.isOk()) {
      for (const auto& section : parsed->sections) {
        if (section.kind != ctxbin::SectionKind::COMPILE_RECORD) continue;
        result.compileRecord.assign(reinterpret_cast<const char*>(bytes.data() + section.offset), section.size);
        KILN_RETURN_IF_ERROR(applyStaleness(result, baseFolder, query, currentOptions));
      }
    }
    return result;
  }
  KILN_ASSIGN_OR_RETURN(const onnx_io::LoadedModel loaded, onnx_io::loadModelBuffer(bytes));
  ContextNodes nodes;
  collect(*loaded.model.graph, ir::kMainGraphPath, providers, nodes);
  if (nodes.owner) {
    result.compatibilityInfo =
        metadataValue(loaded.model, epctx::kCompatibilityInfoKeyPrefix + nodes.owner->executionProvider());
  }
  if (nodes.kiln.empty()) {
    result.fileKind = "model";
    result.state = CompiledModelCompatibility::NOT_APPLICABLE;
    result.reasons.push_back(nodes.foreign ? "its EPContext nodes belong to other execution providers"
                                           : "the model has no EPContext nodes: it is compiled when a session loads it");
    return result;
  }
  result.fileKind = "ctx_model";
  KILN_ASSIGN_OR_RETURN(const Device device, targetDevice(query, *nodes.owner));
  if (auto fromInfo = ctxbin::judgeCompatibilityInfo(result.compatibilityInfo, device.info, device.against);
      fromInfo && referencedBinariesMatch(loaded.model, nodes.kiln, baseFolder) &&
      metadataValue(loaded.model, epctx::kIoDigestKey) == epctx::declaredIoDigest(loaded.model)) {
    apply(result, *fromInfo);
    result.fromMetadata = true;
  } else {
    KILN_ASSIGN_OR_RETURN(const CompatibilityVerdict verdict, judgeBinaries(bytes, baseFolder, device, *nodes.owner));
    apply(result, verdict);
  }
  result.compileRecord = metadataValue(loaded.model, epctx::kCompileRecordKey);
  KILN_RETURN_IF_ERROR(applyStaleness(result, baseFolder, query, currentOptions));
  return result;
}

}  // namespace epctx

Result<std::string> getCompatibilityInfoFromModel(std::span<const std::byte> modelBytes) {
  return guarded([&]() -> Result<std::string> {
    KILN_ASSIGN_OR_RETURN(const onnx_io::LoadedModel loaded, onnx_io::loadModelBuffer(modelBytes));
    return metadataValue(loaded.model, epctx::kCompatibilityInfoKey);
  });
}

Result<std::string> getCompatibilityInfoFromModel(const std::string& modelPath) {
  return guarded([&]() -> Result<std::string> {
    KILN_ASSIGN_OR_RETURN(const onnx_io::LoadedModel loaded, onnx_io::loadModelFile(modelPath));
    return metadataValue(loaded.model, epctx::kCompatibilityInfoKey);
  });
}
}  // namespace kiln
