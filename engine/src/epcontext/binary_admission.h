// Compiled partitions to and from context binaries on the Vulkan device: what a binary of partitions holds, and
// whether the device the options select may load a binary (the verdict, the driver cache). EPContext generation and
// loading call these; checkContextBinary (kiln/context_binary.h, the live-device verdict) is defined here too.
#pragma once

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "context_binary/context_binary.h"
#include "ep/execution_provider.h"
#include "kiln/context_binary.h"
#include "kiln/session_options.h"
#include "kiln/timings.h"

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

// "device 0 (llvmpipe (LLVM 15.0.6, 256 bits), Mesa 22.3.6)": how verdicts name a live device.
std::string describeDevice(const vk::DeviceInfo& device);

}  // namespace kiln
