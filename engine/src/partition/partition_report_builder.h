// Builds the public partition report (kiln/partition_report.h) from an applied partition plan.
#pragma once

#include "kiln/partition_report.h"
#include "optimizer/optimizer.h"
#include "partition/graph_partitioner.h"

namespace kiln {

// The report of `plan` (applied: CPU runs are read from the rewritten graphs) with the Constant nodes the
// optimizer folded, each listed under its graph.
PartitionReport makePartitionReport(const PartitionPlan& plan, const optimizer::OptimizationResult& optimization);

}  // namespace kiln
