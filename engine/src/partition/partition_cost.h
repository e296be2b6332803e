// The partitioner's cost model, in one place: whether a group of nodes that a device EP claims (one that
// pays for transfers, ExecutionProvider::paysForTransfers) is worth a partition, and the reason the report gives.
//
//   work     = the group's arithmetic: estimated FLOPs / kWorkFlopsPerMs. Nodes evaluated on the host inside
//              the partition (shape arithmetic) and nodes that only move data (Identity, Reshape, Squeeze,
//              Unsqueeze, Flatten) count 0.
//   overhead = kSubmitMs + bytes of every value crossing the group's border / kTransferBytesPerMs
//              (initializers excluded: they are uploaded once).
//
// Decisions, in this order:
//   1. A group with no work at all is not offloaded where the CPU EP is at hand (a body graph, whose
//      control-flow node runs on the CPU EP, or a graph with CPU-EP nodes): its nodes run on the CPU EP.
//      This keeps scalar comparisons, shape subgraphs and lone Identity/Squeeze bodies off the device.
//   2. An island between CPU nodes (every value it reads, initializers aside, is produced by a CPU-EP node
//      of the same graph; every value it writes is read only by CPU-EP nodes, none is a graph output) is
//      offloaded only when work > overhead.
//   3. Anything else is offloaded: it borders the graph's inputs or outputs (the caller's tensors), values
//      of an enclosing graph or another partition, where the device is what the session was asked for.
// Shapes are the inferred value infos; a dimension that is not known counts kUnknownDimExtent, a value
// without any shape one element. Everything is a pure function of the graph: the same model always
// partitions the same way.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "ir/graph.h"

namespace kiln::partition_cost {

// Fixed cost of running one partition: recording, vkQueueSubmit and the fence wait (lavapipe and discrete
// GPUs alike spend tens to hundreds of microseconds).
inline constexpr double kSubmitMs = 0.1;
// Bytes per millisecond of copies between host and device memory (4 GB/s: PCIe with staging, or memcpy into
// host-visible memory on lavapipe and integrated GPUs).
inline constexpr double kTransferBytesPerMs = 4.0e6;
// Floating-point operations per millisecond that offloading takes off the CPU (10 GFLOP/s: one CPU core with
// SIMD).
inline constexpr double kWorkFlopsPerMs = 1.0e7;
// A dimension that shape inference left symbolic or unknown (batch, sequence length) counts as this many
// elements.
inline constexpr int64_t kUnknownDimExtent = 1;

// The declared or inferred type of a value (of the graph or of an enclosing scope), or nullptr.
using ValueLookup = std::function<const ir::ValueInfo*(const std::string&)>;

// What a group of nodes would cost as a partition.
struct GroupCost {
  size_t nodes = 0;
  size_t hostNodes = 0;          // evaluated on the host inside the partition (shape arithmetic)
  size_t dataMovementNodes = 0;  // Identity, Reshape, Squeeze, Unsqueeze, Flatten
  double workFlops = 0;
  int64_t transferBytes = 0;

  double workMs() const { return workFlops / kWorkFlopsPerMs; }
  double transferMs() const { return static_cast<double>(transferBytes) / kTransferBytesPerMs; }
  double overheadMs() const { return kSubmitMs + transferMs(); }
};

// Where the group sits and what may be done with it.
struct GroupContext {
  bool island = false;      // between CPU nodes, as in decision 2
  bool cpuAtHand = false;   // the graph is a body or has CPU-EP nodes (decision 1)
  std::string keptBecause;  // non-empty: the group stays on its EP whatever it costs (fallback disabled, ...)
};

struct OffloadDecision {
  bool offload = true;
  std::string reason;  // "kept on CPU: ..." or "offloaded: ..."
};

// The cost of running `nodes` (indices into graph.nodes) as one partition whose border values are
// `borderValues`; onHost[i]: node i of the graph is evaluated on the host.
GroupCost estimateGroupCost(const ir::Graph& graph, const ValueLookup& lookup,
                            const std::vector<size_t>& nodes, const std::vector<bool>& onHost,
                            const std::vector<std::string>& borderValues);

// The decision for a group (see the top of this file), with its reason.
OffloadDecision decideOffload(const GroupCost& cost, const GroupContext& context);

// Estimated floating-point operations of one node (0 for data movement).
double nodeFlops(const ir::Graph& graph, const ValueLookup& lookup, const ir::Node& node);

// "24 bytes", "3.0 KB", "1.5 MB" (1 KB = 1024 bytes).
std::string formatBytes(int64_t bytes);

}  // namespace kiln::partition_cost
