// The Contracts' path rules for files a model refers to (external data now, context binaries later): a path must
// be relative, free of ".." components, and resolve (symlinks followed) inside its base folder.
#pragma once

#include <filesystem>
#include <string>

#include "kiln/status.h"

namespace kiln {

// Resolves `relative` against `baseFolder`. INVALID_GRAPH naming `what` (e.g. "external data location"), the path
// and the base when the path is empty, absolute, has a ".." component or escapes the base. The target need not
// exist (the caller reports NO_SUCHFILE).
Result<std::filesystem::path> resolveContainedPath(const std::filesystem::path& baseFolder, const std::string& relative,
                                                   const std::string& what);

}  // namespace kiln
