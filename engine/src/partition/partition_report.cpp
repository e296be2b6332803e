// The partition report: built from the applied plan (kiln/partition_report.h is the public shape).
#include <algorithm>

#include "partition/partition_borders.h"
#include "partition/partition_report_builder.h"

namespace kiln {
namespace {

bool isFused(const ir::Node& node) {
  return node.opType == kFusedPartitionOpType && node.domain == kFusedPartitionDomain;
}

// Border inputs as the report shows them: weights (the graph's own initializers) left out.
std::vector<std::string> withoutInitializers(const ir::Graph& graph, const std::vector<std::string>& names) {
  std::vector<std::string> kept;
  std::copy_if(names.begin(), names.end(), std::back_inserter(kept),
               [&](const std::string& name) { return !graph.isInitializer(name); });
  return kept;
}

}  // namespace

PartitionReport makePartitionReport(const PartitionPlan& plan, const optimizer::OptimizationResult& optimization) {
  PartitionReport report;
  report.executionProviders = plan.providerNames;
  report.optimizationLevel = optimizer::optimizationLevelName(optimization.level);
  report.nodesFolded = optimization.nodesFolded;
  report.nodesRemoved = optimization.nodesRemoved;
  int cpuRuns = 0;
  for (const GraphPlan& graphPlan : plan.graphs) {
    const ir::Graph& graph = *graphPlan.graph;
    GraphPartitionReport entry;
    entry.path = graphPlan.path;
    for (const NodeAssignment& a : graphPlan.assignments) {
      entry.nodes.push_back({a.node, a.opType, a.executionProvider, a.rejections});
    }
    // A folded constant belongs to the graph object that holds it (paths of unnamed nodes can shift as passes
    // remove nodes, the graph object does not). Constants of bodies removed as dead code are not listed.
    for (const auto& record : optimization.foldedConstants) {
      if (record.graph == &graph) entry.foldedConstants.push_back({record.node, record.output});
    }
    // Execution order of the rewritten graph: fused nodes are compiled partitions, the nodes between them form
    // runs of CPU-EP nodes.
    std::vector<size_t> run;
    auto closeRun = [&] {
      if (run.empty()) return;
      ReportedPartition cpuRun;
      cpuRun.name = "cpu_" + std::to_string(cpuRuns++);
      cpuRun.executionProvider = plan.cpuProviderName;
      for (size_t i : run) cpuRun.nodes.push_back(graph.nodes[i].label());
      Borders borders = computeBorders(graph, run);
      cpuRun.inputs = withoutInitializers(graph, borders.inputs);
      cpuRun.outputs = std::move(borders.outputs);
      entry.partitions.push_back(std::move(cpuRun));
      run.clear();
    };
    for (size_t i = 0; i < graph.nodes.size(); ++i) {
      const ir::Node& node = graph.nodes[i];
      if (!plan.applied || !isFused(node)) {
        run.push_back(i);
        continue;
      }
      closeRun();
      const PlannedPartition& planned = plan.partitions[static_cast<size_t>(node.attrInt(kFusedPartitionAttribute, 0))];
      ReportedPartition partition;
      partition.name = planned.spec.name;
      partition.executionProvider = plan.providerNames[planned.provider];
      partition.compiled = true;
      partition.nodes = planned.nodeLabels;
      partition.inputs = withoutInitializers(graph, planned.spec.inputs);
      partition.outputs = planned.spec.outputs;
      entry.partitions.push_back(std::move(partition));
    }
    closeRun();
    report.graphs.push_back(std::move(entry));
  }
  return report;
}

std::map<std::string, int64_t> nodesPerExecutionProvider(const PartitionReport& report) {
  std::map<std::string, int64_t> counts;
  for (const auto& graph : report.graphs) {
    for (const auto& node : graph.nodes) ++counts[node.executionProvider];
  }
  return counts;
}

int64_t partitionCount(const PartitionReport& report) {
  int64_t count = 0;
  for (const auto& graph : report.graphs) count += static_cast<int64_t>(graph.partitions.size());
  return count;
}

int64_t compiledPartitionCount(const PartitionReport& report) {
  int64_t count = 0;
  for (const auto& graph : report.graphs) {
    count += std::count_if(graph.partitions.begin(), graph.partitions.end(),
                           [](const ReportedPartition& p) { return p.compiled; });
  }
  return count;
}

int64_t foldedConstantCount(const PartitionReport& report) {
  int64_t count = 0;
  for (const auto& graph : report.graphs) count += static_cast<int64_t>(graph.foldedConstants.size());
  return count;
}

}  // namespace kiln
