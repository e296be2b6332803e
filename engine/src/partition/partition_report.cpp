// The partition report: built from the applied plan (kiln/partition_report.h is the public shape).
#include <algorithm>

#include "ir/graph_paths.h"
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

// Collects runs of consecutive CPU-EP nodes of one graph and closes each into a cpu_N partition.
class CpuRuns {
 public:
  CpuRuns(const ir::Graph& graph, const std::string& provider, int& counter)
      : graph_(graph), provider_(provider), counter_(counter) {}

  void add(size_t node) { run_.push_back(node); }

  // Appends the open run (if any) to `partitions`.
  void close(std::vector<ReportedPartition>& partitions) {
    if (run_.empty()) return;
    ReportedPartition cpuRun;
    cpuRun.name = "cpu_" + std::to_string(counter_++);
    cpuRun.executionProvider = provider_;
    for (size_t i : run_) cpuRun.nodes.push_back(graph_.nodes[i].label());
    Borders borders = computeBorders(graph_, run_);
    cpuRun.inputs = withoutInitializers(graph_, borders.inputs);
    cpuRun.outputs = std::move(borders.outputs);
    partitions.push_back(std::move(cpuRun));
    run_.clear();
  }

 private:
  const ir::Graph& graph_;
  const std::string& provider_;
  int& counter_;
  std::vector<size_t> run_;
};

struct StoredModelWalk {
  const std::vector<CompiledPartition>& partitions;
  const std::vector<StoredPartitionOrigin>& origins;
  const std::string& cpuProvider;
  PartitionReport& report;
  int cpuRuns = 0;

  // Reports `graph` at `path`, then its bodies depth-first (the order the partitioner plans them in).
  void visit(const ir::Graph& graph, const std::string& path) {
    GraphPartitionReport entry;
    entry.path = path;
    CpuRuns runs(graph, cpuProvider, cpuRuns);
    for (size_t i = 0; i < graph.nodes.size(); ++i) {
      const ir::Node& node = graph.nodes[i];
      const int64_t index = isFused(node) ? node.attrInt(kFusedPartitionAttribute, -1) : -1;
      if (index < 0 || static_cast<size_t>(index) >= partitions.size()) {
        runs.add(i);
        entry.nodes.push_back({node.label(), node.opType, cpuProvider, {}});
        continue;
      }
      runs.close(entry.partitions);
      const CompiledPartition& stored = partitions[static_cast<size_t>(index)];
      const StoredPartitionOrigin* origin = static_cast<size_t>(index) < origins.size() ? &origins[static_cast<size_t>(index)] : nullptr;
      ir::Node shown;
      shown.name = node.name;
      shown.opType = origin && !origin->opType.empty() ? origin->opType : node.opType;
      entry.nodes.push_back({shown.label(), shown.opType, stored.executionProvider, {}});
      ReportedPartition partition;
      partition.name = stored.name;
      partition.executionProvider = stored.executionProvider;
      partition.compiled = true;
      partition.nodes = {shown.label()};
      std::vector<std::string> inputs;
      std::copy_if(node.inputs.begin(), node.inputs.end(), std::back_inserter(inputs),
                   [](const std::string& name) { return !name.empty(); });
      partition.inputs = withoutInitializers(graph, inputs);
      std::copy_if(node.outputs.begin(), node.outputs.end(), std::back_inserter(partition.outputs),
                   [](const std::string& name) { return !name.empty(); });
      if (origin) partition.binary = origin->binary;
      entry.partitions.push_back(std::move(partition));
    }
    runs.close(entry.partitions);
    report.graphs.push_back(std::move(entry));
    for (size_t i = 0; i < graph.nodes.size(); ++i) {
      ir::forEachBody(graph.nodes[i], i, path, [&](const ir::Graph& body, const std::string& bodyPath) {
        visit(body, bodyPath);
      });
    }
  }
};

}  // namespace

PartitionReport makeStoredModelReport(const ir::Graph& graph, const std::vector<CompiledPartition>& partitions,
                                      const std::vector<StoredPartitionOrigin>& origins,
                                      std::vector<std::string> providerNames, const std::string& cpuProviderName) {
  PartitionReport report;
  report.executionProviders = std::move(providerNames);
  report.optimizationLevel = "none";
  StoredModelWalk walk{partitions, origins, cpuProviderName, report};
  walk.visit(graph, ir::kMainGraphPath);
  return report;
}

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
    CpuRuns runs(graph, plan.cpuProviderName, cpuRuns);
    for (size_t i = 0; i < graph.nodes.size(); ++i) {
      const ir::Node& node = graph.nodes[i];
      if (!plan.applied || !isFused(node)) {
        runs.add(i);
        continue;
      }
      runs.close(entry.partitions);
      const PlannedPartition& planned = plan.partitions[static_cast<size_t>(node.attrInt(kFusedPartitionAttribute, 0))];
      ReportedPartition partition;
      partition.name = planned.spec.name;
      partition.executionProvider = plan.providerNames[planned.provider];
      partition.compiled = true;
      partition.nodes = planned.nodeLabels;
      partition.inputs = withoutInitializers(graph, planned.spec.inputs);
      partition.outputs = planned.spec.outputs;
      partition.reason = planned.reason;
      entry.partitions.push_back(std::move(partition));
    }
    runs.close(entry.partitions);
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
