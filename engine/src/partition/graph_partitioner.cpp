#include "partition/graph_partitioner.h"

#include <set>
#include <unordered_map>
#include <unordered_set>

namespace kiln {
namespace {

// Border values of a partition: read but not produced inside (inputs), produced inside and read outside or
// declared as graph outputs (outputs).
void computeBorders(const ir::Graph& graph, PartitionSpec& spec, const std::unordered_map<std::string, size_t>& lastUse,
                    const std::set<std::string>& graphOutputs) {
  std::unordered_set<std::string> produced;
  std::set<std::string> seenInputs;
  size_t lastNode = 0;
  for (size_t index : spec.nodeIndices) {
    const ir::Node& node = graph.nodes[index];
    std::vector<std::string> reads = node.inputs;
    for (auto& name : graph.implicitInputs(node)) reads.push_back(std::move(name));
    for (const auto& name : reads) {
      if (name.empty() || produced.count(name) || !seenInputs.insert(name).second) continue;
      spec.inputs.push_back(name);
    }
    for (const auto& name : node.outputs) {
      if (!name.empty()) produced.insert(name);
    }
    lastNode = index;
  }
  for (size_t index : spec.nodeIndices) {
    for (const auto& name : graph.nodes[index].outputs) {
      if (name.empty()) continue;
      auto use = lastUse.find(name);
      if (graphOutputs.count(name) || (use != lastUse.end() && use->second > lastNode)) spec.outputs.push_back(name);
    }
  }
}

}  // namespace

Result<PartitionPlan> partitionGraph(const ir::Graph& graph, const ir::Model& model,
                                     const std::vector<ExecutionProvider*>& providers) {
  PartitionPlan plan;
  const size_t n = graph.nodes.size();
  std::vector<std::vector<NodeSupport>> answers;
  for (ExecutionProvider* ep : providers) answers.push_back(ep->getCapability(graph, model));

  std::vector<size_t> owner(n, providers.size());
  std::string unsupported;
  for (size_t i = 0; i < n; ++i) {
    NodeAssignment assignment{graph.nodes[i].label(), graph.nodes[i].opType, "", {}};
    for (size_t p = 0; p < providers.size(); ++p) {
      if (answers[p][i].supported) {
        owner[i] = p;
        assignment.executionProvider = providers[p]->name();
        break;
      }
      assignment.rejections.push_back(providers[p]->name() + ": " + answers[p][i].reason);
    }
    if (owner[i] == providers.size()) {
      unsupported += "\n  " + assignment.node + ": " +
                     (assignment.rejections.empty() ? std::string("no execution provider") : assignment.rejections.back());
    }
    plan.assignments.push_back(std::move(assignment));
  }
  if (!unsupported.empty()) {
    return Status(StatusCode::NOT_IMPLEMENTED, "no execution provider can run these nodes:" + unsupported);
  }

  std::unordered_map<std::string, size_t> lastUse;
  for (size_t i = 0; i < n; ++i) {
    for (const auto& in : graph.nodes[i].inputs) lastUse[in] = i;
    for (const auto& in : graph.implicitInputs(graph.nodes[i])) lastUse[in] = i;
  }
  std::set<std::string> graphOutputs;
  for (const auto& out : graph.outputs) graphOutputs.insert(out.name);

  for (size_t i = 0; i < n; ++i) {
    if (plan.partitions.empty() || plan.partitionProvider.back() != owner[i]) {
      PartitionSpec spec;
      spec.name = providers[owner[i]]->name() + "_" + std::to_string(plan.partitions.size());
      plan.partitions.push_back(std::move(spec));
      plan.partitionProvider.push_back(owner[i]);
    }
    plan.partitions.back().nodeIndices.push_back(i);
  }
  for (auto& spec : plan.partitions) computeBorders(graph, spec, lastUse, graphOutputs);
  return plan;
}

}  // namespace kiln
