// The provider-data section (format 1.4, SectionKind::PROVIDER_DATA): what an execution provider stores of a
// partition in its own format (CompiledPartition::providerData), kept as opaque bytes by partition name. The
// format never interprets them: the EP that wrote them reads them back when it loads the partition, and describes
// them for inspect (context_binary/ep_context_hooks.h). Layout:
//   u32 records; per record: str partition, str execution provider, u64 size, size bytes
// (str = u32 length + bytes). Binaries whose partitions store no provider data have no such section.
#pragma once

#include <map>
#include <span>
#include <string>
#include <vector>

#include "ep/execution_provider.h"

namespace kiln::ctxbin {

// The records of the partitions that hold provider data, and how many there are (the section's item count).
std::vector<std::byte> encodeProviderDataSection(const std::vector<CompiledPartition>& partitions, uint64_t* records);

// Gives each partition its record. INVALID_GRAPH naming the problem when the bytes do not parse, a partition
// appears twice, a record names a partition the binary does not hold or was written by another EP than the
// partition's.
Status attachProviderData(std::span<const std::byte> bytes, std::vector<CompiledPartition>& partitions);

}  // namespace kiln::ctxbin
