// File helpers: whole-file reads with clear statuses, and atomic writes (temp file + fsync + rename).
#pragma once

#include <cstddef>
#include <functional>
#include <span>
#include <string>
#include <vector>

#include "kiln/status.h"

namespace kiln {

// Reads a whole file. NO_SUCHFILE when it does not exist or is a directory.
Result<std::vector<std::byte>> readFileBytes(const std::string& path);

// Writes `path` atomically: `produce` writes into a temp file in the same folder, which is flushed, fsynced and
// renamed over `path` only if `produce` returns OK. A failure leaves `path` untouched and no temp file behind.
Status writeFileAtomically(const std::string& path,
                           const std::function<Status(const std::function<Status(std::span<const std::byte>)>&)>& produce);
// Convenience: atomically writes `bytes` to `path`.
Status writeFileAtomically(const std::string& path, std::span<const std::byte> bytes);

}  // namespace kiln
