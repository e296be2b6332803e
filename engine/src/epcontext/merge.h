// The work behind kiln/epcontext.h's mergeEpContextModels, with the hooks of the EP that owns the binaries (which
// exports the merged binary's contents); session/merge_api.cpp supplies them.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "context_binary/ep_context_hooks.h"
#include "kiln/epcontext.h"

namespace kiln::epctx {

// mergeEpContextModels (kiln/epcontext.h), the merged binary exported by `hooks`.
Result<MergeResult> mergeModels(const std::vector<MergeInput>& inputs, const std::string& outputPath,
                                const std::vector<std::pair<std::string, std::string>>& connections,
                                const ctxbin::ContextHooksLookup& providers);

}  // namespace kiln::epctx
