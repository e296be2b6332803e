// Whether the live device a session's configuration selects may load a context binary: the verdict (with the
// suboptimal rule) and, for an `optimal` binary, its driver cache handed to the device, both through the owning
// EP's hooks (context_binary/ep_context_hooks.h). EPContext loading and sessions over a bare binary call these.
#pragma once

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "context_binary/context_binary.h"
#include "context_binary/ep_context_hooks.h"
#include "kiln/context_binary.h"
#include "kiln/timings.h"

namespace kiln {

// Which device judges a binary and what a merely compatible verdict means, from the session's configuration.
struct AdmissionPolicy {
  std::string deviceSelector;     // kiln.vulkan.device: index or name substring ("" = the default device)
  bool failOnSuboptimal = false;  // session.fail_on_suboptimal_compiled_model=1
  // The session's context-owning EPs, by name or EPContext source: a binary is judged by the one that wrote it.
  ctxbin::ContextHooksLookup providers;
};

// Judges an open binary, through the hooks of the EP that wrote it (its partitions' EP, which the session must
// hold: NOT_IMPLEMENTED otherwise), against the device the policy selects (lavapipe included): INVALID_GRAPH when
// it is `unsupported` (with the reasons); FAIL when it is `compatible` and
// session.fail_on_suboptimal_compiled_model=1; an `optimal` binary's driver blob is attached to the device, which
// is added to `keepAlive` (hold it until the session has acquired the device). Adds binary_validate_ms to `timings`.
Result<CompatibilityVerdict> admitBinary(const ctxbin::ContextBinary& binary, const AdmissionPolicy& policy,
                                         SessionTimings& timings, std::vector<std::shared_ptr<const void>>& keepAlive);

// Opens the binary at `path`, judges it against the device the policy selects (lavapipe included) and
// returns it with the verdict. INVALID_GRAPH when it cannot be read or is `unsupported` (with the reasons); FAIL
// when it is `compatible` and session.fail_on_suboptimal_compiled_model=1. Adds binary_read_ms and
// binary_validate_ms to `timings`.
Result<std::pair<std::shared_ptr<const ctxbin::ContextBinary>, CompatibilityVerdict>> openCompiledBinary(
    const std::string& path, const AdmissionPolicy& policy, SessionTimings& timings,
    std::vector<std::shared_ptr<const void>>& keepAlive);

// "device 0 (llvmpipe (LLVM 15.0.6, 256 bits), Mesa 22.3.6)": how verdicts name a live device.
std::string describeDevice(const vk::DeviceInfo& device);

}  // namespace kiln
