// kiln/compatibility.h's getModelCompatibility (the query's compile options reduced to what changes a compile's
// result, then judged by epcontext/) and kiln/context_binary.h's checkContextBinary: the live device comes from the
// hooks of the EP that wrote the binary.
#include <filesystem>
#include <map>
#include <optional>
#include <string>

#include "context_binary/verdict.h"
#include "epcontext/binary_admission.h"
#include "epcontext/model_compatibility.h"
#include "session/execution_providers.h"
#include "session/session_config.h"
#include "util/guarded.h"
#include "util/mapped_file.h"

namespace kiln {
namespace {

std::optional<std::map<std::string, std::string>> currentOptionsOf(const CompatibilityQuery& query) {
  if (!query.compileOptions) return std::nullopt;
  return resultChangingOptions(*query.compileOptions);
}

std::string folderOf(const std::string& path) {
  const auto parent = std::filesystem::path(path).parent_path();
  return parent.empty() ? "." : parent.string();
}

// A bare binary judged by the EP that wrote it, against that EP's live device `selector` picks; a binary of another
// format major version is a verdict (`unsupported`), not a read error.
Result<CompatibilityVerdict> judgeBinary(Result<std::shared_ptr<const ctxbin::ContextBinary>> opened,
                                         const std::string& deviceSelector) {
  KILN_RETURN_IF_ERROR(opened.status());
  const ctxbin::ContextBinary& binary = *opened.value();
  KILN_ASSIGN_OR_RETURN(const std::string provider, binary.executionProvider());
  const ctxbin::EpContextHooks* hooks = allContextHooks()(provider);
  if (!hooks) {
    return Status(StatusCode::NOT_IMPLEMENTED, binary.origin() + " holds partitions of " + provider +
                                                   ", which this build cannot load");
  }
  KILN_ASSIGN_OR_RETURN(const vk::DeviceInfo device, hooks->liveDevice(deviceSelector));
  return hooks->judgeContext(binary, device, describeDevice(device));
}

// A verdict reached before any EP could be asked (a binary of another format major version), said against the
// device of the EP that claims source-less EPContext nodes (the Vulkan EP).
Result<CompatibilityVerdict> againstDefaultDevice(CompatibilityVerdict verdict, const std::string& deviceSelector) {
  const ctxbin::EpContextHooks* fallback = allContextHooks()("");
  if (!fallback) return Status(StatusCode::NOT_IMPLEMENTED, "no execution provider of this build reads context binaries");
  KILN_ASSIGN_OR_RETURN(const vk::DeviceInfo device, fallback->liveDevice(deviceSelector));
  verdict.against = describeDevice(device);
  return verdict;
}

}  // namespace

Result<ModelCompatibility> getModelCompatibility(std::span<const std::byte> bytes, const std::string& baseFolder,
                                                 const CompatibilityQuery& query) {
  return guarded([&] { return epctx::judgeModel(bytes, baseFolder, "bytes", query, currentOptionsOf(query), allContextHooks()); });
}

Result<ModelCompatibility> getModelCompatibility(const std::string& path, const CompatibilityQuery& query) {
  return guarded([&]() -> Result<ModelCompatibility> {
    KILN_ASSIGN_OR_RETURN(const std::shared_ptr<MappedFile> file, MappedFile::open(path));
    auto result = epctx::judgeModel(file->bytes(), folderOf(path), path, query, currentOptionsOf(query),
                                     allContextHooks());
    if (!result.isOk()) return result.status().withContext(path);
    return result;
  });
}

// kiln/context_binary.h: the live device is the one a compile would pick (lavapipe included).
Result<CompatibilityVerdict> checkContextBinary(const std::string& path, const std::string& deviceSelector) {
  return guarded([&]() -> Result<CompatibilityVerdict> {
    KILN_ASSIGN_OR_RETURN(auto otherFormat, ctxbin::judgeFormatVersion(path, ""));
    if (otherFormat) return againstDefaultDevice(*otherFormat, deviceSelector);
    return judgeBinary(ctxbin::ContextBinary::open(path), deviceSelector);
  });
}

Result<CompatibilityVerdict> checkContextBinary(std::span<const std::byte> bytes, const std::string& origin,
                                                const std::string& deviceSelector) {
  return guarded([&]() -> Result<CompatibilityVerdict> {
    KILN_ASSIGN_OR_RETURN(auto otherFormat, ctxbin::judgeFormatVersion(bytes, origin, ""));
    if (otherFormat) return againstDefaultDevice(*otherFormat, deviceSelector);
    return judgeBinary(ctxbin::ContextBinary::fromBytes(std::vector<std::byte>(bytes.begin(), bytes.end()), origin),
                       deviceSelector);
  });
}

}  // namespace kiln
