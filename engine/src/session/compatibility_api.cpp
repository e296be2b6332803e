// kiln/compatibility.h's getModelCompatibility (the query's compile options reduced to what changes a compile's
// result, then judged by epcontext/) and kiln/context_binary.h's checkContextBinary: the live device comes from the
// owning EP's hooks.
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

}  // namespace

Result<ModelCompatibility> getModelCompatibility(std::span<const std::byte> bytes, const std::string& baseFolder,
                                                 const CompatibilityQuery& query) {
  return guarded([&] { return epctx::judgeModel(bytes, baseFolder, "bytes", query, currentOptionsOf(query), contextHooks()); });
}

Result<ModelCompatibility> getModelCompatibility(const std::string& path, const CompatibilityQuery& query) {
  return guarded([&]() -> Result<ModelCompatibility> {
    KILN_ASSIGN_OR_RETURN(const std::shared_ptr<MappedFile> file, MappedFile::open(path));
    auto result = epctx::judgeModel(file->bytes(), folderOf(path), path, query, currentOptionsOf(query),
                                     contextHooks());
    if (!result.isOk()) return result.status().withContext(path);
    return result;
  });
}

// kiln/context_binary.h: the live device is the one a compile would pick (lavapipe included).
Result<CompatibilityVerdict> checkContextBinary(const std::string& path, const std::string& deviceSelector) {
  return guarded([&]() -> Result<CompatibilityVerdict> {
    KILN_ASSIGN_OR_RETURN(const vk::DeviceInfo device, contextHooks().liveDevice(deviceSelector));
    return ctxbin::judgeFile(path, device, describeDevice(device));
  });
}

Result<CompatibilityVerdict> checkContextBinary(std::span<const std::byte> bytes, const std::string& origin,
                                                const std::string& deviceSelector) {
  return guarded([&]() -> Result<CompatibilityVerdict> {
    KILN_ASSIGN_OR_RETURN(const vk::DeviceInfo device, contextHooks().liveDevice(deviceSelector));
    return ctxbin::judgeBytes(bytes, origin, device, describeDevice(device));
  });
}

}  // namespace kiln
