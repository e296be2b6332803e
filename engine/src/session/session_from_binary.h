// A session straight from a context binary and its rewritten model (tests and benchmarks; ctx models go through
// epcontext/ctx_model_loader.h).
#pragma once

#include <memory>
#include <string>

#include "ir/graph.h"
#include "kiln/session.h"

namespace kiln {

// A session for `model` (rewritten: fused nodes index the binary's partitions in order) whose partitions come
// from the context binary at `binaryPath`.
Result<std::unique_ptr<Session>> createSessionFromBinary(ir::Model model, const std::string& binaryPath,
                                                         const SessionOptions& options);

}  // namespace kiln
