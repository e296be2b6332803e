#include "session/epcontext_generation.h"

#include <filesystem>
#include <mutex>
#include <set>

#include "epcontext/ctx_model_writer.h"
#include "epcontext/ctx_outputs.h"
#include "epcontext/epcontext_names.h"
#include "epcontext/weightless.h"
#include "kiln/config_keys.h"
#include "session/inference_session.h"
#include "session/execution_providers.h"
#include "session/session_config.h"
#include "util/file_io.h"
#include "util/log.h"

namespace kiln::epctx {
namespace {

namespace fs = std::filesystem;

std::string folderOf(const std::string& path) {
  const fs::path parent = fs::path(path).parent_path();
  return parent.empty() ? "." : parent.string();
}

OutputLayout layoutFor(const GenerationRequest& request, const std::string& binaryPath,
                       const std::map<std::string, ExternalInitializerInfo>& originals) {
  OutputLayout layout;
  layout.embedMode = request.embedMode;
  layout.modelFolder = folderOf(request.ctxModelPath);
  layout.binaryPath = binaryPath;
  layout.sourceModelFilename =
      request.sourceModelPath.empty() ? "" : fs::path(request.sourceModelPath).filename().string();
  layout.externalInitializersFile = request.externalInitializersFile;
  layout.externalThreshold = 0;  // ONNX Runtime: every remaining initializer goes to that file
  layout.compileRecord = request.compileRecord;
  layout.originals = &originals;
  return layout;
}

Status stageModel(FileTransaction& files, const std::string& path, const ModelFiles& model) {
  for (const auto& [dataPath, bytes] : model.dataFiles) KILN_RETURN_IF_ERROR(files.stage(dataPath, bytes));
  return files.stage(path, model.model);
}

// The process's weight-sharing group under construction (ep.share_ep_contexts=1 at generation).
struct ShareGroup {
  struct Member {
    CompiledModel compiled;
    GenerationRequest request;
    std::map<std::string, ExternalInitializerInfo> originals;
  };
  std::string binaryPath;  // fixed by the first member
  std::vector<Member> members;
  std::set<std::string> graphNames;
};

std::mutex shareMutex;
ShareGroup shareGroup;

// The binary's format-1.1 extras for `requests` (one model, or a sharing group's members; a group's binary carries
// no compile record: each member's ctx model has its own).
Result<BinaryExtras> binaryExtrasFor(const std::vector<const GenerationRequest*>& requests) {
  BinaryExtras extras;
  if (requests.size() == 1) extras.compileRecord = requests.front()->compileRecord;
  if (requests.front()->weightless) {
    std::vector<std::string> sources;
    for (const auto* request : requests) sources.push_back(request->weightSource);
    KILN_ASSIGN_OR_RETURN(extras.weightless,
                          weightlessSourcesFor(sources, folderOf(requests.front()->ctxModelPath), requests.front()->fp16));
  }
  return extras;
}

Status writeGroup(ShareGroup& group) {
  std::vector<CompiledPartition> all;
  std::vector<const GenerationRequest*> requests;
  for (const auto& member : group.members) {
    all.insert(all.end(), member.compiled.partitions.begin(), member.compiled.partitions.end());
    requests.push_back(&member.request);
  }
  KILN_ASSIGN_OR_RETURN(const BinaryExtras extras, binaryExtrasFor(requests));
  KILN_ASSIGN_OR_RETURN(const EncodedBinary binary, prepareBinary(std::move(all), allContextHooks(), extras));
  FileTransaction files;
  std::map<std::string, std::vector<std::byte>> dataFiles;  // members naming one file share it
  for (const auto& member : group.members) {
    OutputLayout layout = layoutFor(member.request, group.binaryPath, member.originals);
    layout.groupDataFiles = &dataFiles;
    KILN_ASSIGN_OR_RETURN(const ModelFiles model, serializeCtxModel(member.compiled, layout, binary));
    KILN_RETURN_IF_ERROR(stageModel(files, member.request.ctxModelPath, model));
  }
  for (const auto& [dataPath, bytes] : dataFiles) KILN_RETURN_IF_ERROR(files.stage(dataPath, bytes));
  KILN_RETURN_IF_ERROR(stageBinary(files, group.binaryPath, binary));
  return files.commit();
}

}  // namespace

size_t pendingShareGroupMembers() {
  std::lock_guard lock(shareMutex);
  return shareGroup.members.size();
}

void discardPendingShareGroup() {
  std::lock_guard lock(shareMutex);
  shareGroup = ShareGroup{};
}

namespace {

Status joinShareGroup(CompiledModel compiled, const GenerationRequest& request,
                      const std::map<std::string, ExternalInitializerInfo>& originals) {
  std::lock_guard lock(shareMutex);
  ShareGroup& group = shareGroup;
  if (group.members.empty()) group.binaryPath = request.binaryPath;
  for (const auto& partition : compiled.partitions) {
    if (group.graphNames.count(partition.name)) {
      return Status(StatusCode::FAIL, "duplicate graph name '" + partition.name +
                                          "' across the sessions sharing EP contexts: give each model its own "
                                          "ep.context_node_name_prefix");
    }
  }
  for (const auto& partition : compiled.partitions) group.graphNames.insert(partition.name);
  group.members.push_back({std::move(compiled), request, originals});
  if (!request.stopShare) {
    log::info("ep.share_ep_contexts: {} joined the group of {} ({} models); files are written when a session sets "
              "ep.stop_share_ep_contexts=1", request.ctxModelPath, group.binaryPath, group.members.size());
    return Status::ok();
  }
  Status status = writeGroup(group);
  shareGroup = ShareGroup{};  // the group ends with its last session, written or not
  return status;
}

}  // namespace

Result<std::optional<GenerationRequest>> generationRequestFor(const std::string& sourceModelPath,
                                                              const SessionConfig& config) {
  const SessionConfig::EpContext& settings = config.epContext;
  if (!settings.enable) return std::optional<GenerationRequest>();
  GenerationRequest request;
  request.sourceModelPath = sourceModelPath;
  request.ctxModelPath = settings.filePath;
  if (request.ctxModelPath.empty()) {
    if (sourceModelPath.empty()) {
      return Status(StatusCode::FAIL, "a model loaded from bytes was configured with EPContext model generation "
                                      "enabled but without a valid location: please specify a valid "
                                      "ep.context_file_path");
    }
    request.ctxModelPath = defaultCtxModelPath(sourceModelPath);
  }
  if (namesFolder(request.ctxModelPath)) {
    return Status(StatusCode::INVALID_ARGUMENT, "ep.context_file_path '" + request.ctxModelPath +
                                                    "' should not point to a folder: give a file such as model_ctx.onnx");
  }
  const std::string& embed = settings.embedMode;
  if (embed != "0" && embed != "1") {
    return Status(StatusCode::INVALID_ARGUMENT, "ep.context_embed_mode must be 0 or 1, got '" + embed + "'");
  }
  request.embedMode = embed == "1" ? 1 : 0;
  request.prefix = settings.nodeNamePrefix;
  request.externalInitializersFile = settings.externalInitializersFile;
  request.share = settings.share;
  request.stopShare = settings.stopShare;
  if (request.share && request.embedMode == 1) {
    return Status(StatusCode::INVALID_ARGUMENT, "ep.context_embed_mode must be 0 if ep.share_ep_contexts is 1 "
                                                "(the group's graphs share one binary file)");
  }
  request.weightless = settings.weightless;
  request.fp16 = config.vulkan.fp16;
  request.weightSource = sourceModelPath.empty() ? settings.sourceModelPath : sourceModelPath;
  std::error_code ec;
  if (fs::exists(request.ctxModelPath, ec)) {
    return Status(StatusCode::FAIL, "Failed to generate EP context model since the file '" + request.ctxModelPath +
                                        "' exists already. Please remove the EP context model if you want to "
                                        "re-generate it.");
  }
  return std::optional<GenerationRequest>(std::move(request));
}

Status generateEpContext(const Session& session, const GenerationRequest& request,
                         const std::map<std::string, ExternalInitializerInfo>& originals) {
  KILN_ASSIGN_OR_RETURN(CompiledModel compiled, compiledModelOf(session));
  if (compiled.partitions.empty()) {
    log::info("ep.context_enable: no node was compiled, so no EPContext model is written");
    return Status::ok();
  }
  applyNodeNamePrefix(compiled, request.prefix);
  // The binary is named after the EP whose partitions it holds (compile_outputs.h), known once they are compiled.
  GenerationRequest named = request;
  named.binaryPath = defaultContextBinaryPath(request.ctxModelPath, compiled.partitions.front().executionProvider);
  if (request.share) return joinShareGroup(std::move(compiled), named, originals);
  KILN_ASSIGN_OR_RETURN(const BinaryExtras extras, binaryExtrasFor({&request}));
  KILN_ASSIGN_OR_RETURN(const EncodedBinary binary,
                        request.embedMode == 0 ? prepareBinary(compiled.partitions, allContextHooks(), extras)
                                               : encodeBinary(compiled.partitions, allContextHooks(), extras));
  KILN_ASSIGN_OR_RETURN(const ModelFiles model, serializeCtxModel(compiled, layoutFor(named, named.binaryPath, originals), binary));
  FileTransaction files;
  if (request.embedMode == 0) KILN_RETURN_IF_ERROR(stageBinary(files, named.binaryPath, binary));
  KILN_RETURN_IF_ERROR(stageModel(files, request.ctxModelPath, model));
  return files.commit();
}

}  // namespace kiln::epctx
