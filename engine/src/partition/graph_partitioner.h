// GraphPartitioner: asks each EP, in preference order, which nodes of each graph (the top-level graph and every
// If/Loop/Scan body) it takes; groups each non-CPU EP's nodes into maximal acyclic partitions; and rewrites every
// graph so that each such partition becomes one fused KilnPartition node, which the session runs through the
// compiled partition. CPU-EP nodes stay as they are: the CPU GraphExecutor runs them, including the control-flow
// nodes that own the bodies (those always stay on the CPU EP).
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "ep/execution_provider.h"

namespace kiln {

// The fused node that stands for a compiled partition in a rewritten graph.
inline constexpr const char* kFusedPartitionOpType = "KilnPartition";
inline constexpr const char* kFusedPartitionDomain = "kiln";
inline constexpr const char* kFusedPartitionAttribute = "partition";  // INT: index into PartitionPlan::partitions

// Why a node ended up where it is (the partition report's per-node record).
struct NodeAssignment {
  std::string node;  // node label
  std::string opType;
  std::string executionProvider;        // empty when no EP takes it
  std::vector<std::string> rejections;  // "<EP>: <reason>" for every EP that declined it before
};

// One non-CPU partition of the model.
struct PlannedPartition {
  PartitionSpec spec;           // name ("vulkan_0"), node indices into graph->nodes as planned, border values
  size_t provider = 0;          // index into the providers list
  ir::Graph* graph = nullptr;   // the graph (top-level or a body) its nodes belong to
  std::string graphPath;        // "main", "main/If_3.then_branch"
  std::vector<std::string> nodeLabels;
  std::string reason;  // why it was offloaded (partition_cost.h): "offloaded: ..."; empty for EPs that pay no transfers
};

// One unit of a graph's execution order after the rewrite: a node kept as is, or a fused partition.
struct PlannedUnit {
  bool fused = false;
  size_t index = 0;  // node index (as planned) or index into PartitionPlan::partitions
};

struct GraphPlan {
  std::string path;
  ir::Graph* graph = nullptr;
  std::vector<NodeAssignment> assignments;  // per node, in planned order
  std::vector<PlannedUnit> order;           // the rewritten graph's node order
};

struct PartitionPlan {
  std::vector<std::string> providerNames;    // in preference order
  std::string cpuProviderName;               // name of the EP whose nodes are not fused
  std::vector<PlannedPartition> partitions;  // every non-CPU partition, session-wide: the fused node's index
  std::vector<GraphPlan> graphs;             // "main" first, then bodies depth-first
  bool applied = false;
};

struct PartitionOptions {
  // session.disable_cpu_ep_fallback=1 (with a non-CPU EP requested): every node, at any depth, that no non-CPU
  // EP takes is an error. The cost model then keeps every partition (it never moves nodes to the CPU EP).
  bool disableCpuFallback = false;
};

// "VulkanExecutionProvider" → "vulkan", "CPUExecutionProvider" → "cpu": the prefix of partition names.
std::string providerShortName(const std::string& providerName);

// Plans the partitions of every graph of `model` (graphs are not changed yet). With the CPU EP (named
// "CPUExecutionProvider") in `providers`, its nodes are never fused, and groups of an EP that pays for transfers
// that lose by the cost model (partition/partition_cost.h) run on it instead, each node saying why. NOT_IMPLEMENTED names the nodes no EP takes;
// FAIL (options.disableCpuFallback) names every node that would not run on a non-CPU EP, with each EP's reason;
// EP_FAIL when an EP answers for the wrong number of nodes.
Result<PartitionPlan> planPartitions(ir::Model& model, const std::vector<ExecutionProvider*>& providers,
                                     const PartitionOptions& options = {});

// Rewrites the planned graphs in place: each partition's nodes become one KilnPartition node whose inputs and
// outputs are the partition's border values, in an order that keeps every graph topologically sorted. Compile the
// partitions before: their specs index the graphs as planned.
Status applyPartitionPlan(PartitionPlan& plan);

}  // namespace kiln
