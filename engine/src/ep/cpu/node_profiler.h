// Collects per-node kernel times while a session's run is profiled (RunOptions::setProfiling). One profiler per
// session, shared by the executor of the main graph and those of its bodies; runs are serialized by the session.
#pragma once

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "ir/graph.h"
#include "util/stopwatch.h"

namespace kiln::cpu {

class NodeProfiler {
 public:
  struct Entry {
    const ir::Node* node = nullptr;
    std::string graphPath;   // "main", "main/If_3.then_branch"
    double totalMs = 0;
    double startMs = 0;      // when its first call started, ms after start()
    int64_t calls = 0;
    const ir::Node* fusedInto = nullptr;  // ran inside this node's kernel
  };

  // Starts recording a run (forgets the previous one).
  void start();
  // True between start() and finish(): executors time their nodes only then.
  bool active() const { return active_; }
  // Adds one execution of `node` (in the graph at `graphPath`) that took `ms`.
  void record(const std::string& graphPath, const ir::Node& node, double ms);
  // Notes that `node` ran inside `anchor`'s kernel (no time of its own).
  void recordFused(const std::string& graphPath, const ir::Node& node, const ir::Node& anchor);
  // Stops recording; the entries in first-execution order.
  std::vector<Entry> finish();

 private:
  Entry& entryFor(const std::string& graphPath, const ir::Node& node);

  bool active_ = false;
  Stopwatch clock_;  // since start()
  std::vector<Entry> entries_;
  std::map<std::pair<std::string, const ir::Node*>, size_t> index_;
};

}  // namespace kiln::cpu
