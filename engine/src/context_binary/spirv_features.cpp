#include "context_binary/spirv_features.h"

#include "context_binary/format.h"

namespace kiln::ctxbin {
namespace {

constexpr uint32_t kSpirvMagic = 0x07230203;
constexpr uint32_t kOpCapability = 17;
constexpr uint32_t kOpExecutionMode = 16;
constexpr uint32_t kExecutionModeLocalSize = 17;

// SPIR-V capability numbers (SPIR-V spec, "Capability") → the feature they need. 0: core in Vulkan 1.1 compute.
bool capabilityFeature(uint32_t capability, uint32_t* feature) {
  switch (capability) {
    case 0:     // Matrix
    case 1:     // Shader
    case 61:    // GroupNonUniform (basic subgroup operations: Vulkan 1.1 guarantees them in compute)
      *feature = 0;
      return true;
    case 9: *feature = kFeatureFloat16; return true;
    case 11: *feature = kFeatureInt64; return true;
    case 22: *feature = kFeatureInt16; return true;
    case 39: *feature = kFeatureInt8; return true;
    case 62:    // GroupNonUniformVote
    case 63:    // GroupNonUniformArithmetic
    case 64:    // GroupNonUniformBallot
    case 65:    // GroupNonUniformShuffle
      *feature = kFeatureSubgroupArithmetic;
      return true;
    case 4433:  // StorageBuffer16BitAccess
    case 4434:  // UniformAndStorageBuffer16BitAccess
      *feature = kFeatureStorage16Bit;
      return true;
    case 4448:  // StorageBuffer8BitAccess
    case 4449:  // UniformAndStorageBuffer8BitAccess
      *feature = kFeatureStorage8Bit;
      return true;
    default:
      return false;
  }
}

}  // namespace

Result<SpirvNeeds> scanSpirv(std::span<const uint32_t> words) {
  if (words.size() < 5 || words[0] != kSpirvMagic) {
    return Status(StatusCode::INVALID_GRAPH, "not a SPIR-V module (bad magic or shorter than its header)");
  }
  SpirvNeeds needs;
  for (size_t i = 5; i < words.size();) {
    const uint32_t count = words[i] >> 16, opcode = words[i] & 0xffff;
    if (count == 0 || count > words.size() - i) {
      return Status(StatusCode::INVALID_GRAPH, "SPIR-V instruction at word " + std::to_string(i) + " runs past the module");
    }
    if (opcode == kOpCapability && count >= 2) {
      uint32_t feature = 0;
      if (!capabilityFeature(words[i + 1], &feature)) {
        return Status(StatusCode::INVALID_GRAPH, "SPIR-V declares capability " + std::to_string(words[i + 1]) +
                                                     ", which Kiln cannot check against a device");
      }
      needs.features |= feature;
    } else if (opcode == kOpExecutionMode && count >= 6 && words[i + 2] == kExecutionModeLocalSize) {
      needs.localSize = {words[i + 3], words[i + 4], words[i + 5]};
    }
    i += count;
  }
  return needs;
}

}  // namespace kiln::ctxbin
