#include "onnx/path_rules.h"

namespace kiln {

Result<std::filesystem::path> resolveContainedPath(const std::filesystem::path& baseFolder, const std::string& relative,
                                                   const std::string& what) {
  namespace fs = std::filesystem;
  auto reject = [&](const std::string& why) {
    return Status(StatusCode::INVALID_GRAPH,
                  what + " '" + relative + "' " + why + " (base folder '" + baseFolder.string() + "')");
  };
  if (relative.empty()) return reject("is empty");
  const fs::path path(relative);
  if (path.is_absolute() || path.has_root_name() || path.has_root_directory()) return reject("is an absolute path");
  for (const auto& part : path) {
    if (part == "..") return reject("has a '..' component");
  }
  std::error_code ec;
  const fs::path base = fs::weakly_canonical(fs::absolute(baseFolder, ec), ec);
  const fs::path target = fs::weakly_canonical(base / path, ec);
  if (ec) return reject("cannot be resolved: " + ec.message());
  // Compare component-wise so "/a/bc" is not taken as inside "/a/b".
  auto baseIt = base.begin();
  auto targetIt = target.begin();
  for (; baseIt != base.end(); ++baseIt, ++targetIt) {
    if (baseIt->empty()) continue;  // trailing separator
    if (targetIt == target.end() || *baseIt != *targetIt) return reject("escapes the model folder");
  }
  return target;
}

}  // namespace kiln
