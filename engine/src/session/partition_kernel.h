// The CPU executor's kernel for a fused KilnPartition node: hands the node's inputs to the loaded compiled
// partition and its outputs back, matching values by name (an EP may order or trim its inputs as it likes).
#pragma once

#include <memory>

#include "ep/cpu/kernel.h"
#include "ep/execution_provider.h"

namespace kiln {

// A kernel for `node` that runs `executable` (which must outlive it). INVALID_GRAPH when the compiled partition
// reads a value the node does not provide or the node expects an output the partition does not produce.
// `deviceOutputs` (owned by the session, may be null): the value names that the current run leaves in device
// memory (IoBinding outputs bound to DEVICE); the partition keeps those of its outputs there.
Result<std::unique_ptr<cpu::Kernel>> makePartitionKernel(const ir::Node& node, const CompiledPartition& compiled,
                                                         PartitionExecutable& executable,
                                                         const std::vector<std::string>* deviceOutputs = nullptr);

}  // namespace kiln
