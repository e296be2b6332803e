// findGroups: the groups a big graph is drawn as until the user opens them, so that at Fit a model of hundreds or
// thousands of nodes is a page of titled boxes joined by its real edges (skip links included) instead of a sliver.
// Models whose node names carry scopes ("/encoder/layer.3/attn/MatMul") are grouped by scope, at the first depth
// that splits them ("/encoder/layer.3": the 12 layers of an encoder become 12 groups); others (exporter names such
// as "p2o.Conv.12") are cut along their topological order where the fewest values cross, into stretches titled by
// their most telling ops and the shape they end with ("ConvInteger ×9 · Resize → [1,64,32,32]"). A group never spans two partitions, so its frame nests inside the partition's. Groups with the same
// ops are marked alike: a repeated block. Linear in nodes and edges.
#pragma once

#include <QString>
#include <QVector>

#include <functional>

namespace kiln::bridge {

struct GraphNode;
struct GraphEdge;

// A run of nodes drawn as one box until expanded.
struct GraphGroup {
  QString title;       // the scope ("encoder/layer.3"), or the ops ("Conv ×6 · Relu ×4 · Add ×2")
  QVector<int> nodes;  // document nodes, in document order
  int cluster = -1;    // the partition holding every member, or -1
  int alike = 1;       // groups with the same ops, this one included (a repeated block when more than 1)
  int alikeIndex = 1;  // which of them, counted in document order
  bool byScope = false;

  // "24 nodes", with "· 1 of 12 alike" for a repeated block.
  QString subtitle() const;
  // The caption of an expanded group: "encoder/layer.3 (24 nodes)". The layout reserves room for all of it.
  QString caption() const;
};

// Graphs with fewer drawn op nodes than this are shown whole: no groups.
inline constexpr int kMinNodesToGroup = 60;

// The groups of a graph whose nodes are `nodes` (topological order), joined by `edges`, node i in partition
// `clusterOfNode[i]` (-1 for none); `edgeText(edge)` is the tensor an edge carries ("float32[1,64,32,32]", "" when
// unknown), for the titles. Empty for small graphs.
QVector<GraphGroup> findGroups(const QVector<GraphNode>& nodes, const QVector<GraphEdge>& edges,
                               const QVector<int>& clusterOfNode, const std::function<QString(int)>& edgeText);

}  // namespace kiln::bridge
