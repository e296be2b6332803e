#include "layered_layout.h"

#include <algorithm>
#include <cmath>
#include <deque>
#include <vector>

#include <QHash>

namespace kiln::bridge {

namespace {

constexpr double kPointsPerInch = 72;
constexpr double kNodeGap = 18;       // between neighbours of a rank
constexpr double kRankGap = 64;       // between ranks: room for a partition's and a group's frame and caption
constexpr double kClusterPad = 8;     // partition frame around its members
constexpr double kCaptionRoom = 22;   // above the members, for the caption
constexpr double kCaptionCharWidth = 7.5;  // generous for the view's 9 pt bold caption
constexpr double kArrowLength = 8;
constexpr double kMargin = 14;

// Vertices in topological order (Kahn); vertices on cycles follow in index order.
std::vector<int> topologicalOrder(int n, const std::vector<std::vector<int>>& out, std::vector<int> indegree) {
  std::vector<int> order;
  order.reserve(static_cast<size_t>(n));
  std::deque<int> ready;
  for (int v = 0; v < n; ++v) {
    if (indegree[static_cast<size_t>(v)] == 0) ready.push_back(v);
  }
  std::vector<char> placed(static_cast<size_t>(n), 0);
  while (true) {
    while (!ready.empty()) {
      const int v = ready.front();
      ready.pop_front();
      placed[static_cast<size_t>(v)] = 1;
      order.push_back(v);
      for (int w : out[static_cast<size_t>(v)]) {
        if (--indegree[static_cast<size_t>(w)] == 0) ready.push_back(w);
      }
    }
    if (static_cast<int>(order.size()) == n) break;
    // A cycle (collapsed partitions can form one): break it at the first vertex not placed yet.
    for (int v = 0; v < n; ++v) {
      if (!placed[static_cast<size_t>(v)] && indegree[static_cast<size_t>(v)] > 0) {
        indegree[static_cast<size_t>(v)] = 0;
        ready.push_back(v);
        break;
      }
    }
  }
  return order;
}

// A frame around `content` (its members' boxes), with room for the whole `caption` above them.
QRectF frameAround(const QRectF& content, const QString& caption) {
  if (content.isNull()) return content;
  QRectF box = content.adjusted(-kClusterPad, -kCaptionRoom, kClusterPad, kClusterPad);
  const double captionWidth = static_cast<double>(caption.size()) * kCaptionCharWidth + 16;
  if (box.width() < captionWidth) box.setWidth(captionWidth);
  return box;
}

}  // namespace

GraphLayoutResult layeredLayout(const VisibleGraph& graph, const QStringList& clusterCaptions,
                                const QStringList& groupCaptions) {
  GraphLayoutResult result;
  const int n = static_cast<int>(graph.vertices.size());
  result.vertices = QVector<QRectF>(n);
  result.edgeSplines = QVector<QVector<QPointF>>(graph.edges.size());
  result.edgeArrowTips = QVector<QPointF>(graph.edges.size());
  if (n == 0) return result;
  auto at = [](int i) { return static_cast<size_t>(i); };

  std::vector<std::vector<int>> out(at(n)), in(at(n));
  std::vector<int> indegree(at(n), 0);
  for (const auto& e : graph.edges) {
    out[at(e.from)].push_back(e.to);
    in[at(e.to)].push_back(e.from);
    ++indegree[at(e.to)];
  }
  const std::vector<int> order = topologicalOrder(n, out, indegree);
  std::vector<int> position(at(n));
  for (int i = 0; i < n; ++i) position[at(order[at(i)])] = i;

  // Longest-path ranks over the edges that go forward in the order.
  std::vector<int> rank(at(n), 0);
  int ranks = 1;
  for (int v : order) {
    for (int u : in[at(v)]) {
      if (position[at(u)] < position[at(v)]) rank[at(v)] = std::max(rank[at(v)], rank[at(u)] + 1);
    }
    ranks = std::max(ranks, rank[at(v)] + 1);
  }
  std::vector<std::vector<int>> members(at(ranks));
  for (int v : order) members[at(rank[at(v)])].push_back(v);

  // x: each rank in barycenter order of its producers' centers, placed at the wanted centers where they do not
  // overlap (a straight chain stays straight), pushed right where they do.
  std::vector<double> width(at(n)), height(at(n)), centerX(at(n), 0);
  for (int v = 0; v < n; ++v) {
    width[at(v)] = graph.vertices[v].widthIn * kPointsPerInch;
    height[at(v)] = graph.vertices[v].heightIn * kPointsPerInch;
  }
  for (int r = 0; r < ranks; ++r) {
    std::vector<int>& row = members[at(r)];
    std::vector<std::pair<double, int>> keyed;
    keyed.reserve(row.size());
    for (size_t i = 0; i < row.size(); ++i) {
      const int v = row[i];
      double sum = 0;
      int count = 0;
      for (int u : in[at(v)]) {
        if (rank[at(u)] < r) {
          sum += centerX[at(u)];
          ++count;
        }
      }
      keyed.push_back({count ? sum / count : 0.0, v});
    }
    std::stable_sort(keyed.begin(), keyed.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
    double nextFree = -1e300;
    for (size_t i = 0; i < keyed.size(); ++i) {
      const int v = keyed[i].second;
      row[i] = v;
      const double left = std::max(keyed[i].first - width[at(v)] / 2, nextFree);
      centerX[at(v)] = left + width[at(v)] / 2;
      nextFree = left + width[at(v)] + kNodeGap;
    }
  }

  // y: ranks top to bottom, each as tall as its tallest vertex; vertices centered in their rank. One column however
  // long the graph: a long graph is grouped (graph_groups.h), never wrapped.
  double top = 0, minLeft = 1e300;
  for (int v = 0; v < n; ++v) minLeft = std::min(minLeft, centerX[at(v)] - width[at(v)] / 2);
  for (int r = 0; r < ranks; ++r) {
    double tallest = 0;
    for (int v : members[at(r)]) tallest = std::max(tallest, height[at(v)]);
    for (int v : members[at(r)]) {
      const double y = top + (tallest - height[at(v)]) / 2;
      result.vertices[v] = QRectF(centerX[at(v)] - minLeft - width[at(v)] / 2, y, width[at(v)], height[at(v)]);
    }
    top += tallest + kRankGap;
  }

  // Group frames around their members, partition frames around theirs (groups included), each with room for its
  // whole caption.
  QHash<int, QRectF> groupContent, clusterContent;
  QHash<int, int> clusterOfGroup;
  auto add = [](QHash<int, QRectF>& content, int key, const QRectF& r) {
    QRectF& box = content[key];
    box = box.isNull() ? r : box.united(r);
  };
  for (int v = 0; v < n; ++v) {
    const VisibleGraph::Vertex& vertex = graph.vertices[v];
    if (vertex.inGroup >= 0) {
      add(groupContent, vertex.inGroup, result.vertices[v]);
      clusterOfGroup.insert(vertex.inGroup, vertex.inCluster);
    } else if (vertex.inCluster >= 0) {
      add(clusterContent, vertex.inCluster, result.vertices[v]);
    }
  }
  for (int g : graph.expandedGroups) {
    if (!groupContent.contains(g)) continue;
    const QRectF box = frameAround(groupContent.value(g), groupCaptions.value(g));
    result.groupBoxes.insert(g, box);
    if (clusterOfGroup.value(g, -1) >= 0) add(clusterContent, clusterOfGroup.value(g), box);
  }
  for (int c : graph.expandedClusters) {
    if (!clusterContent.contains(c)) continue;
    result.clusterBoxes.insert(c, frameAround(clusterContent.value(c), clusterCaptions.value(c)));
  }

  // Everything inside a margin from (0, 0).
  QRectF bounds;
  for (const QRectF& r : result.vertices) bounds = bounds.isNull() ? r : bounds.united(r);
  for (const QRectF& r : result.clusterBoxes) bounds = bounds.united(r);
  for (const QRectF& r : result.groupBoxes) bounds = bounds.united(r);
  const QPointF shift(kMargin - bounds.left(), kMargin - bounds.top());
  for (QRectF& r : result.vertices) r.translate(shift);
  for (auto it = result.clusterBoxes.begin(); it != result.clusterBoxes.end(); ++it) it.value().translate(shift);
  for (auto it = result.groupBoxes.begin(); it != result.groupBoxes.end(); ++it) it.value().translate(shift);
  result.bounds = QRectF(0, 0, bounds.width() + 2 * kMargin, bounds.height() + 2 * kMargin);

  // Straight edges from the bottom of the producer to the top of the consumer (or back up, for a cycle's edge).
  for (int i = 0; i < graph.edges.size(); ++i) {
    const QRectF& from = result.vertices[graph.edges[i].from];
    const QRectF& to = result.vertices[graph.edges[i].to];
    const bool down = to.top() >= from.bottom();
    const QPointF start(from.center().x(), down ? from.bottom() : from.top());
    const QPointF tip(to.center().x(), down ? to.top() : to.bottom());
    const QPointF span = tip - start;
    const double length = std::max(1e-6, std::hypot(span.x(), span.y()));
    const QPointF end = tip - span / length * std::min(kArrowLength, length / 2);
    result.edgeSplines[i] = {start, start + (end - start) / 3, start + (end - start) * 2 / 3, end};
    result.edgeArrowTips[i] = tip;
  }
  return result;
}

}  // namespace kiln::bridge
