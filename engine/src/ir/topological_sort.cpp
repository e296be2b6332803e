#include <deque>
#include <unordered_map>
#include <unordered_set>

#include "ir/graph.h"

namespace kiln::ir {

Status sortTopologically(Graph& graph, const std::vector<std::string>& outerScopeNames) {
  std::unordered_set<std::string> available(outerScopeNames.begin(), outerScopeNames.end());
  for (const auto& in : graph.inputs) available.insert(in.name);
  for (const auto& [name, _] : graph.initializers) available.insert(name);

  std::unordered_set<std::string> ownInputs;  // this graph's inputs and initializers (outer names may be shadowed)
  for (const auto& in : graph.inputs) ownInputs.insert(in.name);
  for (const auto& [name, _] : graph.initializers) ownInputs.insert(name);
  std::unordered_map<std::string, size_t> producer;
  for (size_t i = 0; i < graph.nodes.size(); ++i) {
    for (const auto& out : graph.nodes[i].outputs) {
      if (out.empty()) continue;
      if (ownInputs.count(out)) {
        return Status(StatusCode::INVALID_GRAPH, "node " + graph.nodes[i].label() + " writes '" + out +
                                                     "', which is already a graph input or initializer");
      }
      auto [it, inserted] = producer.emplace(out, i);
      if (!inserted) {
        return Status(StatusCode::INVALID_GRAPH, "node " + graph.nodes[i].label() + " writes '" + out +
                                                     "', which node " + graph.nodes[it->second].label() +
                                                     " already produces (a value has one producer)");
      }
    }
  }
  // Dependencies: explicit inputs plus names read by subgraphs (implicit inputs), produced by nodes of this graph.
  const size_t n = graph.nodes.size();
  std::vector<std::vector<size_t>> consumers(n);
  std::vector<size_t> pending(n, 0);
  for (size_t i = 0; i < n; ++i) {
    std::vector<std::string> needs = graph.nodes[i].inputs;
    for (auto& name : graph.implicitInputs(graph.nodes[i])) needs.push_back(std::move(name));
    std::unordered_set<size_t> deps;
    for (const auto& name : needs) {
      if (name.empty() || available.count(name)) continue;
      auto it = producer.find(name);
      if (it == producer.end()) {
        return Status(StatusCode::INVALID_GRAPH, "node " + graph.nodes[i].label() + " reads '" + name +
                                                     "', which no node, input or initializer provides");
      }
      if (it->second == i) {
        return Status(StatusCode::INVALID_GRAPH, "the graph has a cycle: node " + graph.nodes[i].label() +
                                                     " reads its own output '" + name + "'");
      }
      if (deps.insert(it->second).second) consumers[it->second].push_back(i);
    }
    pending[i] = deps.size();
  }
  // Kahn's algorithm, taking ready nodes in original order so sorted graphs keep their order.
  std::vector<size_t> order;
  order.reserve(n);
  std::vector<bool> done(n, false);
  std::deque<size_t> ready;
  for (size_t i = 0; i < n; ++i) {
    if (pending[i] == 0) ready.push_back(i);
  }
  while (!ready.empty()) {
    const size_t i = ready.front();
    ready.pop_front();
    order.push_back(i);
    for (size_t c : consumers[i]) {
      if (--pending[c] == 0) ready.push_back(c);
    }
  }
  if (order.size() != n) {
    for (size_t i = 0; i < n; ++i) {
      if (pending[i] != 0) {
        return Status(StatusCode::INVALID_GRAPH, "the graph has a cycle through node " + graph.nodes[i].label());
      }
    }
  }
  std::vector<Node> sorted;
  sorted.reserve(n);
  for (size_t i : order) sorted.push_back(std::move(graph.nodes[i]));
  graph.nodes = std::move(sorted);
  return Status::ok();
}

}  // namespace kiln::ir
