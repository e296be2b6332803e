// The values that cross the border of a set of nodes of one graph.
#pragma once

#include <string>
#include <vector>

#include "ir/graph.h"

namespace kiln {

struct Borders {
  // Read by the nodes (explicitly or by their bodies) but not produced by them: values of the graph, its
  // initializers and names of enclosing scopes. In first-read order.
  std::vector<std::string> inputs;
  // Produced by the nodes and read by another node of the graph (or its bodies), or graph outputs. In node order.
  std::vector<std::string> outputs;
};

// Borders of `nodes` (indices into graph.nodes).
Borders computeBorders(const ir::Graph& graph, const std::vector<size_t>& nodes);

}  // namespace kiln
