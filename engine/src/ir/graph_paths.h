// Subgraph paths for reports and messages: "main", "main/If_3.then_branch", "main/loop.body/If_0.else_branch".
// A node contributes its name, or "<OpType>_<index>" when it has none; then the attribute that holds the body
// ("[i]" added for GRAPHS attributes).
#pragma once

#include <string>

#include "ir/graph.h"

namespace kiln::ir {

inline constexpr const char* kMainGraphPath = "main";

// The name `node` (at `index` in its graph) contributes to the paths of its bodies.
inline std::string nodePathName(const Node& node, size_t index) {
  return node.name.empty() ? node.opType + "_" + std::to_string(index) : node.name;
}

// True when the node owns at least one subgraph (If, Loop, Scan, ...).
inline bool hasSubgraphs(const Node& node) {
  for (const auto& [_, attr] : node.attributes) {
    if (attr.g || !attr.graphs.empty()) return true;
  }
  return false;
}

// Calls visit(Graph& body, const std::string& bodyPath) for every subgraph of `node`, in attribute-name order.
template <class Visit>
void forEachBody(const Node& node, size_t index, const std::string& parentPath, Visit&& visit) {
  const std::string prefix = parentPath + "/" + nodePathName(node, index) + ".";
  for (const auto& [key, attr] : node.attributes) {
    if (attr.g) visit(*attr.g, prefix + key);
    for (size_t i = 0; i < attr.graphs.size(); ++i) {
      if (attr.graphs[i]) visit(*attr.graphs[i], prefix + key + "[" + std::to_string(i) + "]");
    }
  }
}

// The path of `body`, one of `node`'s subgraphs (node at `index` in the graph at `parentPath`); empty when `body`
// is none of them.
inline std::string bodyPath(const Node& node, size_t index, const std::string& parentPath, const Graph& body) {
  std::string found;
  forEachBody(node, index, parentPath, [&](const Graph& candidate, const std::string& path) {
    if (&candidate == &body) found = path;
  });
  return found;
}

}  // namespace kiln::ir
