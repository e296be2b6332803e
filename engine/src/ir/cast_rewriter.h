// Rewriting a graph's node list so that values may exist under two element types: their original one and a
// rewritten one. A value's twin in the type it lacks is made on demand by a Cast emitted right before the
// first node that needs it (its producer came earlier: topological order). Used by the CPU float16 compute
// and Vulkan float16 storage passes.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "ir/graph.h"

namespace kiln::ir {

// How the twins and Casts a CastRewriter adds are named.
struct CastNaming {
  std::string castPrefix;       // prefix of each Cast node's name; its output name follows
  std::string rewrittenSuffix;  // appended to a value's name for its twin in the rewritten type
  std::string originalSuffix;   // appended to a value's name for its twin in its original type
};

// Builds a new node list for `graph`; every type other than `rewritten` counts as a value's original type.
class CastRewriter {
 public:
  CastRewriter(Graph& graph, DataType rewritten, CastNaming naming);

  // Records that `value` is available in `type` (rewritten or original) under `name`.
  void setName(const std::string& value, DataType type, const std::string& name);

  // The name of `value` in `type`, emitting a Cast from its other type when it has none yet; wanting the
  // original type while no rewritten twin exists returns `value` itself.
  std::string resolve(const std::string& value, DataType type);

  // Declares `name` in the graph as a copy of `like`'s value info with element type `type`.
  void addValue(const std::string& name, const std::string& like, DataType type);

  // Appends a Cast of `from` to element type `type` producing `to`.
  void emitCast(const std::string& from, const std::string& to, DataType type);

  // Appends `node` to the new node list.
  void append(Node node) { nodes_.push_back(std::move(node)); }

  // The new node list, moved out.
  std::vector<Node> takeNodes() { return std::move(nodes_); }

  // How many Casts emitCast (and resolve through it) appended.
  int64_t casts() const { return casts_; }

 private:
  // The map of names in `type`: value -> its name in the rewritten type, or in its original type.
  std::map<std::string, std::string>& names(DataType type) {
    return type == rewritten_ ? rewrittenNames_ : originalNames_;
  }

  Graph& graph_;
  DataType rewritten_;
  CastNaming naming_;
  std::vector<Node> nodes_;
  int64_t casts_ = 0;
  std::map<std::string, std::string> rewrittenNames_, originalNames_;
};

}  // namespace kiln::ir
