// Pass: dead-node removal. A node none of whose outputs is read by a later node (explicitly, or implicitly by a
// subgraph body) or listed as a graph output is removed; bodies are cleaned first, since that can only shrink
// what they read from the enclosing graph. Initializers nothing reads are dropped too (graph inputs stay).
#include <algorithm>
#include <unordered_set>

#include "ir/graph_paths.h"
#include "optimizer/passes.h"

namespace kiln::optimizer {

int64_t removeDeadNodes(ir::Graph& graph) {
  int64_t removed = 0;
  for (size_t i = 0; i < graph.nodes.size(); ++i) {
    ir::forEachBody(graph.nodes[i], i, "",
                    [&](ir::Graph& body, const std::string&) { removed += removeDeadNodes(body); });
  }
  std::unordered_set<std::string> live;
  for (const auto& out : graph.outputs) live.insert(out.name);
  std::vector<bool> keep(graph.nodes.size(), false);
  // Reverse topological order: a node is live when a live node (or the graph) reads one of its outputs.
  for (size_t i = graph.nodes.size(); i-- > 0;) {
    const ir::Node& node = graph.nodes[i];
    keep[i] = std::any_of(node.outputs.begin(), node.outputs.end(),
                          [&](const std::string& out) { return !out.empty() && live.count(out); });
    if (!keep[i]) continue;
    for (const auto& in : node.inputs) live.insert(in);
    for (auto& in : graph.implicitInputs(node)) live.insert(std::move(in));
  }
  std::vector<ir::Node> kept;
  kept.reserve(graph.nodes.size());
  for (size_t i = 0; i < graph.nodes.size(); ++i) {
    if (keep[i]) kept.push_back(std::move(graph.nodes[i]));
    else ++removed;
  }
  graph.nodes = std::move(kept);

  std::unordered_set<std::string> inputs;
  for (const auto& in : graph.inputs) inputs.insert(in.name);
  std::erase_if(graph.initializers, [&](const auto& entry) {
    return !live.count(entry.first) && !inputs.count(entry.first);
  });
  return removed;
}

}  // namespace kiln::optimizer
