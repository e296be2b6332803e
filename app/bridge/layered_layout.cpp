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
constexpr double kRankGap = 52;       // between ranks: room for a partition caption and its frame
constexpr double kClusterPad = 8;     // partition frame around its members
constexpr double kCaptionRoom = 22;   // above the members, for the caption
constexpr double kCaptionCharWidth = 7.5;  // generous for the view's 9 pt bold caption
constexpr double kArrowLength = 8;
constexpr double kMargin = 14;
constexpr double kBandGap = 60;      // between the bands of a long graph
constexpr double kBandAspect = 0.6;  // a band's height over the whole width: the page is wider than tall

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

}  // namespace

GraphLayoutResult layeredLayout(const VisibleGraph& graph, const QStringList& clusterCaptions) {
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

  // y: ranks top to bottom, each as tall as its tallest vertex; vertices centered in their rank. A long graph is
  // cut into bands set side by side (a newspaper's columns), so that at fit-to-view it is a page, not a hairline;
  // bands break only between partitions, never through one.
  std::vector<double> rankHeight(at(ranks), 0), rankLeft(at(ranks), 1e300), rankRight(at(ranks), -1e300);
  double totalHeight = 0, widest = 0;
  for (int r = 0; r < ranks; ++r) {
    for (int v : members[at(r)]) {
      rankHeight[at(r)] = std::max(rankHeight[at(r)], height[at(v)]);
      rankLeft[at(r)] = std::min(rankLeft[at(r)], centerX[at(v)] - width[at(v)] / 2);
      rankRight[at(r)] = std::max(rankRight[at(r)], centerX[at(v)] + width[at(v)] / 2);
    }
    totalHeight += rankHeight[at(r)] + kRankGap;
    widest = std::max(widest, rankRight[at(r)] - rankLeft[at(r)]);
  }
  // Ranks after which no expanded partition continues: where a band may end.
  std::vector<int> open(at(ranks) + 1, 0);
  {
    QHash<int, std::pair<int, int>> span;  // cluster -> first and last rank
    for (int v = 0; v < n; ++v) {
      const int c = graph.vertices[v].inCluster;
      if (c < 0) continue;
      auto it = span.find(c);
      if (it == span.end()) {
        span.insert(c, {rank[at(v)], rank[at(v)]});
      } else {
        it->first = std::min(it->first, rank[at(v)]);
        it->second = std::max(it->second, rank[at(v)]);
      }
    }
    for (const auto& [from, to] : span) {
      ++open[at(from)];
      --open[at(to)];
    }
    for (int r = 1; r <= ranks; ++r) open[at(r)] += open[at(r - 1)];
  }
  // A band is as wide as its widest rank, or a partition caption (boxes grow to hold theirs), whichever is wider.
  for (int c : graph.expandedClusters) {
    widest = std::max(widest, static_cast<double>(clusterCaptions.value(c).size()) * kCaptionCharWidth + 16);
  }
  const double bandWidth = widest + 2 * kClusterPad + kBandGap;
  const double wantedHeight = std::max(2000.0, std::sqrt(totalHeight * bandWidth * kBandAspect));
  double top = 0, bandLeft = 0, minLeft = 1e300;
  for (int r = 0; r < ranks; ++r) minLeft = std::min(minLeft, rankLeft[at(r)]);
  for (int r = 0; r < ranks; ++r) {
    const double tallest = rankHeight[at(r)];
    for (int v : members[at(r)]) {
      const double y = top + (tallest - height[at(v)]) / 2;
      result.vertices[v] = QRectF(bandLeft + centerX[at(v)] - minLeft - width[at(v)] / 2, y, width[at(v)], height[at(v)]);
    }
    top += tallest + kRankGap;
    if (top >= wantedHeight && open[at(r)] == 0 && r + 1 < ranks) {
      top = 0;
      bandLeft += bandWidth;
    }
  }

  // Partition frames: around their members, with room for the whole caption.
  for (int c : graph.expandedClusters) {
    QRectF box;
    for (int v = 0; v < n; ++v) {
      if (graph.vertices[v].inCluster == c) box = box.isNull() ? result.vertices[v] : box.united(result.vertices[v]);
    }
    if (box.isNull()) continue;
    box.adjust(-kClusterPad, -kCaptionRoom, kClusterPad, kClusterPad);
    const double caption = static_cast<double>(clusterCaptions.value(c).size()) * kCaptionCharWidth + 16;
    if (box.width() < caption) box.setWidth(caption);
    result.clusterBoxes.insert(c, box);
  }

  // Everything inside a margin from (0, 0).
  QRectF bounds;
  for (const QRectF& r : result.vertices) bounds = bounds.isNull() ? r : bounds.united(r);
  for (const QRectF& r : result.clusterBoxes) bounds = bounds.united(r);
  const QPointF shift(kMargin - bounds.left(), kMargin - bounds.top());
  for (QRectF& r : result.vertices) r.translate(shift);
  for (auto it = result.clusterBoxes.begin(); it != result.clusterBoxes.end(); ++it) it.value().translate(shift);
  result.bounds = QRectF(0, 0, bounds.width() + 2 * kMargin, bounds.height() + 2 * kMargin);

  // Straight edges from the bottom of the producer to the top of the consumer (or back up, for a cycle's edge).
  for (int i = 0; i < graph.edges.size(); ++i) {
    const QRectF& from = result.vertices[graph.edges[i].from];
    const QRectF& to = result.vertices[graph.edges[i].to];
    const bool down = to.top() >= from.bottom() || to.left() >= from.right() + kBandGap / 2;  // into the next band
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

void setInBands(GraphLayoutResult* result, const VisibleGraph& graph) {
  const int n = static_cast<int>(graph.vertices.size());
  const double width = result->bounds.width(), height = result->bounds.height();
  if (n < 40 || width <= 0 || height < 3 * width) return;
  const int bands = static_cast<int>(std::lround(std::sqrt(height / (kBandAspect * (width + kBandGap)))));
  if (bands < 2) return;
  // Cut where a whole rank gap lies between what is above and what is below, about every height / bands.
  std::vector<int> byTop(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) byTop[static_cast<size_t>(i)] = i;
  std::sort(byTop.begin(), byTop.end(), [&](int a, int b) { return result->vertices[a].top() < result->vertices[b].top(); });
  std::vector<double> cuts{0};
  double lowest = 0;
  const double wanted = height / bands;
  for (int v : byTop) {
    const QRectF& r = result->vertices[v];
    if (r.top() > lowest && r.top() - cuts.back() >= wanted && static_cast<int>(cuts.size()) < bands) {
      cuts.push_back((lowest + r.top()) / 2);
    }
    lowest = std::max(lowest, r.bottom());
  }
  if (cuts.size() < 2) return;
  cuts.push_back(height + 1);
  auto bandOf = [&](double y) {
    return static_cast<int>(std::upper_bound(cuts.begin(), cuts.end(), y) - cuts.begin()) - 1;
  };
  auto offset = [&](int band) { return QPointF(band * (width + kBandGap), -cuts[static_cast<size_t>(band)]); };
  std::vector<int> band(static_cast<size_t>(n));
  double tallest = 0;
  for (int v = 0; v < n; ++v) {
    band[static_cast<size_t>(v)] = bandOf(result->vertices[v].center().y());
    result->vertices[v].translate(offset(band[static_cast<size_t>(v)]));
  }
  for (int b = 0; b + 1 < static_cast<int>(cuts.size()); ++b) {
    tallest = std::max(tallest, cuts[static_cast<size_t>(b) + 1] - cuts[static_cast<size_t>(b)]);
  }
  for (int e = 0; e < graph.edges.size(); ++e) {
    const int from = graph.edges[e].from, to = graph.edges[e].to;
    if (band[static_cast<size_t>(from)] == band[static_cast<size_t>(to)]) {
      const QPointF shift = offset(band[static_cast<size_t>(from)]);
      for (QPointF& p : result->edgeSplines[e]) p += shift;
      if (!result->edgeArrowTips[e].isNull()) result->edgeArrowTips[e] += shift;
      continue;
    }
    const QRectF& a = result->vertices[from];
    const QRectF& b = result->vertices[to];
    const QPointF start(a.center().x(), a.bottom()), tip(b.center().x(), b.top());
    const QPointF span = tip - start;
    const double length = std::max(1e-6, std::hypot(span.x(), span.y()));
    const QPointF end = tip - span / length * std::min(kArrowLength, length / 2);
    result->edgeSplines[e] = {start, start + (end - start) / 3, start + (end - start) * 2 / 3, end};
    result->edgeArrowTips[e] = tip;
  }
  // Partitions: one box per band they have members in, cut to the band (with room for the caption at a cut).
  QMultiHash<int, QRectF> boxes;
  for (auto it = result->clusterBoxes.constBegin(); it != result->clusterBoxes.constEnd(); ++it) {
    std::vector<char> used(cuts.size(), 0);
    for (int v = 0; v < n; ++v) {
      if (graph.vertices[v].inCluster == it.key()) used[static_cast<size_t>(band[static_cast<size_t>(v)])] = 1;
    }
    for (int b = 0; b + 1 < static_cast<int>(cuts.size()); ++b) {
      if (!used[static_cast<size_t>(b)]) continue;
      QRectF piece = it.value();
      piece.setTop(std::max(piece.top(), cuts[static_cast<size_t>(b)]));
      piece.setBottom(std::min(piece.bottom(), cuts[static_cast<size_t>(b) + 1]));
      if (piece.height() <= 0) continue;
      boxes.insert(it.key(), piece.translated(offset(b)));
    }
  }
  result->clusterBoxes = boxes;
  result->bands = static_cast<int>(cuts.size()) - 1;
  result->bounds = QRectF(0, 0, result->bands * (width + kBandGap) - kBandGap, tallest);
}

}  // namespace kiln::bridge
