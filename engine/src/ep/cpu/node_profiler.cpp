#include "ep/cpu/node_profiler.h"

#include <algorithm>

namespace kiln::cpu {

void NodeProfiler::start() {
  entries_.clear();
  index_.clear();
  active_ = true;
  clock_.restart();
}

NodeProfiler::Entry& NodeProfiler::entryFor(const std::string& graphPath, const ir::Node& node) {
  auto [it, inserted] = index_.try_emplace({graphPath, &node}, entries_.size());
  if (inserted) entries_.push_back({&node, graphPath});
  return entries_[it->second];
}

void NodeProfiler::record(const std::string& graphPath, const ir::Node& node, double ms) {
  Entry& entry = entryFor(graphPath, node);
  if (entry.calls == 0) entry.startMs = std::max(0.0, clock_.elapsedMs() - ms);
  entry.totalMs += ms;
  ++entry.calls;
}

void NodeProfiler::recordFused(const std::string& graphPath, const ir::Node& node, const ir::Node& anchor) {
  Entry& entry = entryFor(graphPath, node);
  entry.fusedInto = &anchor;
  ++entry.calls;
}

std::vector<NodeProfiler::Entry> NodeProfiler::finish() {
  active_ = false;
  index_.clear();
  return std::move(entries_);
}

}  // namespace kiln::cpu
