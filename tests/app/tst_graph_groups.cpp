// The groups a big graph is drawn as (graph_groups.h, issue 33 item 5): scoped names group by the first scope depth
// that splits the graph ("/encoder/layer.3": 12 layers, 12 groups, alike), exporter names are cut where the fewest
// values cross (between residual blocks, not through them), groups never span two partitions, small graphs have
// none, and 10,000 nodes are grouped in milliseconds.
#include <QElapsedTimer>
#include <QtTest>

#include "graph_document.h"
#include "graph_groups.h"

using kiln::bridge::GraphEdge;
using kiln::bridge::GraphGroup;
using kiln::bridge::GraphNode;

namespace {

struct Graph {
  QVector<GraphNode> nodes;
  QVector<GraphEdge> edges;
  QVector<int> clusters;

  int add(const QString& name, const QString& opType, QVector<int> inputs, int cluster = -1) {
    GraphNode node;
    node.name = name;
    node.opType = opType;
    nodes.push_back(node);
    clusters.push_back(cluster);
    const int index = static_cast<int>(nodes.size()) - 1;
    for (int input : inputs) edges.push_back({input, index, QStringLiteral("v%1").arg(input)});
    return index;
  }
  QVector<GraphGroup> groups() const {
    return kiln::bridge::findGroups(nodes, edges, clusters, [](int) { return QStringLiteral("float32[1,16,32,32]"); });
  }
};

// `blocks` residual blocks (Conv, Relu, Conv, Add with the block's input) named like an exporter's ("p2o.Conv.3"),
// after a graph input; partition `clusterEvery` blocks apart when given.
Graph residualBlocks(int blocks, int clusterEvery = 0) {
  Graph g;
  GraphNode input;
  input.kind = GraphNode::Kind::GraphInput;
  input.name = QStringLiteral("x");
  g.nodes.push_back(input);
  g.clusters.push_back(-1);
  int current = 0;
  for (int b = 0; b < blocks; ++b) {
    const int cluster = clusterEvery > 0 ? b / clusterEvery : -1;
    const int c1 = g.add(QStringLiteral("p2o.Conv.%1").arg(2 * b), QStringLiteral("Conv"), {current}, cluster);
    const int r = g.add(QStringLiteral("p2o.Relu.%1").arg(b), QStringLiteral("Relu"), {c1}, cluster);
    const int c2 = g.add(QStringLiteral("p2o.Conv.%1").arg(2 * b + 1), QStringLiteral("Conv"), {r}, cluster);
    current = g.add(QStringLiteral("p2o.Add.%1").arg(b), QStringLiteral("Add"), {current, c2}, cluster);
  }
  GraphNode output;
  output.kind = GraphNode::Kind::GraphOutput;
  output.name = QStringLiteral("y");
  g.nodes.push_back(output);
  g.clusters.push_back(-1);
  g.edges.push_back({current, static_cast<int>(g.nodes.size()) - 1, QStringLiteral("y")});
  return g;
}

}  // namespace

class TestGraphGroups : public QObject {
  Q_OBJECT

 private slots:
  void scopedNamesGroupByLayer() {
    Graph g;
    int current = g.add(QStringLiteral("/embed/Gather"), QStringLiteral("Gather"), {});
    for (int layer = 0; layer < 12; ++layer) {
      const QString scope = QStringLiteral("/encoder/layer.%1/").arg(layer);
      const int q = g.add(scope + QStringLiteral("attn/q/MatMul"), QStringLiteral("MatMul"), {current});
      const int k = g.add(scope + QStringLiteral("attn/k/MatMul"), QStringLiteral("MatMul"), {current});
      const int s = g.add(scope + QStringLiteral("attn/Softmax"), QStringLiteral("Softmax"), {q, k});
      const int add = g.add(scope + QStringLiteral("Add"), QStringLiteral("Add"), {current, s});
      current = g.add(scope + QStringLiteral("norm/LayerNormalization"), QStringLiteral("LayerNormalization"), {add});
    }
    const QVector<GraphGroup> groups = g.groups();
    QCOMPARE(groups.size(), 12);  // "encoder" alone would be one group: the next depth splits it
    for (int layer = 0; layer < 12; ++layer) {
      QCOMPARE(groups[layer].title, QStringLiteral("encoder/layer.%1").arg(layer));
      QCOMPARE(groups[layer].nodes.size(), 5);
      QVERIFY(groups[layer].byScope);
      QCOMPARE(groups[layer].alike, 12);  // a repeated block
      QCOMPARE(groups[layer].alikeIndex, layer + 1);
    }
    QCOMPARE(groups[3].caption(), QStringLiteral("encoder/layer.3 (5 nodes \u00b7 4 of 12 alike)"));
  }

  void exporterNamesAreCutBetweenBlocks() {
    const Graph g = residualBlocks(40);
    const QVector<GraphGroup> groups = g.groups();
    QVERIFY2(groups.size() >= 6 && groups.size() <= 16, qPrintable(QString::number(groups.size())));
    int grouped = 0;
    for (const GraphGroup& group : groups) {
      grouped += static_cast<int>(group.nodes.size());
      // Every group starts with a block's first Conv: a cut never separates a block from its skip link.
      QCOMPARE(g.nodes[group.nodes.first()].opType, QStringLiteral("Conv"));
      QCOMPARE(g.nodes[group.nodes.last()].opType, QStringLiteral("Add"));
      QVERIFY2(group.title.startsWith(QStringLiteral("Conv \u00d7")), qPrintable(group.title));
      QVERIFY2(group.title.endsWith(QStringLiteral("\u2192 [1,16,32,32]")), qPrintable(group.title));
      QVERIFY(!group.byScope);
    }
    QCOMPARE(grouped, 160);  // every op node, once
  }

  void groupsStayInsidePartitions() {
    const Graph g = residualBlocks(60, 7);
    const QVector<GraphGroup> groups = g.groups();
    QVERIFY(!groups.isEmpty());
    for (const GraphGroup& group : groups) {
      for (int node : group.nodes) QCOMPARE(g.clusters[node], group.cluster);
    }
  }

  void smallGraphsHaveNoGroups() {
    QVERIFY(residualBlocks(10).groups().isEmpty());  // 40 op nodes: drawn whole
    QVERIFY(!residualBlocks(20).groups().isEmpty());
  }

  void tenThousandNodesInMilliseconds() {
    const Graph g = residualBlocks(2500);
    QElapsedTimer timer;
    timer.start();
    const QVector<GraphGroup> groups = g.groups();
    const qint64 ms = timer.elapsed();
    qInfo("10,000 nodes grouped in %lld ms: %lld groups", static_cast<long long>(ms),
          static_cast<long long>(groups.size()));
    QVERIFY2(ms < 500, qPrintable(QString::number(ms)));
    QVERIFY(groups.size() >= 6 && groups.size() <= 16);
  }
};

QTEST_MAIN(TestGraphGroups)
#include "tst_graph_groups.moc"
