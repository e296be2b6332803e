#include "partition/graph_partitioner.h"

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <functional>
#include <map>
#include <queue>
#include <set>
#include <unordered_map>

#include "ep/cpu/cpu_execution_provider.h"
#include "ir/graph_paths.h"
#include "partition/partition_borders.h"
#include "partition/partition_grouping.h"

namespace kiln {
namespace {

constexpr size_t kMaxListedNodes = 10;

std::string join(const std::vector<std::string>& parts, const char* separator) {
  std::string text;
  for (const auto& part : parts) text += (text.empty() ? "" : separator) + part;
  return text;
}

// "  line\n" for the first kMaxListedNodes lines, then "  and N more".
std::string listLines(const std::vector<std::string>& lines) {
  std::string text;
  for (size_t i = 0; i < lines.size() && i < kMaxListedNodes; ++i) text += "\n  " + lines[i];
  if (lines.size() > kMaxListedNodes) text += "\n  and " + std::to_string(lines.size() - kMaxListedNodes) + " more";
  return text;
}

// consumers[i]: nodes of `graph` that read an output of node i, directly or through their bodies.
std::vector<std::vector<size_t>> consumersOf(const ir::Graph& graph) {
  std::unordered_map<std::string, size_t> producer;
  for (size_t i = 0; i < graph.nodes.size(); ++i) {
    for (const auto& out : graph.nodes[i].outputs) {
      if (!out.empty()) producer[out] = i;
    }
  }
  std::vector<std::set<size_t>> sets(graph.nodes.size());
  for (size_t j = 0; j < graph.nodes.size(); ++j) {
    std::vector<std::string> reads = graph.nodes[j].inputs;
    for (auto& name : graph.implicitInputs(graph.nodes[j])) reads.push_back(std::move(name));
    for (const auto& name : reads) {
      auto it = name.empty() ? producer.end() : producer.find(name);
      if (it != producer.end() && it->second != j) sets[it->second].insert(j);
    }
  }
  std::vector<std::vector<size_t>> consumers;
  for (auto& s : sets) consumers.emplace_back(s.begin(), s.end());
  return consumers;
}

// The execution order of a graph's units (groups and single nodes): Kahn's algorithm taking the ready unit that
// comes first in the planned order (a group sits where its first node was), so unchanged graphs keep their order.
// Fused units carry their group's index.
std::vector<PlannedUnit> orderUnits(const std::vector<std::vector<size_t>>& consumers,
                                    const std::vector<NodeGroup>& groups) {
  const size_t n = consumers.size();
  std::vector<size_t> unitOf(n, SIZE_MAX);
  std::vector<PlannedUnit> units;
  std::vector<size_t> position;
  for (size_t g = 0; g < groups.size(); ++g) {
    for (size_t node : groups[g].nodes) unitOf[node] = g;
    units.push_back({true, g});
    position.push_back(groups[g].nodes.front());
  }
  for (size_t i = 0; i < n; ++i) {
    if (unitOf[i] != SIZE_MAX) continue;
    unitOf[i] = units.size();
    units.push_back({false, i});
    position.push_back(i);
  }
  std::vector<std::set<size_t>> successors(units.size());
  std::vector<size_t> pending(units.size(), 0);
  for (size_t i = 0; i < n; ++i) {
    for (size_t c : consumers[i]) {
      if (unitOf[c] != unitOf[i] && successors[unitOf[i]].insert(unitOf[c]).second) ++pending[unitOf[c]];
    }
  }
  using Entry = std::pair<size_t, size_t>;  // (position, unit)
  std::priority_queue<Entry, std::vector<Entry>, std::greater<Entry>> ready;
  for (size_t u = 0; u < units.size(); ++u) {
    if (pending[u] == 0) ready.push({position[u], u});
  }
  std::vector<PlannedUnit> order;
  while (!ready.empty()) {
    const size_t u = ready.top().second;
    ready.pop();
    order.push_back(units[u]);
    for (size_t s : successors[u]) {
      if (--pending[s] == 0) ready.push({position[s], s});
    }
  }
  return order;  // complete: groupNodes guarantees the contracted graph is acyclic
}

class Planner {
 public:
  Planner(ir::Model& model, const std::vector<ExecutionProvider*>& providers) : model_(model), providers_(providers) {
    for (size_t p = 0; p < providers.size(); ++p) {
      plan_.providerNames.push_back(providers[p]->name());
      if (providers[p]->name() == cpu::CpuExecutionProvider::kName && cpu_ == SIZE_MAX) cpu_ = p;
    }
    plan_.cpuProviderName = cpu::CpuExecutionProvider::kName;
  }

