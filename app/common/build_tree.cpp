#include "build_tree.h"

#include <cstdlib>
#include <filesystem>
#include <fstream>

namespace kiln::app {

namespace fs = std::filesystem;

std::string buildTreeSetting(const std::string& executablePath, const std::string& key) {
  std::ifstream in(fs::path(executablePath).parent_path() / "kiln-build-tree.conf");
  for (std::string line; std::getline(in, line);) {
    if (line.empty() || line[0] == '#') continue;
    const auto eq = line.find('=');
    if (eq != std::string::npos && line.compare(0, eq, key) == 0 && eq == key.size()) return line.substr(eq + 1);
  }
  return {};
}

std::string dataDirectory(const std::string& executablePath) {
  if (const char* dir = std::getenv("KILN_DATA_DIR"); dir && *dir) return dir;
  if (std::string built = buildTreeSetting(executablePath, "data_dir"); !built.empty()) return built;
  return (fs::path(executablePath).parent_path().parent_path() / "share" / "kiln").string();
}

}  // namespace kiln::app
