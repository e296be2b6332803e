// Where the Vulkan pipeline cache file lives by default. The engine leaves the cache off unless
// kiln.vulkan.pipeline_cache_path is set; `kiln` (and later kiln-studio) set it to defaultPipelineCachePath.
#pragma once

#include <string>

#include "kiln/status.h"

namespace kiln {

// XXH64 of the model file's bytes, as 16 lower-case hex digits. NO_SUCHFILE when it cannot be read.
Result<std::string> modelContentHash(const std::string& modelPath);

// `$XDG_CACHE_HOME/kiln/<modelContentHash>.vkcache`, with `$HOME/.cache` when XDG_CACHE_HOME is unset, empty or
// relative (the XDG rule). NO_SUCHFILE when the model cannot be read; FAIL when neither variable gives a folder.
Result<std::string> defaultPipelineCachePath(const std::string& modelPath);

}  // namespace kiln
