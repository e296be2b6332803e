// Source ↔ compiled links: which source nodes an EPContext node of a compiled model replaced (and back), and the
// values that cross between host and device at the borders of its compiled partitions. Nothing is re-derived: an
// EPContext node's partition_name (kiln::inspectEpContextModel) names the partition of the source model's partition
// report (kiln::analyzePartitions) it was compiled from, and that partition's node list is the report's (the source
// GraphDocument's cluster of that name).
#pragma once

#include <QString>
#include <QVector>

#include <cstdint>

#include "graph_document.h"

namespace kiln::bridge {

// Source nodes (indices into source.nodes()) that node `compiledNode` of `compiled` replaced: the nodes of the
// source partition its partition_name names. Empty when it is no EPContext node or `source` has no such partition.
QVector<int> replacedSourceNodes(const GraphDocument& source, const GraphDocument& compiled, int compiledNode);

// The EPContext node of `compiled` that replaced source node `sourceNode`, or -1 (the node stayed on the CPU, or
// `compiled` has no EPContext node for its partition).
int replacingEpContextNode(const GraphDocument& source, int sourceNode, const GraphDocument& compiled);

// Nodes of one graph of a model: the graph's path ("main", "main/If_0.then_branch") and node indices there.
struct GraphNodes {
  QString graphPath;
  QVector<int> nodes;
};

// As replacedSourceNodes, over every graph of the source model: `sourceRoot` is its main document (holding the
// bodies), so an EPContext node in any graph finds its partition wherever the source graph is. Empty when none.
GraphNodes findReplacedSourceNodes(const GraphDocument& sourceRoot, const GraphDocument& compiled, int compiledNode);
// As replacingEpContextNode, over every graph of the compiled model (`compiledRoot`: its main document).
GraphNodes findReplacingEpContextNode(const GraphDocument& source, int sourceNode, const GraphDocument& compiledRoot);

// One value crossing between the host and a compiled (device) partition.
struct BorderTransfer {
  int from = -1, to = -1;  // document nodes: producer and consumer
  QString value;
  bool toDevice = true;    // host→device (into the compiled partition) or device→host
  int64_t bytes = -1;      // from the value's inferred type and shape; -1 when unknown

  // "H→D 1.2 MiB"; "D→H (size unknown)" when the value's type or a dimension is not known before it runs.
  QString label() const;
};

// Bytes of value `name` of `info` (element size × fixed dimensions), or -1 when its type or a dimension is unknown.
int64_t valueBytes(const ModelInfo& info, const QString& name);

// Every edge of `document` between an EPContext node run by a non-CPU EP and a host node (a CPU node, or a graph
// input or output), in edge order.
QVector<BorderTransfer> borderTransfers(const GraphDocument& document);

}  // namespace kiln::bridge
