// ONNX Runtime's session-option flow: ep.context_enable=1 makes session creation write <stem>_ctx.onnx and
// <stem>_vulkan.bin as a side effect, with its rules: the output path is checked before any work (a folder is
// INVALID_ARGUMENT, an existing file is FAIL and stays untouched, a model from memory needs ep.context_file_path),
// nothing is written when nothing compiled, and an already compiled input is silently left alone.
#pragma once

#include <map>
#include <optional>
#include <string>

#include "kiln/compiler.h"
#include "kiln/session.h"

namespace kiln {
struct SessionConfig;  // session/session_config.h
}  // namespace kiln

namespace kiln::epctx {

struct GenerationRequest {
  std::string ctxModelPath;
  std::string binaryPath;  // set by generateEpContext once the exporting EP is known (its name names the file)
  std::string sourceModelPath;  // empty for a model from memory
  std::string compileRecord;    // what the compile depended on (epcontext/compile_record.h), set by the session
  int embedMode = 0;
  std::string prefix;
  std::string externalInitializersFile;  // ep.context_model_external_initializers_file_name
  bool share = false, stopShare = false;
  // ep.enable_weightless_ep_context_nodes: the binary refers to `weightSource`'s weights (the source model file,
  // else ep.context_source_model_path); `fp16` as kiln.vulkan.fp16.
  bool weightless = false, fp16 = false;
  std::string weightSource;
};

// The request ep.context_* describe for a model from `sourceModelPath` (empty: from memory); nullopt when
// ep.context_enable is not 1.
Result<std::optional<GenerationRequest>> generationRequestFor(const std::string& sourceModelPath,
                                                              const SessionConfig& config);

// Writes the ctx model and binary of a freshly compiled session. With ep.share_ep_contexts=1 the session joins
// the process's sharing group; the group's binary (named after its first model) and every member's ctx model are
// written when a session sets ep.stop_share_ep_contexts=1, so each ctx model can record the binary's content id.
Status generateEpContext(const Session& session, const GenerationRequest& request,
                         const std::map<std::string, ExternalInitializerInfo>& originals);

// Members of the process's pending sharing group (0: none).
size_t pendingShareGroupMembers();
// Drops the pending sharing group unwritten.
void discardPendingShareGroup();

}  // namespace kiln::epctx
