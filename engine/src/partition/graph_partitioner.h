// GraphPartitioner: asks each EP, in preference order, which nodes it takes, and groups the graph's nodes into
// partitions (contiguous runs in topological order, one EP each) with the values that cross their borders.
#pragma once

#include <string>
#include <vector>

#include "ep/execution_provider.h"

namespace kiln {

// Why a node ended up where it is (the partition report's per-node record).
struct NodeAssignment {
  std::string node;           // node label
  std::string opType;
  std::string executionProvider;
  std::vector<std::string> rejections;  // "<EP>: <reason>" for every EP that declined it before
};

struct PartitionPlan {
  std::vector<PartitionSpec> partitions;
  std::vector<size_t> partitionProvider;  // index into the providers list, per partition
  std::vector<NodeAssignment> assignments;
};

// Partitions the top-level graph. INVALID_GRAPH... NOT_IMPLEMENTED when some node no EP takes, naming each one.
Result<PartitionPlan> partitionGraph(const ir::Graph& graph, const ir::Model& model,
                                     const std::vector<ExecutionProvider*>& providers);

}  // namespace kiln
