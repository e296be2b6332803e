// Compiled models to and from context binaries: the engine entry points EPContext generation and loading call.
#pragma once

#include <memory>
#include <string>

#include "context_binary/context_binary.h"
#include "kiln/context_binary.h"
#include "session/inference_session.h"

namespace kiln {

// What a context binary of `partitions` holds: the partitions, their target device (all must share one) and, for
// a live-device target, the driver's pipeline cache. INVALID_ARGUMENT when there is nothing to store.
Result<ctxbin::BinaryContents> binaryContentsFor(std::vector<CompiledPartition> partitions);

// Judges an open binary against the Vulkan device the options select (lavapipe included): INVALID_GRAPH when it
// is `unsupported` (with the reasons); FAIL when it is `compatible` and session.fail_on_suboptimal_compiled_model=1;
// an `optimal` binary's driver blob is attached to the device, which is added to `keepAlive` (hold it until the
// session has acquired the device). Adds binary_validate_ms to `timings`.
Result<CompatibilityVerdict> admitBinary(const ctxbin::ContextBinary& binary, const SessionOptions& options,
                                         SessionTimings& timings, std::vector<std::shared_ptr<const void>>& keepAlive);

// Opens the binary at `path`, judges it against the Vulkan device the options select (lavapipe included) and
// returns it with the verdict. INVALID_GRAPH when it cannot be read or is `unsupported` (with the reasons); FAIL
// when it is `compatible` and session.fail_on_suboptimal_compiled_model=1. Adds binary_read_ms and
// binary_validate_ms to `timings`.
Result<std::pair<std::shared_ptr<const ctxbin::ContextBinary>, CompatibilityVerdict>> openCompiledBinary(
    const std::string& path, const SessionOptions& options, SessionTimings& timings,
    std::vector<std::shared_ptr<const void>>& keepAlive);

// A session for `model` (rewritten: fused nodes index the binary's partitions in order) whose partitions come
// from the context binary at `binaryPath`.
Result<std::unique_ptr<Session>> createSessionFromBinary(ir::Model model, const std::string& binaryPath,
                                                         const SessionOptions& options);

}  // namespace kiln
