// Compiling a model's Vulkan partitions into a context binary (<stem>_vulkan.bin). The EPContext model that
// points at it (<stem>_ctx.onnx, ONNX Runtime's Compile API) builds on this.
#pragma once

#include <string>

#include "kiln/context_binary.h"
#include "kiln/session_options.h"
#include "kiln/timings.h"

namespace kiln {

struct CompiledBinary {
  std::string path;
  ContextBinaryInfo info;  // what was written, as inspectContextBinary reads it back
  SessionTimings timings;  // the compile's timing breakdown
  WorkCounters counters;
};

// Compiles the model at `modelPath` for the Vulkan device the options select (a CPU-type device such as lavapipe
// counts: compiling is an explicit request) or for the device profile in kiln.vulkan.target_profile, and writes
// the context binary atomically to `binaryPath` (empty: <model folder>/<stem>_vulkan.bin). INVALID_ARGUMENT when
// `binaryPath` names a folder or the model has no Vulkan partition; the session's errors otherwise.
Result<CompiledBinary> compileContextBinary(const std::string& modelPath, const std::string& binaryPath,
                                            const SessionOptions& options);

// The default binary path for a model: "dir/model.onnx" -> "dir/model_vulkan.bin".
std::string defaultContextBinaryPath(const std::string& modelPath);

}  // namespace kiln
