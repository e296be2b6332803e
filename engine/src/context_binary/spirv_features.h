// What a SPIR-V module needs from a device, read from the module itself: OpCapability instructions map to the
// feature bits of the context binary header, OpExecutionMode LocalSize to workgroup limits.
#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <string>

#include "kiln/status.h"

namespace kiln::ctxbin {

struct SpirvNeeds {
  uint32_t features = 0;  // FeatureBit mask
  std::array<uint32_t, 3> localSize{1, 1, 1};
};

// Scans `words`. INVALID_GRAPH when it is not a well-formed SPIR-V module (bad magic, an instruction running
// past the end) or declares a capability Kiln cannot judge (so a verdict never says "compatible" blindly).
Result<SpirvNeeds> scanSpirv(std::span<const uint32_t> words);

}  // namespace kiln::ctxbin
