// kiln/epcontext.h's mergeEpContextModels: the merge itself is epcontext/merge.cpp; the session layer, which knows the
// execution providers, hands it the context hooks of every EP this build can create.
#include "epcontext/merge.h"
#include "session/execution_providers.h"

namespace kiln {

Result<MergeResult> mergeEpContextModels(const std::vector<MergeInput>& inputs, const std::string& outputPath,
                                         const std::vector<std::pair<std::string, std::string>>& connections) {
  return epctx::mergeModels(inputs, outputPath, connections, allContextHooks());
}

}  // namespace kiln
