// The default location of the pipeline cache file (kiln/pipeline_cache.h).
#include <xxhash.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <vector>

#include "kiln/pipeline_cache.h"
#include "util/file_io.h"

namespace kiln {

Result<std::string> modelContentHash(const std::string& modelPath) {
  // A folder cannot be hashed; a FIFO would block the open; a missing file is left to the open's own message.
  if (Status regular = checkRegularFile(modelPath); regular.code() == StatusCode::INVALID_ARGUMENT) return regular;
  std::ifstream in(modelPath, std::ios::binary);
  if (!in) return Status(StatusCode::NO_SUCHFILE, "cannot read " + modelPath + ": " + std::strerror(errno));
  std::unique_ptr<XXH64_state_t, decltype(&XXH64_freeState)> state(XXH64_createState(), &XXH64_freeState);
  if (!state) return Status(StatusCode::FAIL, "out of memory hashing " + modelPath);
  XXH64_reset(state.get(), 0);
  // Streamed: models can be far larger than the memory a hash needs.
  std::vector<char> chunk(1 << 20);
  while (in.read(chunk.data(), static_cast<std::streamsize>(chunk.size())) || in.gcount() > 0) {
    XXH64_update(state.get(), chunk.data(), static_cast<size_t>(in.gcount()));
  }
  if (in.bad()) return Status(StatusCode::FAIL, "cannot read " + modelPath + ": " + std::strerror(errno));
  char hex[17];
  std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(XXH64_digest(state.get())));
  return std::string(hex);
}

Result<std::string> defaultPipelineCachePath(const std::string& modelPath) {
  namespace fs = std::filesystem;
  fs::path base;
  if (const char* xdg = std::getenv("XDG_CACHE_HOME"); xdg && *xdg && fs::path(xdg).is_absolute()) {
    base = xdg;
  } else if (const char* home = std::getenv("HOME"); home && *home) {
    base = fs::path(home) / ".cache";
  } else {
    return Status(StatusCode::FAIL, "no cache folder: neither XDG_CACHE_HOME nor HOME is set");
  }
  KILN_ASSIGN_OR_RETURN(const std::string hash, modelContentHash(modelPath));
  return (base / "kiln" / (hash + ".vkcache")).string();
}

}  // namespace kiln
