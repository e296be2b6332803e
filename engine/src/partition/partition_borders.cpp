#include "partition/partition_borders.h"

#include <unordered_set>

namespace kiln {

Borders computeBorders(const ir::Graph& graph, const std::vector<size_t>& nodes) {
  std::unordered_set<size_t> members(nodes.begin(), nodes.end());
  std::unordered_set<std::string> produced, readOutside;
  for (const auto& out : graph.outputs) readOutside.insert(out.name);
  for (size_t i = 0; i < graph.nodes.size(); ++i) {
    if (members.count(i)) {
      for (const auto& out : graph.nodes[i].outputs) {
        if (!out.empty()) produced.insert(out);
      }
      continue;
    }
    readOutside.insert(graph.nodes[i].inputs.begin(), graph.nodes[i].inputs.end());
    for (auto& name : graph.implicitInputs(graph.nodes[i])) readOutside.insert(std::move(name));
  }
  Borders borders;
  std::unordered_set<std::string> seen;
  for (size_t i : nodes) {
    std::vector<std::string> reads = graph.nodes[i].inputs;
    for (auto& name : graph.implicitInputs(graph.nodes[i])) reads.push_back(std::move(name));
    for (auto& name : reads) {
      if (!name.empty() && !produced.count(name) && seen.insert(name).second) borders.inputs.push_back(name);
    }
  }
  for (size_t i : nodes) {
    for (const auto& out : graph.nodes[i].outputs) {
      if (!out.empty() && readOutside.count(out)) borders.outputs.push_back(out);
    }
  }
  return borders;
}

}  // namespace kiln
