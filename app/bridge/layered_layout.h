// layeredLayout: a fast layered (Sugiyama-style) layout for graphs too big for Graphviz's dot to lay out in
// seconds (dot takes about 20 s for 10,000 nodes here). Longest-path ranks top to bottom, each rank ordered by the
// barycenter of its producers, straight edges, partition boxes around their members with room for the caption; a
// long graph is cut into bands set side by side (between partitions), so that fit-to-view shows a page.
// Linear in nodes and edges apart from one sort per rank; runs on GraphLayout's worker thread.
#pragma once

#include "graph_document.h"
#include "graph_layout.h"

namespace kiln::bridge {

// Lays out `graph` (in points, y downwards, as GraphLayoutResult wants). Every vertex gets its box; edges are
// straight B-splines (4 points) ending in an arrow tip; expanded clusters get boxes holding their vertices and
// their whole caption (`clusterCaptions`, by cluster index: GraphCluster::caption()).
GraphLayoutResult layeredLayout(const VisibleGraph& graph, const QStringList& clusterCaptions);

// Sets a layout much taller than wide (dot's drawing of a deep network) in bands side by side, cut between ranks,
// so that fit-to-view shows a page instead of a sliver: vertices and the edges inside a band move with it, edges
// between bands become straight, and a partition cut by a band break gets one box per band. Does nothing to a
// layout that is not tall.
void setInBands(GraphLayoutResult* result, const VisibleGraph& graph);

}  // namespace kiln::bridge
