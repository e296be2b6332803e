// A compiled model as plain data: what session creation produces after compiling the partitions, what an EPContext
// model and its context binary serialize, and what a session is created from again.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "ep/execution_provider.h"
#include "ir/graph.h"

namespace kiln {

// Where a loaded partition came from: the op of the node that held it and the binary it was read from.
struct StoredPartitionOrigin {
  std::string opType;  // "EPContext"; empty: the fused node's own op type
  std::string binary;  // ReportedPartition::binary: ep_cache_context as written, or "embedded"
};

// The top-level model rewritten so that each compiled partition is one fused KilnPartition node (its `partition`
// attribute indexes `partitions`, graph_partitioner.h), and the partitions as plain data. An EPContext model and
// its context binary are the serialized form of this (epcontext/ maps EPContext nodes onto fused nodes).
struct CompiledModel {
  ir::Model model;
  std::vector<CompiledPartition> partitions;
  std::vector<std::shared_ptr<const void>> resources;  // what the partitions' storage lives in (shared binaries)
  std::vector<StoredPartitionOrigin> origins;  // parallel to partitions when loaded from EPContext nodes, else empty
};

}  // namespace kiln