  Status planGraph(ir::Graph& graph, const std::string& path);
  Result<PartitionPlan> finish(const PartitionOptions& options);

 private:
  ir::Model& model_;
  const std::vector<ExecutionProvider*>& providers_;
  size_t cpu_ = SIZE_MAX;
  PartitionPlan plan_;
  std::map<std::string, int> nextNumber_;  // per EP short name: partitions are numbered across the model
  std::vector<std::string> unassigned_;    // "path: label: reasons" of nodes no EP takes
  std::vector<std::string> onCpu_;         // the same for nodes placed on the CPU EP
};

Status Planner::planGraph(ir::Graph& graph, const std::string& path) {
  const size_t n = graph.nodes.size();
  std::vector<std::vector<NodeSupport>> answers;
  for (ExecutionProvider* ep : providers_) {
    answers.push_back(ep->getCapability(graph, model_));
    if (answers.back().size() != n) {
      return Status(StatusCode::EP_FAIL, ep->name() + " answered for " + std::to_string(answers.back().size()) +
                                             " nodes of graph '" + path + "', which has " + std::to_string(n));
    }
  }
  GraphPlan graphPlan{path, &graph, {}, {}};
  // Nodes no EP takes are left ungrouped like CPU nodes (planning fails later, after listing all of them).
  const size_t ungrouped = cpu_ != SIZE_MAX ? cpu_ : providers_.size();
  std::vector<size_t> owner(n, ungrouped);
  for (size_t i = 0; i < n; ++i) {
    const ir::Node& node = graph.nodes[i];
    NodeAssignment assignment{node.label(), node.opType, "", {}};
    const bool controlFlow = ir::hasSubgraphs(node);
    size_t chosen = SIZE_MAX;
    for (size_t p = 0; p < providers_.size() && chosen == SIZE_MAX; ++p) {
      if (controlFlow && p != cpu_) {
        // The CPU EP's control-flow kernels run bodies through the session's executor; bodies are partitioned
        // on their own, so the nodes inside still reach the other EPs.
        assignment.rejections.push_back(providers_[p]->name() +
                                        ": control-flow node (If/Loop/Scan run on the CPU EP; their bodies are "
                                        "partitioned separately)");
      } else if (answers[p][i].supported) {
        chosen = p;
      } else {
        assignment.rejections.push_back(providers_[p]->name() + ": " + answers[p][i].reason);
      }
    }
    const std::string line = path + ": " + assignment.node +
                             (assignment.rejections.empty() ? "" : ": " + join(assignment.rejections, "; "));
    if (chosen == SIZE_MAX) {
      unassigned_.push_back(line + (assignment.rejections.empty() ? ": no execution provider" : ""));
    } else {
      owner[i] = chosen;
      assignment.executionProvider = providers_[chosen]->name();
      if (chosen == cpu_) {
        onCpu_.push_back(line + (assignment.rejections.empty() ? ": no other execution provider" : ""));
      }
    }
    graphPlan.assignments.push_back(std::move(assignment));
  }

  const auto consumers = consumersOf(graph);
  const std::vector<NodeGroup> groups = groupNodes({consumers, owner, ungrouped});
  graphPlan.order = orderUnits(consumers, groups);
  // Partitions are created (and named) in execution order, so names count up along the rewritten graph.
  for (auto& unit : graphPlan.order) {
    if (!unit.fused) continue;
    const NodeGroup& group = groups[unit.index];
    unit.index = plan_.partitions.size();
    PlannedPartition& partition = plan_.partitions.emplace_back();
    const std::string shortName = providerShortName(providers_[group.owner]->name());
    partition.spec.name = shortName + "_" + std::to_string(nextNumber_[shortName]++);
    partition.spec.nodeIndices = group.nodes;
    Borders borders = computeBorders(graph, group.nodes);
    partition.spec.inputs = std::move(borders.inputs);
    partition.spec.outputs = std::move(borders.outputs);
    partition.provider = group.owner;
    partition.graph = &graph;
    partition.graphPath = path;
    for (size_t node : group.nodes) partition.nodeLabels.push_back(graphPlan.assignments[node].node);
  }
  plan_.graphs.push_back(std::move(graphPlan));

  for (size_t i = 0; i < n; ++i) {
    Status status;
    ir::forEachBody(graph.nodes[i], i, path, [&](ir::Graph& body, const std::string& bodyPath) {
      if (status.isOk()) status = planGraph(body, bodyPath);
    });
    KILN_RETURN_IF_ERROR(status);
  }
  return Status::ok();
}

Result<PartitionPlan> Planner::finish(const PartitionOptions& options) {
  if (options.disableCpuFallback && (!onCpu_.empty() || !unassigned_.empty())) {
    std::vector<std::string> lines = unassigned_;
    lines.insert(lines.end(), onCpu_.begin(), onCpu_.end());
    return Status(StatusCode::FAIL, "session.disable_cpu_ep_fallback=1, but " + std::to_string(lines.size()) +
                                        " node(s) would not run on a non-CPU execution provider:" + listLines(lines));
  }
  if (!unassigned_.empty()) {
    return Status(StatusCode::NOT_IMPLEMENTED, "no execution provider can run these nodes:" + listLines(unassigned_));
  }
  return std::move(plan_);
}

}  // namespace

std::string providerShortName(const std::string& providerName) {
  std::string name = providerName;
  const std::string suffix = "ExecutionProvider";
  if (name.size() > suffix.size() && name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0) {
    name.resize(name.size() - suffix.size());
  }
  for (char& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return name.empty() ? "ep" : name;
}

Result<PartitionPlan> planPartitions(ir::Model& model, const std::vector<ExecutionProvider*>& providers,
                                     const PartitionOptions& options) {
  if (!model.graph) return Status(StatusCode::INVALID_GRAPH, "the model has no graph");
  Planner planner(model, providers);
  KILN_RETURN_IF_ERROR(planner.planGraph(*model.graph, ir::kMainGraphPath));
  return planner.finish(options);
}

Status applyPartitionPlan(PartitionPlan& plan) {
  if (plan.applied) return Status(StatusCode::FAIL, "the partition plan was already applied");
  for (GraphPlan& graphPlan : plan.graphs) {
    ir::Graph& graph = *graphPlan.graph;
    std::vector<ir::Node> nodes;
    nodes.reserve(graphPlan.order.size());
    for (const PlannedUnit& unit : graphPlan.order) {
      if (!unit.fused) {
        nodes.push_back(std::move(graph.nodes[unit.index]));
        continue;
      }
      const PlannedPartition& partition = plan.partitions[unit.index];
      ir::Node fused;
      fused.name = partition.spec.name;
      fused.opType = kFusedPartitionOpType;
      fused.domain = kFusedPartitionDomain;
      fused.inputs = partition.spec.inputs;
      fused.outputs = partition.spec.outputs;
      ir::Attribute index;
      index.name = kFusedPartitionAttribute;
      index.type = ir::AttributeType::INT;
      index.i = static_cast<int64_t>(unit.index);
      fused.attributes[index.name] = std::move(index);
      nodes.push_back(std::move(fused));
    }
    graph.nodes = std::move(nodes);
  }
  plan.applied = true;
  return Status::ok();
}

}  // namespace kiln
