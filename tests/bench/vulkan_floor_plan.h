// What a Vulkan session loading a context binary must create and upload, read from the binary alone (no
// Vulkan here): the floor benchmark (vulkan_floor.cpp) does exactly this work with raw Vulkan calls.
//
// Pipelines: the engine creates one pipeline per distinct shader variant, and the SPIR-V section stores one
// module per variant key, so the recipes are the modules the partitions name, each once. A variant key reads
// "shader|b<bindings>|l<x>x<y>x<z>|DEFINE=value...": the engine gives every pipeline a descriptor set 0 of
// <bindings> storage buffers (push-descriptor layouts where the device has VK_KHR_push_descriptor), one
// push-constant range of the header's push-constant bytes, no specialization constants (the workgroup size is
// compiled in), entry point "main". The SPIR-V is reflected to check that it agrees with its key.
//
// Uploads: per partition, as VulkanPartitionExecutable::build does: the initializers that device nodes read
// (string tensors and initializers stored as type and shape only, because a kernel folded them into its
// constants, are never uploaded), in name order, then every device node's prepacked constants. One rule the
// binary cannot express: an initializer that a device kernel folded away but a host node also reads is stored
// with its values and counted here, while the engine uploads it only for a device reader that did not fold
// it. vulkan_floor_reference computes the engine's exact figure from a fresh compile, and the floor's ctest
// compares.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "context_binary/context_binary.h"
#include "kiln/status.h"

namespace kiln::vkfloor {

struct PipelineRecipe {
  std::string key;                  // the shader variant key
  std::span<const uint32_t> spirv;  // the module's words (owned by FloorPlan::partitions)
  uint32_t bindings = 0;            // storage buffers at set 0, bindings 0..n-1
  std::array<uint32_t, 3> localSize{1, 1, 1};
};

struct UploadItem {
  const void* data = nullptr;  // inside the binary's bytes
  uint64_t bytes = 0;
};

struct FloorPlan {
  std::shared_ptr<const ctxbin::ContextBinary> binary;
  std::vector<CompiledPartition> partitions;  // owns the SPIR-V words and keeps the weight tensors alive
  std::vector<PipelineRecipe> pipelines;
  std::vector<UploadItem> uploads;
  uint64_t uploadBytes = 0;
  uint32_t pushConstantBytes = 0;
  size_t spirvModules = 0;       // modules in the SPIR-V section
  uint64_t spirvBytes = 0;       // bytes of the modules the pipelines use
  uint64_t weightBlobBytes = 0;  // bytes of the deduplicated weights section blobs
};

// Lists the work of loading `binary` (opened, so validated). INVALID_GRAPH when a section does not decode, a
// variant key does not parse or a module disagrees with its key.
Result<FloorPlan> planFromBinary(std::shared_ptr<const ctxbin::ContextBinary> binary);

// What a SPIR-V module declares: the workgroup size and the highest storage-buffer binding of set 0 plus one.
struct SpirvLayout {
  std::array<uint32_t, 3> localSize{1, 1, 1};
  uint32_t bindingsUsed = 0;
  bool otherSets = false;  // a descriptor set other than 0 is decorated
};
Result<SpirvLayout> reflectSpirv(std::span<const uint32_t> words);

}  // namespace kiln::vkfloor
