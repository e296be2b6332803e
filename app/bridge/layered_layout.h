// layeredLayout: a fast layered (Sugiyama-style) layout for graphs too big for Graphviz's dot to lay out in
// seconds (dot takes about 20 s for 10,000 nodes here). Longest-path ranks top to bottom, each rank ordered by the
// barycenter of its producers, straight edges, partition and group boxes around their members with room for the
// caption; one column however long the graph (a long graph is grouped, graph_groups.h, never wrapped).
// Linear in nodes and edges apart from one sort per rank; runs on GraphLayout's worker thread.
#pragma once

#include "graph_document.h"
#include "graph_layout.h"

namespace kiln::bridge {

// Lays out `graph` (in points, y downwards, as GraphLayoutResult wants). Every vertex gets its box; edges are
// straight B-splines (4 points) ending in an arrow tip; expanded clusters and groups get boxes holding their
// vertices and their whole caption (`clusterCaptions` by cluster index: GraphCluster::caption(); `groupCaptions`
// by group index: GraphGroup::caption()).
GraphLayoutResult layeredLayout(const VisibleGraph& graph, const QStringList& clusterCaptions,
                                const QStringList& groupCaptions = {});

}  // namespace kiln::bridge
