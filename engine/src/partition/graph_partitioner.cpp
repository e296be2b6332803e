#include "partition/graph_partitioner.h"

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <functional>
#include <map>
#include <queue>
#include <set>
#include <unordered_map>
#include <unordered_set>

#include "kiln/provider_names.h"
#include "ir/graph_paths.h"
#include "partition/partition_borders.h"
#include "partition/partition_cost.h"
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

// Every value info of every graph of the model by name (ONNX names are unique model-wide): a body reads values of
// enclosing scopes whose types live in those graphs.
// `constants` gets every initializer name of every graph (uploaded once with the partition that reads it, even
// from an enclosing scope: no transfer at run time).
void indexValueInfos(const ir::Graph& graph, std::unordered_map<std::string, const ir::ValueInfo*>& index,
                     std::unordered_set<std::string>& constants) {
  for (const auto& [name, tensor] : graph.initializers) constants.insert(name);
  for (const auto& in : graph.inputs) index.emplace(in.name, &in);
  for (const auto& out : graph.outputs) index.emplace(out.name, &out);
  for (const auto& [name, info] : graph.valueInfo) index.emplace(name, &info);
  for (const auto& node : graph.nodes) {
    for (const auto& [key, attribute] : node.attributes) {
      if (attribute.g) indexValueInfos(*attribute.g, index, constants);
      for (const auto& body : attribute.graphs) indexValueInfos(*body, index, constants);
    }
  }
}

// One graph's nodes as the grouping and the cost model see them.
struct GraphNodes {
  const ir::Graph& graph;
  const std::vector<std::vector<size_t>>& consumers;
  std::vector<size_t>& owner;      // provider per node (changed when a group is kept on the CPU EP)
  const std::vector<bool>& onHost;  // evaluated on the host inside a partition
  bool body = false;
  std::unordered_map<std::string, size_t> producer = {};  // value -> the node of the graph that produces it
};

class Planner {
 public:
  Planner(ir::Model& model, const std::vector<ExecutionProvider*>& providers, const PartitionOptions& options)
      : model_(model), providers_(providers), options_(options) {
    for (size_t p = 0; p < providers.size(); ++p) {
      plan_.providerNames.push_back(providers[p]->name());
      if (providers[p]->name() == kCpuExecutionProvider && cpu_ == SIZE_MAX) cpu_ = p;
    }
    plan_.cpuProviderName = kCpuExecutionProvider;
    if (model.graph) indexValueInfos(*model.graph, valueInfos_, initializers_);
  }

  Status planGraph(ir::Graph& graph, const std::string& path);
  Result<PartitionPlan> finish();

 private:
  // Groups the nodes, weighing each group of an EP that pays for transfers (partition_cost.h); groups that lose
  // move to the CPU EP (their nodes' `costRejections` say why) and the rest is grouped again, until every group
  // stays. `reasons` gets each final group's reason.
  std::vector<NodeGroup> groupByCost(GraphNodes& nodes, size_t ungrouped,
                                     const std::vector<std::vector<NodeSupport>>& answers,
                                     std::vector<std::string>& costRejections, std::vector<std::string>& reasons) const;
  // True when every value `group` reads (initializers aside) comes from a CPU-EP node of the graph and every value
  // it writes is read only by CPU-EP nodes (none is a graph output).
  bool isIsland(const GraphNodes& nodes, const NodeGroup& group, const Borders& borders) const;

