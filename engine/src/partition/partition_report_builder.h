// Builds the public partition report (kiln/partition_report.h) from an applied partition plan, or from a compiled
// model whose partitions were loaded (an EPContext model).
#pragma once

#include "kiln/partition_report.h"
#include "optimizer/optimizer.h"
#include "partition/compiled_model.h"
#include "partition/graph_partitioner.h"

namespace kiln {

// The report of `plan` (applied: CPU runs are read from the rewritten graphs) with the Constant nodes the
// optimizer folded, each listed under its graph.
PartitionReport makePartitionReport(const PartitionPlan& plan, const optimizer::OptimizationResult& optimization);

// The report of a compiled model: `graph` (with every If/Loop/Scan body) holds one fused node per entry of
// `partitions` (its `partition` attribute indexes them, and `origins` when that is not empty); each is a compiled
// partition, the nodes between them runs of `cpuProviderName` nodes. Nothing was optimized: level "none".
PartitionReport makeStoredModelReport(const ir::Graph& graph, const std::vector<CompiledPartition>& partitions,
                                      const std::vector<StoredPartitionOrigin>& origins,
                                      std::vector<std::string> providerNames, const std::string& cpuProviderName);

}  // namespace kiln
