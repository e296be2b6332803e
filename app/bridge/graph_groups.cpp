#include "graph_groups.h"

#include <QHash>
#include <QStringList>

#include <algorithm>
#include <cmath>
#include <functional>
#include <initializer_list>
#include <utility>
#include <vector>

#include "graph_document.h"

namespace kiln::bridge {

namespace {

// A graph is grouped by scope when at least this share of its op nodes have scoped names.
constexpr double kScopedShare = 0.6;
// At Fit a grouped graph shows about this many groups: few enough that their titles stay legible.
constexpr int kWantedGroups = 10;
// Scope depths tried, outermost first.
constexpr int kMaxScopeDepth = 6;

// Op nodes drawn as boxes, in document (topological) order: graph inputs and outputs and Constants folded into
// their consumers stay out of groups.
QVector<int> groupableNodes(const QVector<GraphNode>& nodes) {
  QVector<int> found;
  for (int i = 0; i < nodes.size(); ++i) {
    if (nodes[i].kind == GraphNode::Kind::Op && !nodes[i].folded) found.push_back(i);
  }
  return found;
}

// Runs of consecutive groupable nodes in one partition: a group never leaves its partition.
QVector<QVector<int>> partitionRuns(const QVector<int>& groupable, const QVector<int>& clusterOfNode) {
  QVector<QVector<int>> runs;
  int current = -2;
  for (int node : groupable) {
    const int cluster = clusterOfNode.value(node, -1);
    if (runs.isEmpty() || cluster != current) runs.push_back({});
    runs.back().push_back(node);
    current = cluster;
  }
  return runs;
}

// The scope of a node name, without its last part: "/encoder/layer.3/attn/MatMul" -> encoder, layer.3, attn.
QStringList scopeOf(const QString& name) {
  QStringList parts = name.split(u'/', Qt::SkipEmptyParts);
  if (!parts.isEmpty()) parts.removeLast();
  return parts;
}

bool namesHaveScopes(const QVector<GraphNode>& nodes, const QVector<int>& groupable) {
  int scoped = 0;
  for (int node : groupable) scoped += scopeOf(nodes[node].name).isEmpty() ? 0 : 1;
  return scoped >= kScopedShare * static_cast<double>(groupable.size());
}

// Groups of consecutive nodes sharing their first `depth` scope parts; nodes with a shallower scope stay ungrouped.
QVector<GraphGroup> scopeGroups(const QVector<GraphNode>& nodes, const QVector<QVector<int>>& runs,
                                const QVector<int>& clusterOfNode, int depth) {
  QVector<GraphGroup> groups;
  for (const QVector<int>& run : runs) {
    QString open;  // the scope of the group being filled, "" for none
    for (int node : run) {
      const QStringList scope = scopeOf(nodes[node].name);
      const QString key = scope.size() >= depth ? scope.mid(0, depth).join(u'/') : QString();
      if (key.isEmpty()) {
        open.clear();
        continue;
      }
      if (key != open) {
        GraphGroup group;
        group.title = key;
        group.byScope = true;
        group.cluster = clusterOfNode.value(node, -1);
        groups.push_back(group);
        open = key;
      }
      groups.back().nodes.push_back(node);
    }
  }
  groups.erase(std::remove_if(groups.begin(), groups.end(), [](const GraphGroup& g) { return g.nodes.size() < 2; }),
               groups.end());
  return groups;
}

// The outermost scope depth that splits the graph into several groups ("encoder/layer.3", not "model").
QVector<GraphGroup> findScopeGroups(const QVector<GraphNode>& nodes, const QVector<QVector<int>>& runs,
                                    const QVector<int>& clusterOfNode) {
  QVector<GraphGroup> best;
  for (int depth = 1; depth <= kMaxScopeDepth; ++depth) {
    QVector<GraphGroup> groups = scopeGroups(nodes, runs, clusterOfNode, depth);
    if (groups.size() >= kWantedGroups / 2) return groups;
    if (groups.size() > best.size()) best = std::move(groups);
  }
  return best.size() >= 2 ? best : QVector<GraphGroup>{};
}

// Values crossing the boundary just before node k of the document: those produced before k and read at k or later.
std::vector<int> crossingValues(int nodeCount, const QVector<GraphEdge>& edges) {
  std::vector<int> lastRead(static_cast<size_t>(nodeCount), -1);
  for (const GraphEdge& e : edges) {
    if (e.from >= 0 && e.from < e.to && e.to < nodeCount) {
      lastRead[static_cast<size_t>(e.from)] = std::max(lastRead[static_cast<size_t>(e.from)], e.to);
    }
  }
  std::vector<int> crossing(static_cast<size_t>(nodeCount) + 1, 0);
  for (int u = 0; u < nodeCount; ++u) {
    if (lastRead[static_cast<size_t>(u)] < 0) continue;
    ++crossing[static_cast<size_t>(u) + 1];
    --crossing[static_cast<size_t>(lastRead[static_cast<size_t>(u)]) + 1];
  }
  for (size_t k = 1; k < crossing.size(); ++k) crossing[k] += crossing[k - 1];
  return crossing;
}

bool isOneOf(const QString& opType, std::initializer_list<const char*> names) {
  return std::any_of(names.begin(), names.end(), [&](const char* name) { return opType == QLatin1String(name); });
}

int opWeight(const QString& opType) {
  if (isOneOf(opType, {"Conv", "ConvInteger", "ConvTranspose", "QLinearConv", "MatMul", "MatMulInteger",
                       "QLinearMatMul", "Gemm", "LSTM", "GRU", "RNN", "Attention", "MultiHeadAttention"})) {
    return 10;
  }
  return isOneOf(opType, {"MaxPool", "AveragePool", "GlobalAveragePool", "GlobalMaxPool", "Resize", "Upsample",
                          "Concat", "Split", "Softmax", "LayerNormalization", "BatchNormalization",
                          "InstanceNormalization", "If", "Loop", "Scan"})
             ? 3
             : 1;
}

// "ConvInteger ×9 · Resize → [1,64,32,32]": the group's two most telling ops and the shape of the value it ends
// with (where a U-Net's stages differ), `exitShape` "" when unknown.
QString opsTitle(const QVector<GraphNode>& nodes, const QVector<int>& members, const QString& exitShape) {
  QVector<std::pair<QString, int>> counts;
  for (int node : members) {
    auto it = std::find_if(counts.begin(), counts.end(), [&](const auto& c) { return c.first == nodes[node].opType; });
    if (it == counts.end()) {
      counts.push_back({nodes[node].opType, 1});
    } else {
      ++it->second;
    }
  }
  std::stable_sort(counts.begin(), counts.end(), [](const auto& a, const auto& b) {
    return a.second * opWeight(a.first) > b.second * opWeight(b.first);
  });
  QStringList parts;
  for (qsizetype i = 0; i < std::min<qsizetype>(2, counts.size()); ++i) {
    parts << (counts[i].second > 1 ? QStringLiteral("%1 \u00d7%2").arg(counts[i].first).arg(counts[i].second)
                                   : counts[i].first);
  }
  QString title = parts.join(QStringLiteral(" \u00b7 "));
  if (!exitShape.isEmpty()) title += QStringLiteral(" \u2192 ") + exitShape;
  return title;
}

// "[1,64,32,32]" from "uint8[1,64,32,32]"; "" where a dimension is an exporter's long symbol
// ("p2o.DynamicDimension.3"), which would make the title unreadable.
QString shortShape(const QString& tensorText) {
  const qsizetype bracket = tensorText.indexOf(u'[');
  if (bracket < 0) return {};
  const QString shape = tensorText.mid(bracket);
  for (const QString& dim : shape.mid(1, shape.size() - 2).split(u',')) {
    if (dim.size() > 8) return {};
  }
  return shape;
}

// Titles the groups cut by cutGroups by their ops and the shape of the last value leaving each ("[1,64,32,32]",
// without its element type; edgeText(edge) gives "uint8[1,64,32,32]", "" when unknown).
void titleByOps(const QVector<GraphNode>& nodes, const QVector<GraphEdge>& edges,
                const std::function<QString(int)>& edgeText, QVector<GraphGroup>* groups) {
  QVector<int> groupOfNode(nodes.size(), -1);
  for (int g = 0; g < groups->size(); ++g) {
    for (int node : (*groups)[g].nodes) groupOfNode[node] = g;
  }
  QVector<int> lastExit(groups->size(), -1);  // the edge leaving each group from its latest member
  for (int e = 0; e < edges.size(); ++e) {
    const int g = groupOfNode.value(edges[e].from, -1);
    if (g < 0 || groupOfNode.value(edges[e].to, -1) == g) continue;
    if (lastExit[g] < 0 || edges[e].from >= edges[lastExit[g]].from) lastExit[g] = e;
  }
  for (int g = 0; g < groups->size(); ++g) {
    GraphGroup& group = (*groups)[g];
    if (group.byScope) continue;
    group.title = opsTitle(nodes, group.nodes, shortShape(lastExit[g] >= 0 ? edgeText(lastExit[g]) : QString()));
  }
}

// Stretches of about `target` nodes of each run, cut where the fewest values cross (between blocks, not through a
// block's branches), titled by their ops.
QVector<GraphGroup> cutGroups(const QVector<GraphNode>& nodes, const QVector<GraphEdge>& edges,
                              const QVector<QVector<int>>& runs, const QVector<int>& clusterOfNode, int target) {
  const std::vector<int> crossing = crossingValues(static_cast<int>(nodes.size()), edges);
  const int minSize = std::max(4, target / 2), maxSize = target + target / 2;
  QVector<GraphGroup> groups;
  auto add = [&](const QVector<int>& run, int from, int to) {
    GraphGroup group;
    group.nodes = run.mid(from, to - from);
    group.cluster = clusterOfNode.value(run[from], -1);
    groups.push_back(std::move(group));
  };
  for (const QVector<int>& run : runs) {
    const int length = static_cast<int>(run.size());
    if (length < minSize) continue;  // a short stretch between partitions is drawn as its nodes
    int start = 0;
    while (length - start > maxSize) {
      int best = -1;
      for (int p = start + minSize; p <= std::min(start + maxSize, length - minSize); ++p) {
        const int c = crossing[static_cast<size_t>(run[p])];
        const int bestC = best < 0 ? 0 : crossing[static_cast<size_t>(run[best])];
        if (best < 0 || c < bestC || (c == bestC && std::abs(p - start - target) < std::abs(best - start - target))) {
          best = p;
        }
      }
      add(run, start, best);
      start = best;
    }
    add(run, start, length);
  }
  return groups;
}

// Groups with the same ops (as a multiset) are alike: a block the model repeats.
void markAlike(const QVector<GraphNode>& nodes, QVector<GraphGroup>* groups) {
  QVector<QString> signatures;
  QHash<QString, int> count;
  for (const GraphGroup& group : *groups) {
    QStringList ops;
    for (int node : group.nodes) ops << nodes[node].opType;
    ops.sort();
    signatures << ops.join(u',');
    ++count[signatures.back()];
  }
  QHash<QString, int> seen;
  for (qsizetype i = 0; i < groups->size(); ++i) {
    (*groups)[i].alike = count.value(signatures[i]);
    (*groups)[i].alikeIndex = ++seen[signatures[i]];
  }
}

}  // namespace

QString GraphGroup::subtitle() const {
  QString text = nodes.size() == 1 ? QStringLiteral("1 node") : QStringLiteral("%1 nodes").arg(nodes.size());
  if (alike > 1) text += QStringLiteral(" \u00b7 %1 of %2 alike").arg(alikeIndex).arg(alike);
  return text;
}

QString GraphGroup::caption() const { return QStringLiteral("%1 (%2)").arg(title, subtitle()); }

QVector<GraphGroup> findGroups(const QVector<GraphNode>& nodes, const QVector<GraphEdge>& edges,
                               const QVector<int>& clusterOfNode, const std::function<QString(int)>& edgeText) {
  const QVector<int> groupable = groupableNodes(nodes);
  if (groupable.size() < kMinNodesToGroup) return {};
  const QVector<QVector<int>> runs = partitionRuns(groupable, clusterOfNode);
  QVector<GraphGroup> groups;
  if (namesHaveScopes(nodes, groupable)) groups = findScopeGroups(nodes, runs, clusterOfNode);
  if (groups.isEmpty()) {
    const int target = std::max(8, static_cast<int>(std::ceil(static_cast<double>(groupable.size()) / kWantedGroups)));
    groups = cutGroups(nodes, edges, runs, clusterOfNode, target);
    titleByOps(nodes, edges, edgeText, &groups);
  }
  markAlike(nodes, &groups);
  return groups;
}

}  // namespace kiln::bridge
