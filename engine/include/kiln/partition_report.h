// The partition report: how a model's nodes were assigned to execution providers, graph by graph (the top-level
// graph and every If/Loop/Scan body), why each EP declined a node, and which Constant nodes the optimizer folded.
// One engine structure; `kiln partition` and the studio only render it.
#pragma once

#include "kiln/export.h"

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "kiln/session_options.h"
#include "kiln/status.h"

namespace kiln {

// A group of nodes of one graph that run together on one execution provider.
struct KILN_EXPORT ReportedPartition {
  std::string name;               // "vulkan_0" (numbered across the model), or "cpu_0" for a run of CPU-EP nodes
  std::string executionProvider;  // "VulkanExecutionProvider", "CPUExecutionProvider"
  bool compiled = false;          // true: compiled and run as one unit by a non-CPU EP; false: CPU-EP nodes
  std::vector<std::string> nodes;    // node labels in execution order
  std::vector<std::string> inputs;   // values read from outside the partition (the graph's initializers excluded)
  std::vector<std::string> outputs;  // values produced inside and read after it (or graph outputs)
  // For a partition loaded from a stored context binary: that binary as the model names it (an EPContext node's
  // ep_cache_context path as written, relative to the ctx model) or "embedded". Empty for partitions compiled by
  // the session and for runs of CPU-EP nodes.
  std::string binary;
  // For a compiled partition planned by the session on an EP that pays for transfers (the Vulkan EP): why the
  // partitioner's cost model offloaded it, with its estimated work, transfers and submit ("offloaded: 1.234 ms of
  // work outweighs 3.0 KB of transfers and a submit (0.101 ms)"). Groups it kept on the CPU EP say why in their
  // nodes' rejections ("VulkanExecutionProvider: kept on CPU: ..."). Empty otherwise.
  std::string reason;
};

// Where one node went, and why the EPs preferred over that one declined it.
struct KILN_EXPORT NodePlacement {
  std::string node;                     // label: "'conv1' (Conv)" or "(Conv)"
  std::string opType;
  std::string executionProvider;        // empty when no EP takes the node
  std::vector<std::string> rejections;  // "<EP name>: <reason>", in preference order
};

// A Constant node the optimizer turned into an initializer (not counted as a node of any partition).
struct KILN_EXPORT FoldedConstant {
  std::string node;    // label of the Constant node
  std::string output;  // the initializer it became
};

struct KILN_EXPORT GraphPartitionReport {
  std::string path;  // "main", "main/If_3.then_branch", "main/loop.body/If_0.else_branch"
  std::vector<ReportedPartition> partitions;  // in execution order
  std::vector<NodePlacement> nodes;           // every node of the optimized graph, in topological order
  std::vector<FoldedConstant> foldedConstants;
};

struct KILN_EXPORT PartitionReport {
  std::vector<std::string> executionProviders;  // the EPs the session could use, in preference order
  std::string optimizationLevel;                // kiln.graph_optimization_level: none, basic or all
  int64_t nodesFolded = 0;   // nodes evaluated once at load by constant folding (Constant nodes not included)
  int64_t nodesRemoved = 0;  // nodes removed because nothing read their outputs
  std::vector<GraphPartitionReport> graphs;  // "main" first, then subgraph bodies depth-first
};

// Number of nodes placed on each execution provider, over every graph (folded constants excluded).
KILN_EXPORT std::map<std::string, int64_t> nodesPerExecutionProvider(const PartitionReport& report);
// Number of partitions over every graph: compiled partitions plus runs of CPU-EP nodes.
KILN_EXPORT int64_t partitionCount(const PartitionReport& report);
// Number of compiled (non-CPU) partitions over every graph.
KILN_EXPORT int64_t compiledPartitionCount(const PartitionReport& report);
// Number of Constant nodes folded into initializers over every graph.
KILN_EXPORT int64_t foldedConstantCount(const PartitionReport& report);

// Loads, optimizes and partitions the model at `modelPath` as Session::create would, without compiling or running
// anything, and returns the report. For a compiled (EPContext) model nothing is optimized or placed: each EPContext
// node, in every graph, is one compiled partition naming its binary, the other nodes run on the CPU EP (the report
// Session::create gives; the binaries are read and checked against the model, no device is needed). Fails as Session::create would (NOT_IMPLEMENTED for a node no EP takes, FAIL
// when session.disable_cpu_ep_fallback=1 and nodes would fall back to the CPU EP, ...).
KILN_EXPORT Result<PartitionReport> analyzePartitions(const std::string& modelPath, const SessionOptions& options = {});

}  // namespace kiln
