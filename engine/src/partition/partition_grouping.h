// Groups the nodes of one graph into maximal acyclic partitions, one execution provider each.
#pragma once

#include <cstddef>
#include <vector>

namespace kiln {

struct GroupingInput {
  // consumers[i]: the nodes that read an output of node i (explicitly or through a body), deduplicated.
  // Nodes are numbered in a topological order.
  std::vector<std::vector<size_t>> consumers;
  std::vector<size_t> owner;  // provider index per node
  size_t ungroupedOwner = 0;  // nodes of this provider (the CPU EP) are left as single nodes
};

struct NodeGroup {
  size_t owner = 0;
  std::vector<size_t> nodes;  // ascending
};

// The groups of every provider except `ungroupedOwner`, ordered by their first node. No group can be merged with
// another of the same provider without creating a cycle through nodes of other groups or ungrouped nodes, and
// contracting each group to one node leaves the graph acyclic.
std::vector<NodeGroup> groupNodes(const GroupingInput& input);

}  // namespace kiln
