// Loading an EPContext model: every EPContext node is claimed by the session's EP its `source` names (through the
// EP's context hooks: the Vulkan EP claims "Vulkan", "VulkanExecutionProvider" and nodes without a source),
// follows its ep_cache_context to a context binary (embedded or a file under the model
// folder, Contracts' path rules), and becomes a fused node running the partition stored there.
#pragma once

#include <string>
#include <vector>

#include "epcontext/binary_admission.h"
#include "kiln/compile_outputs.h"
#include "kiln/timings.h"
#include "partition/compiled_model.h"

namespace kiln::epctx {

// What loading an EPContext model takes from the session's configuration (session/ parses it).
struct ContextLoadOptions {
  std::vector<std::string> executionProviders;  // the session's EP names, in order (what errors list)
  bool shareEpContexts = false;  // ep.share_ep_contexts=1: take binaries other sessions of the process hold
  std::string sourceModelPath;   // ep.context_source_model_path: a weightless binary's source ("" = as recorded)
  AdmissionPolicy admission;     // the EPs that claim EPContext nodes, the device that judges each binary, the suboptimal rule
  ContextDataReadFunc readFunction;  // SessionOptions::setContextDataReadFunction (empty: read files)
};

// Whether `model` holds any EPContext node (in any graph): it is already compiled.
bool hasEpContextNodes(const ir::Model& model);

// The compiled model an EPContext model describes. `baseFolder` is what relative ep_cache_context paths resolve
// against: the ctx model's folder, or the folder of ep.context_file_path for a model loaded from memory (empty
// when unknown: then only embedded binaries load). Errors (Contracts): a node whose source no EP of the session claims
// → NOT_IMPLEMENTED naming the source, the node and the session's EPs; a bad, escaping or missing
// binary path, a corrupt or unsupported binary, a binary that does not match the ctx model, a graph no binary
// holds → INVALID_GRAPH; a compatible binary with session.fail_on_suboptimal_compiled_model=1 → FAIL.
// With ep.share_ep_contexts=1, binaries other sessions of the process hold are taken from them. `forDevice` false
// skips the device verdict (merging and inspecting need no device).
Result<CompiledModel> compiledModelFromEpContext(ir::Model model, const std::string& baseFolder,
                                                 const ContextLoadOptions& options, SessionTimings& timings,
                                                 bool forDevice = true);

}  // namespace kiln::epctx
