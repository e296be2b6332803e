// Two steps. (1) Kahn's algorithm that stays on one provider as long as it can: ungrouped (CPU) nodes run as soon
// as they are ready, since they only unblock more nodes; then the preferred provider with ready nodes opens a group
// that takes every node of that provider becoming ready, until none is. Each group is a contiguous stretch of a
// topological order, so the contracted graph is acyclic. (2) Groups of one provider that step 1 separated are merged
// whenever no path leads from one to the other through a third unit (that path would become a cycle).
#include "partition/partition_grouping.h"

#include <algorithm>
#include <cstdint>
#include <functional>
#include <queue>
#include <set>

namespace kiln {
namespace {

using MinQueue = std::priority_queue<size_t, std::vector<size_t>, std::greater<size_t>>;

// Beyond this many groups the pairwise merge step (quadratic in groups) is skipped; step 1 alone is acyclic.
constexpr size_t kMaxGroupsToMerge = 64;

// The graph contracted to units: groups keep their index, every ungrouped node becomes a unit of its own.
struct UnitGraph {
  std::vector<std::set<size_t>> successors;

  // True when a path from `from` reaches `to` through at least one other unit.
  bool reachesIndirectly(size_t from, size_t to) const {
    std::vector<bool> seen(successors.size(), false);
    std::vector<size_t> stack;
    for (size_t s : successors[from]) {
      if (s != to && !seen[s]) {
        seen[s] = true;
        stack.push_back(s);
      }
    }
    while (!stack.empty()) {
      const size_t u = stack.back();
      stack.pop_back();
      if (u == to) return true;
      for (size_t s : successors[u]) {
        if (!seen[s]) {
          seen[s] = true;
          stack.push_back(s);
        }
      }
    }
    return false;
  }
};

UnitGraph contract(const GroupingInput& input, const std::vector<NodeGroup>& groups) {
  const size_t n = input.owner.size();
  std::vector<size_t> unitOf(n, SIZE_MAX);
  for (size_t g = 0; g < groups.size(); ++g) {
    for (size_t node : groups[g].nodes) unitOf[node] = g;
  }
  size_t next = groups.size();
  for (size_t i = 0; i < n; ++i) {
    if (unitOf[i] == SIZE_MAX) unitOf[i] = next++;
  }
  UnitGraph units;
  units.successors.resize(next);
  for (size_t i = 0; i < n; ++i) {
    for (size_t c : input.consumers[i]) {
      if (unitOf[c] != unitOf[i]) units.successors[unitOf[i]].insert(unitOf[c]);
    }
  }
  return units;
}

// Step 2: merges pairs of same-provider groups that no third unit separates, until no pair is left.
void mergeGroups(const GroupingInput& input, std::vector<NodeGroup>& groups) {
  if (groups.size() > kMaxGroupsToMerge) return;
  bool merged = true;
  while (merged) {
    merged = false;
    const UnitGraph units = contract(input, groups);
    for (size_t a = 0; a < groups.size() && !merged; ++a) {
      for (size_t b = a + 1; b < groups.size() && !merged; ++b) {
        if (groups[a].owner != groups[b].owner) continue;
        if (units.reachesIndirectly(a, b) || units.reachesIndirectly(b, a)) continue;
        groups[a].nodes.insert(groups[a].nodes.end(), groups[b].nodes.begin(), groups[b].nodes.end());
        std::sort(groups[a].nodes.begin(), groups[a].nodes.end());
        groups.erase(groups.begin() + static_cast<std::ptrdiff_t>(b));
        merged = true;
      }
    }
  }
}

}  // namespace

std::vector<NodeGroup> groupNodes(const GroupingInput& input) {
  const size_t n = input.owner.size();
  size_t providerCount = input.ungroupedOwner + 1;
  for (size_t owner : input.owner) providerCount = std::max(providerCount, owner + 1);
  std::vector<size_t> pending(n, 0);
  for (size_t i = 0; i < n; ++i) {
    for (size_t c : input.consumers[i]) ++pending[c];
  }
  std::vector<MinQueue> ready(providerCount);
  for (size_t i = 0; i < n; ++i) {
    if (pending[i] == 0) ready[input.owner[i]].push(i);
  }
  auto take = [&](MinQueue& queue) {
    const size_t node = queue.top();
    queue.pop();
    for (size_t c : input.consumers[node]) {
      if (--pending[c] == 0) ready[input.owner[c]].push(c);
    }
    return node;
  };

  std::vector<NodeGroup> groups;
  for (;;) {
    while (!ready[input.ungroupedOwner].empty()) take(ready[input.ungroupedOwner]);
    size_t provider = SIZE_MAX;
    for (size_t p = 0; p < providerCount && provider == SIZE_MAX; ++p) {
      if (p != input.ungroupedOwner && !ready[p].empty()) provider = p;
    }
    if (provider == SIZE_MAX) break;
    NodeGroup group{provider, {}};
    while (!ready[provider].empty()) group.nodes.push_back(take(ready[provider]));
    std::sort(group.nodes.begin(), group.nodes.end());
    groups.push_back(std::move(group));
  }
  mergeGroups(input, groups);
  std::sort(groups.begin(), groups.end(),
            [](const NodeGroup& a, const NodeGroup& b) { return a.nodes.front() < b.nodes.front(); });
  return groups;
}

}  // namespace kiln
