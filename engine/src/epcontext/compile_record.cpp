#include "epcontext/compile_record.h"

#include <nlohmann/json.hpp>

#include <filesystem>
#include <set>

#include "context_binary/format.h"
#include "context_binary/weight_source.h"
#include "kiln/config_keys.h"  // the record names its options by their config keys
#include "kiln/model_info.h"  // identifyModel
#include "kiln/version.h"
#include "onnx/model_loader.h"
#include "util/file_io.h"
#include "util/log.h"
#include "util/mapped_file.h"

namespace kiln::epctx {
namespace {

namespace fs = std::filesystem;

std::string hex(uint64_t value) { return ctxbin::contentIdHex(value); }

}  // namespace

bool CompileRecord::weightless() const {
  const auto it = options.find(config::kEnableWeightlessEpContextNodes);
  return it != options.end() && it->second == "1";
}

std::string recordedProfileValue(const std::string& profilePath) {
  if (profilePath.empty()) return "";
  auto file = MappedFile::open(profilePath);
  return "sha:" + (file.isOk() ? hex(ctxbin::contentHash((*file)->bytes())) : "");
}

Result<std::string> sourceContentHash(std::span<const std::byte> modelBytes,
                                      const std::map<std::string, ExternalInitializerInfo>& originals) {
  std::string combined = hex(ctxbin::contentHash(modelBytes));
  std::set<std::string> files;
  for (const auto& [name, info] : originals) files.insert(info.path);
  for (const auto& path : files) {  // read in chunks, never mapped: external data may be larger than memory
    KILN_RETURN_IF_ERROR(checkRegularFile(path));
    std::error_code error;
    const auto size = static_cast<uint64_t>(fs::file_size(path, error));
    if (error) return Status(StatusCode::NO_SUCHFILE, "cannot read '" + path + "': " + error.message());
    KILN_ASSIGN_OR_RETURN(const uint64_t hash, ctxbin::WeightSource::fileRange(path, 0, size).hash());
    combined += hex(hash);
  }
  return hex(ctxbin::stringHash(combined));
}

namespace {

// The model at `path` as far as hashing needs it: its ranges of external data, not the weights.
Result<onnx_io::LoadedModel> loadForHash(const std::string& path) {
  onnx_io::LoadOptions options;
  options.runShapeInference = false;
  options.deferLargeExternalData = true;
  return onnx_io::loadModelFile(path, options);
}

}  // namespace

Result<std::string> sourceContentHash(const std::string& path) {
  KILN_ASSIGN_OR_RETURN(const std::shared_ptr<MappedFile> file, MappedFile::open(path));
  KILN_ASSIGN_OR_RETURN(const auto external, onnx_io::externalInitializerRanges(file->bytes(), path));
  return sourceContentHash(file->bytes(), external);
}

Result<CompileRecord> compileRecordFor(std::span<const std::byte> sourceBytes, const std::string& sourcePath,
                                       const std::map<std::string, ExternalInitializerInfo>& originals,
                                       const std::map<std::string, std::string>& options, const std::string& ctxFolder,
                                       const CompileTarget& target) {
  CompileRecord record;
  KILN_ASSIGN_OR_RETURN(record.sourceHash, sourceContentHash(sourceBytes, originals));
  if (!sourcePath.empty()) {
    std::error_code error;
    const fs::path relative = fs::relative(fs::absolute(sourcePath, error), fs::absolute(ctxFolder, error), error);
    record.sourceModel = !error && !relative.empty() ? relative.string() : fs::path(sourcePath).filename().string();
  }
  record.options = options;
  record.kilnVersion = engineVersion();
  record.target = target;
  record.identity = compileIdentityOf(record);
  return record;
}

std::string compileIdentityOf(const CompileRecord& record) {
  // Canonical JSON (nlohmann orders object keys), so the identity does not depend on the order anything was set in.
  const nlohmann::json key = {{"source_hash", record.sourceHash},       {"options", record.options},
                              {"kiln_version", record.kilnVersion},     {"toolchain", record.target.toolchain},
                              {"target_device", record.target.device}};
  return hex(ctxbin::stringHash(key.dump()));
}

std::string encodeCompileRecord(const CompileRecord& record) {
  return nlohmann::json{{"source_hash", record.sourceHash},
                        {"source_model", record.sourceModel},
                        {"options", record.options},
                        {"kiln_version", record.kilnVersion},
                        {"toolchain", record.target.toolchain},
                        {"target_device", record.target.device},
                        {"identity", record.identity}}
      .dump();
}

std::string encodedCompileRecordFor(const ModelSource& source, const std::map<std::string, ExternalInitializerInfo>& originals,
                                    const std::map<std::string, std::string>& options, const std::string& ctxFolder,
                                    const CompileTarget& target) {
  std::shared_ptr<MappedFile> file;
  std::span<const std::byte> bytes = source.bytes;
  if (!source.path.empty()) {
    auto opened = MappedFile::open(source.path);
    if (!opened.isOk()) {
      log::warn("no compile record in the ctx model: {}", opened.status().toString());
      return "";
    }
    file = std::move(opened).value();
    bytes = file->bytes();
  }
  auto record = compileRecordFor(bytes, source.path, originals, options, ctxFolder, target);
  if (!record.isOk()) {
    log::warn("no compile record in the ctx model: {}", record.status().toString());
    return "";
  }
  return encodeCompileRecord(*record);
}

std::optional<CompileRecord> decodeCompileRecord(const std::string& text) {
  const nlohmann::json j = nlohmann::json::parse(text, nullptr, false);
  if (!j.is_object()) return std::nullopt;
  CompileRecord record;
  auto str = [&](const char* key, std::string& out) {
    auto it = j.find(key);
    if (it == j.end() || !it->is_string()) return false;
    out = it->get<std::string>();
    return true;
  };
  if (!str("source_hash", record.sourceHash) || !str("kiln_version", record.kilnVersion)) return std::nullopt;
  str("source_model", record.sourceModel);
  str("toolchain", record.target.toolchain);
  str("target_device", record.target.device);
  str("identity", record.identity);
  if (auto options = j.find("options"); options != j.end() && options->is_object()) {
    for (const auto& [key, value] : options->items()) {
      if (value.is_string()) record.options[key] = value.get<std::string>();
    }
  }
  return record;
}

Staleness stalenessOf(const CompileRecord& record, const std::optional<std::string>& currentSourceHash,
                      const std::optional<std::map<std::string, std::string>>& currentOptions,
                      const std::optional<CompileTarget>& currentTarget) {
  Staleness staleness;
  if (currentSourceHash && *currentSourceHash != record.sourceHash) {
    staleness.sourceChanged = true;
    staleness.reasons.push_back("stale: source changed (content hash " + *currentSourceHash + ", compiled from " +
                                record.sourceHash + ")");
  }
  if (currentOptions) {
    for (const auto& [key, value] : *currentOptions) {
      auto recorded = record.options.find(key);
      if (recorded != record.options.end() && recorded->second != value) {
        staleness.reasons.push_back("stale: options changed (" + key + " is '" + value + "', compiled with '" +
                                    recorded->second + "')");
      }
    }
  }
  if (record.kilnVersion != engineVersion()) {
    staleness.reasons.push_back("stale: Kiln upgraded (compiled by Kiln " + record.kilnVersion + ", this is " +
                                engineVersion() + ")");
  }
  if (currentTarget && currentTarget->toolchain != record.target.toolchain) {
    staleness.reasons.push_back("stale: compiler changed (now '" + currentTarget->toolchain + "', compiled with '" +
                                record.target.toolchain + "')");
  }
  if (currentTarget && currentTarget->device != record.target.device) {
    staleness.reasons.push_back("stale: target device changed (now '" + currentTarget->device + "', compiled for '" +
                                record.target.device + "')");
  }
  return staleness;
}

}  // namespace kiln::epctx

namespace kiln {

Result<ModelIdentity> identifyModel(const std::string& path) {
  KILN_ASSIGN_OR_RETURN(const onnx_io::LoadedModel loaded, epctx::loadForHash(path));
  KILN_ASSIGN_OR_RETURN(const std::shared_ptr<MappedFile> file, MappedFile::open(path));
  ModelIdentity identity;
  KILN_ASSIGN_OR_RETURN(identity.contentHash, epctx::sourceContentHash(file->bytes(), loaded.externalInitializers));
  for (const auto& entry : loaded.proto.metadata_props()) {
    if (entry.key() != epctx::kCompileRecordKey) continue;
    const auto record = epctx::decodeCompileRecord(entry.value());
    if (!record) break;  // another engine's record, or a damaged one: no claim about a source
    identity.sourceHash = record->sourceHash;
    if (!record->sourceModel.empty()) {
      identity.sourceModel = (std::filesystem::path(path).parent_path() / record->sourceModel).lexically_normal().string();
    }
  }
  return identity;
}

}  // namespace kiln
