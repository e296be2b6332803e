#include "json_file.h"

#include <filesystem>
#include <fstream>

#include <unistd.h>

namespace kiln::app {

Status writeJsonFileAtomically(const std::string& path, const nlohmann::json& document, const std::string& what) {
  namespace fs = std::filesystem;
  const fs::path target(path);
  const fs::path temporary =
      target.parent_path() / ("." + target.filename().string() + ".tmp" + std::to_string(::getpid()));
  {
    std::ofstream out(temporary, std::ios::binary | std::ios::trunc);
    out << document.dump(2) << '\n';
    out.close();
    if (!out) {
      std::error_code ignored;
      fs::remove(temporary, ignored);
      return Status(StatusCode::FAIL, "cannot write " + what + " to '" + path + "'");
    }
  }
  std::error_code error;
  fs::rename(temporary, target, error);
  if (error) {
    fs::remove(temporary, error);
    return Status(StatusCode::FAIL, "cannot write " + what + " to '" + path + "': " + error.message());
  }
  return Status::ok();
}

}  // namespace kiln::app
