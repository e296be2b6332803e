// kiln/compatibility.h's getModelCompatibility (the query's compile options reduced to what changes a compile's
// result, then judged by epcontext/) and kiln/context_binary.h's checkContextBinary, both judged by epcontext/
// through the hooks of the EP that wrote the binary.
#include <filesystem>
#include <map>
#include <optional>
#include <string>

#include "context_binary/context_binary.h"
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

// kiln/context_binary.h: the binary is judged by the EP that wrote it, against the live device a compile would pick
// (lavapipe included); a binary of another format major version is a verdict (`unsupported`), not a read error.
Result<CompatibilityVerdict> checkContextBinary(const std::string& path, const std::string& deviceSelector) {
  return guarded([&]() -> Result<CompatibilityVerdict> {
    const CompatibilityQuery query{deviceSelector, {}, {}, nullptr};
    KILN_ASSIGN_OR_RETURN(const std::shared_ptr<MappedFile> file, MappedFile::open(path));
    KILN_ASSIGN_OR_RETURN(auto otherFormat, epctx::judgeOtherFormat(file->bytes(), path, query, allContextHooks()));
    if (otherFormat) return *otherFormat;
    KILN_ASSIGN_OR_RETURN(auto binary, ctxbin::ContextBinary::open(path));  // mapped, not copied
    return epctx::judgeContextBinary(*binary, query, allContextHooks());
  });
}

Result<CompatibilityVerdict> checkContextBinary(std::span<const std::byte> bytes, const std::string& origin,
                                                const std::string& deviceSelector) {
  return guarded([&]() -> Result<CompatibilityVerdict> {
    const CompatibilityQuery query{deviceSelector, {}, {}, nullptr};
    KILN_ASSIGN_OR_RETURN(auto otherFormat, epctx::judgeOtherFormat(bytes, origin, query, allContextHooks()));
    if (otherFormat) return *otherFormat;
    KILN_ASSIGN_OR_RETURN(auto binary,
                          ctxbin::ContextBinary::fromBytes(std::vector<std::byte>(bytes.begin(), bytes.end()), origin));
    return epctx::judgeContextBinary(*binary, query, allContextHooks());
  });
}

}  // namespace kiln
