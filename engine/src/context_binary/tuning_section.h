// The tuning section (format 1.1, SectionKind::TUNING): each partition's autotune record (kiln.vulkan.autotune=1 at
// compile) by partition name: the candidate chosen for each tuned node with every candidate's measured time, or a
// note saying why the kernels keep their defaults (a cross-compile for a device profile, say). Layout:
//   u32 records; per record: str partition, str note, u32 kernels;
//     per kernel: u32 node, str label, str chosen, u32 trials; per trial: str candidate, f64 ms (as u64 bits)
// (str = u32 length + bytes). Binaries compiled without autotune have no tuning section.
#pragma once

#include <map>
#include <span>
#include <string>
#include <vector>

#include "ep/execution_provider.h"

namespace kiln::ctxbin {

// The records of the partitions whose tuning was requested, and how many there are (the section's item count).
std::vector<std::byte> encodeTuningSection(const std::vector<CompiledPartition>& partitions, uint64_t* records);

// Partition name -> its record (requested set). INVALID_GRAPH naming the problem when the bytes do not parse, a
// count runs past them, a time is negative or not finite, or a partition appears twice.
Result<std::map<std::string, PartitionTuning>> decodeTuningSection(std::span<const std::byte> bytes);

}  // namespace kiln::ctxbin