  ir::Model& model_;
  const std::vector<ExecutionProvider*>& providers_;
  const PartitionOptions& options_;
  size_t cpu_ = SIZE_MAX;
  std::unordered_map<std::string, const ir::ValueInfo*> valueInfos_;
  std::unordered_set<std::string> initializers_;  // of every graph
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
  std::vector<bool> onHost(n, false);
  for (size_t i = 0; i < n; ++i) onHost[i] = owner[i] < answers.size() && answers[owner[i]][i].onHost;
  GraphNodes graphNodes{graph, consumers, owner, onHost, path != ir::kMainGraphPath};
  for (size_t i = 0; i < n; ++i) {
    for (const auto& out : graph.nodes[i].outputs) {
      if (!out.empty()) graphNodes.producer[out] = i;
    }
  }
  std::vector<std::string> costRejections(n), reasons;
  const std::vector<NodeGroup> groups = groupByCost(graphNodes, ungrouped, answers, costRejections, reasons);
  for (size_t i = 0; i < n; ++i) {
    if (costRejections[i].empty()) continue;
    graphPlan.assignments[i].executionProvider = providers_[cpu_]->name();
    graphPlan.assignments[i].rejections.push_back(costRejections[i]);
  }
  graphPlan.order = orderUnits(consumers, groups);
  // Partitions are created (and named) in execution order, so names count up along the rewritten graph.
  for (auto& unit : graphPlan.order) {
    if (!unit.fused) continue;
    const NodeGroup& group = groups[unit.index];
    const std::string& reason = reasons[unit.index];
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
    partition.reason = reason;
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

std::vector<NodeGroup> Planner::groupByCost(GraphNodes& nodes, size_t ungrouped,
                                            const std::vector<std::vector<NodeSupport>>& answers,
                                            std::vector<std::string>& costRejections,
                                            std::vector<std::string>& reasons) const {
  const ir::Graph& graph = nodes.graph;
  const partition_cost::ValueLookup lookup = [&](const std::string& name) -> const ir::ValueInfo* {
    if (const ir::ValueInfo* info = graph.findValueInfo(name)) return info;
    auto it = valueInfos_.find(name);
    return it == valueInfos_.end() ? nullptr : it->second;
  };
  // Every pass moves at least one node to the CPU EP, or ends.
  for (;;) {
    std::vector<NodeGroup> groups = groupNodes({nodes.consumers, nodes.owner, ungrouped});
    reasons.assign(groups.size(), "");
    bool moved = false;
    for (size_t g = 0; g < groups.size(); ++g) {
      const NodeGroup& group = groups[g];
      const ExecutionProvider& ep = *providers_[group.owner];
      if (!ep.paysForTransfers()) continue;
      const Borders borders = computeBorders(graph, group.nodes);
      std::vector<std::string> values;  // what crosses the border at run time
      std::copy_if(borders.inputs.begin(), borders.inputs.end(), std::back_inserter(values),
                   [&](const std::string& name) { return !initializers_.count(name); });
      values.insert(values.end(), borders.outputs.begin(), borders.outputs.end());
      const partition_cost::GroupCost cost =
          partition_cost::estimateGroupCost(graph, lookup, group.nodes, nodes.onHost, values);
      partition_cost::GroupContext context;
      context.island = isIsland(nodes, group, borders);
      context.cpuAtHand = nodes.body || std::count(nodes.owner.begin(), nodes.owner.end(), cpu_) > 0;
      if (cpu_ == SIZE_MAX) {
        context.keptBecause = "no CPU EP to keep it on";
      } else if (options_.disableCpuFallback) {
        context.keptBecause = "session.disable_cpu_ep_fallback=1";
      } else if (std::any_of(group.nodes.begin(), group.nodes.end(),
                             [&](size_t i) { return !answers[cpu_][i].supported; })) {
        context.keptBecause = "the CPU EP cannot run all of its nodes";
      }
      const partition_cost::OffloadDecision decision = partition_cost::decideOffload(cost, context);
      if (decision.offload) {
        reasons[g] = decision.reason;
        continue;
      }
      for (size_t i : group.nodes) {
        nodes.owner[i] = cpu_;
        costRejections[i] = ep.name() + ": " + decision.reason;
      }
      moved = true;
    }
    if (!moved) return groups;
  }
}

bool Planner::isIsland(const GraphNodes& nodes, const NodeGroup& group, const Borders& borders) const {
  const ir::Graph& graph = nodes.graph;
  const auto& producer = nodes.producer;
  for (const auto& in : borders.inputs) {
    if (graph.isInitializer(in)) continue;
    auto it = producer.find(in);
    if (it == producer.end() || nodes.owner[it->second] != cpu_) return false;  // a graph input or outer scope
  }
  for (const auto& out : borders.outputs) {
    for (const auto& graphOutput : graph.outputs) {
      if (graphOutput.name == out) return false;
    }
  }
  const std::set<size_t> members(group.nodes.begin(), group.nodes.end());
  for (size_t i : group.nodes) {
    for (size_t c : nodes.consumers[i]) {
      if (!members.count(c) && nodes.owner[c] != cpu_) return false;
    }
  }
  return true;
}

Result<PartitionPlan> Planner::finish() {
  const PartitionOptions& options = options_;
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
  Planner planner(model, providers, options);
  KILN_RETURN_IF_ERROR(planner.planGraph(*model.graph, ir::kMainGraphPath));
  return planner.finish();
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
