// Writing a JSON document to a file the way every Kiln output file is written: to a temporary file in the same
// folder, then renamed over the target, so a reader never sees it half-written and a failed write leaves nothing.
#pragma once

#include <nlohmann/json.hpp>

#include <string>

#include "kiln/status.h"

namespace kiln::app {

// `document` (indented by 2, newline-terminated) to `path`. FAIL "cannot write <what> to '<path>'" when the folder
// is missing or unwritable; nothing is created then.
Status writeJsonFileAtomically(const std::string& path, const nlohmann::json& document, const std::string& what);

}  // namespace kiln::app
