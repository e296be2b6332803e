#include "epcontext/shared_binaries.h"

#include <map>
#include <mutex>

namespace kiln::epctx {

Result<std::shared_ptr<const LoadedBinary>> loadBinaryFile(const std::string& canonicalPath, bool share, bool* opened,
                                                           const PartitionDecoder& decode) {
  static std::mutex mutex;
  static std::map<std::string, std::weak_ptr<const LoadedBinary>> registry;
  if (opened) *opened = false;
  // Held across the load: two sessions of one group starting together read the file once.
  std::unique_lock lock(mutex, std::defer_lock);
  if (share) {
    lock.lock();
    if (auto it = registry.find(canonicalPath); it != registry.end()) {
      if (auto alive = it->second.lock()) return alive;
    }
  }
  auto loaded = std::make_shared<LoadedBinary>();
  KILN_ASSIGN_OR_RETURN(loaded->binary, ctxbin::ContextBinary::open(canonicalPath));
  KILN_ASSIGN_OR_RETURN(loaded->partitions, decode(*loaded->binary));
  if (opened) *opened = true;
  if (share) {
    std::erase_if(registry, [](const auto& entry) { return entry.second.expired(); });
    registry[canonicalPath] = loaded;
  }
  return std::shared_ptr<const LoadedBinary>(std::move(loaded));
}

}  // namespace kiln::epctx
