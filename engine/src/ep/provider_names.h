// The execution providers a session may have, by the short names kiln.execution_providers lists.
#pragma once

#include <string>
#include <vector>

#include "kiln/session_options.h"

namespace kiln {

// The short names ("vulkan", "cpu") kiln.execution_providers lists (default "vulkan,cpu"), trimmed, without
// repeats. INVALID_ARGUMENT for an unknown name.
Result<std::vector<std::string>> configuredProviderNames(const SessionOptions& options);

}  // namespace kiln
