// Builds the public partition report (kiln/partition_report.h) from an applied partition plan, or from a compiled
// model whose partitions were loaded (an EPContext model).
#pragma once

#include "kiln/partition_report.h"
#include "optimizer/optimizer.h"
#include "partition/graph_partitioner.h"

namespace kiln {

// The report of `plan` (applied: CPU runs are read from the rewritten graphs) with the Constant nodes the
// optimizer folded, each listed under its graph.
PartitionReport makePartitionReport(const PartitionPlan& plan, const optimizer::OptimizationResult& optimization);

// Where a loaded partition came from: the op of the node that held it and the binary it was read from.
struct StoredPartitionOrigin {
  std::string opType;  // "EPContext"; empty: the fused node's own op type
  std::string binary;  // ReportedPartition::binary: ep_cache_context as written, or "embedded"
};

// The report of a compiled model: `graph` (with every If/Loop/Scan body) holds one fused node per entry of
// `partitions` (its `partition` attribute indexes them, and `origins` when that is not empty); each is a compiled
// partition, the nodes between them runs of `cpuProviderName` nodes. Nothing was optimized: level "none".
PartitionReport makeStoredModelReport(const ir::Graph& graph, const std::vector<CompiledPartition>& partitions,
                                      const std::vector<StoredPartitionOrigin>& origins,
                                      std::vector<std::string> providerNames, const std::string& cpuProviderName);

}  // namespace kiln
