// The pipeline-users section (format 1.2, SectionKind::PIPELINE_USERS): for each partition, the nodes of its graph
// whose kernels dispatch each SPIR-V module (one compute pipeline per module), so a viewer links a pipeline to
// nodes. Nothing reads it to run. Layout:
//   u32 records; per record: str partition, u32 pipelines;
//     per pipeline: str variant key (as in the SPIR-V section), u32 nodes; per node: u32 index, str name
// (str = u32 length + bytes; index into the partition's graph nodes, name as that node is named there). A binary
// without the section (written before format 1.2) records no users.
#pragma once

#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <vector>

#include "ep/execution_provider.h"
#include "kiln/context_binary.h"

namespace kiln::ctxbin {

// One node that dispatches a pipeline.
struct PipelineUser {
  uint32_t node = 0;  // index into the partition's graph nodes
  std::string name;   // that node's name
};
// Partition name -> variant key -> the nodes that dispatch it, in node order.
using PipelineUsers = std::map<std::string, std::map<std::string, std::vector<PipelineUser>>>;

// The records of the partitions that carry pipeline users (names taken from each partition's graph as it is now, so a
// renamed graph is written with its new names), and how many there are (the section's item count).
std::vector<std::byte> encodePipelineUsersSection(const std::vector<CompiledPartition>& partitions, uint64_t* records);

// INVALID_GRAPH naming the pipeline_users section when the bytes do not parse, a count runs past them, or a
// partition, pipeline or node appears twice.
Result<PipelineUsers> decodePipelineUsersSection(std::span<const std::byte> bytes);

// Sets each partition's pipelineUsers from `users`. INVALID_GRAPH naming the section when it names a partition the
// binary lacks, a variant key its partition has no SPIR-V for, a node index past its graph, or a name that is not
// the indexed node's.
Status attachPipelineUsers(PipelineUsers users, std::vector<CompiledPartition>& partitions);

// The nodes of `partitions` that dispatch variant `key`, partition by partition in node order (the public view).
std::vector<ContextBinaryNodeRef> pipelineNodes(const std::vector<CompiledPartition>& partitions, const std::string& key);

}  // namespace kiln::ctxbin
