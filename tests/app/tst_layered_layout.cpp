// The layered layout that replaces dot above GraphLayout::kMaxDotVertices (issue 22: a 10,000-node graph with every
// partition expanded is laid out in well under 3 s, where dot took about 20 s): every vertex placed without overlap,
// edges from producer to consumer, partition and group boxes holding their members and their whole caption, cycles
// survived; a long graph stays one column (issue 33 item 5: no newspaper columns; long graphs are grouped instead).
#include <QElapsedTimer>
#include <QSignalSpy>
#include <QtTest>

#include "graph_layout.h"
#include "layered_layout.h"

using kiln::bridge::GraphLayoutResult;
using kiln::bridge::VisibleGraph;

namespace {

// A chain of residual blocks like tests/tools/make_big_graph.py's: a -> b -> c, a -> c; every 6 vertices one
// cluster (expanded), `blocks` blocks.
VisibleGraph residualChain(int blocks, int clusterEvery) {
  VisibleGraph graph;
  for (int i = 0; i < blocks * 3; ++i) {
    VisibleGraph::Vertex v;
    v.id = QStringLiteral("n%1").arg(i);
    v.node = i;
    v.inCluster = (i / clusterEvery);
    v.widthIn = 1 + (i % 3) * 0.3;
    v.heightIn = 0.5;
    graph.vertices.push_back(v);
  }
  for (int b = 0; b < blocks; ++b) {
    const int a = 3 * b;
    graph.edges.push_back({a, a + 1, 1});
    graph.edges.push_back({a + 1, a + 2, 1});
    graph.edges.push_back({a, a + 2, 1});
    if (b + 1 < blocks) graph.edges.push_back({a + 2, a + 3, 1});
  }
  for (int c = 0; c <= (blocks * 3 - 1) / clusterEvery; ++c) graph.expandedClusters.push_back(c);
  return graph;
}

QStringList captions(int count) {
  QStringList list;
  for (int c = 0; c < count; ++c) list << QStringLiteral("vulkan_%1 \u00b7 Vulkan (6 nodes)").arg(c);
  return list;
}

}  // namespace

class TestLayeredLayout : public QObject {
  Q_OBJECT

 private slots:
  void placesEveryVertexWithoutOverlap() {
    const VisibleGraph graph = residualChain(40, 6);
    const GraphLayoutResult result = kiln::bridge::layeredLayout(graph, captions(20));
    QCOMPARE(result.vertices.size(), graph.vertices.size());
    for (int i = 0; i < result.vertices.size(); ++i) {
      QVERIFY(!result.vertices[i].isEmpty());
      QVERIFY(result.bounds.contains(result.vertices[i]));
      QCOMPARE(result.vertices[i].width(), graph.vertices[i].widthIn * 72);
      for (int j = i + 1; j < result.vertices.size(); ++j) {
        QVERIFY2(!result.vertices[i].intersects(result.vertices[j]), qPrintable(QStringLiteral("%1 %2").arg(i).arg(j)));
      }
    }
    // Edges run down from the producer's bottom to the consumer's top, ending in an arrow tip: never up into
    // another column, however long the graph.
    for (int e = 0; e < graph.edges.size(); ++e) {
      const QRectF from = result.vertices[graph.edges[e].from], to = result.vertices[graph.edges[e].to];
      QCOMPARE(result.edgeSplines[e].size(), 4);
      QCOMPARE(result.edgeSplines[e].first(), QPointF(from.center().x(), from.bottom()));
      QCOMPARE(result.edgeArrowTips[e], QPointF(to.center().x(), to.top()));
      QVERIFY(to.top() >= from.bottom());
    }
    // 120 ranks of about 88 points: one column, far taller than wide.
    QVERIFY2(result.bounds.height() > result.bounds.width() * 10,
             qPrintable(QStringLiteral("%1 x %2").arg(result.bounds.width()).arg(result.bounds.height())));
  }

  void clusterBoxesHoldMembersAndCaption() {
    const VisibleGraph graph = residualChain(10, 6);
    const QStringList names = captions(5);
    const GraphLayoutResult result = kiln::bridge::layeredLayout(graph, names);
    QCOMPARE(result.clusterBoxes.size(), graph.expandedClusters.size());
    for (int i = 0; i < graph.vertices.size(); ++i) {
      QVERIFY(result.clusterBoxes.value(graph.vertices[i].inCluster).contains(result.vertices[i]));
    }
    for (auto it = result.clusterBoxes.constBegin(); it != result.clusterBoxes.constEnd(); ++it) {
      QVERIFY(it.value().width() >= names[it.key()].size() * 7.5);
      // Stacked partitions never overlap.
      for (auto other = std::next(it); other != result.clusterBoxes.constEnd(); ++other) {
        QVERIFY(!it.value().intersects(other.value()));
      }
    }
  }

  void survivesCyclesAndEmptyGraphs() {
    VisibleGraph graph = residualChain(2, 100);
    graph.expandedClusters.clear();
    graph.edges.push_back({5, 0, 1});  // a cycle, as collapsed partitions can make
    const GraphLayoutResult result = kiln::bridge::layeredLayout(graph, {});
    for (const QRectF& r : result.vertices) QVERIFY(!r.isEmpty());
    QVERIFY(kiln::bridge::layeredLayout(VisibleGraph{}, {}).vertices.isEmpty());
  }

  void groupBoxesNestInClusterBoxes() {
    // Groups of 3 vertices (one residual block each) inside partitions of 6.
    VisibleGraph graph = residualChain(10, 6);
    QStringList groupCaptions;
    for (int i = 0; i < graph.vertices.size(); ++i) graph.vertices[i].inGroup = i / 3;
    for (int g = 0; g < 10; ++g) {
      graph.expandedGroups.push_back(g);
      groupCaptions << QStringLiteral("Conv \u00d72 \u00b7 Add \u2192 [1,16,32,32] (3 nodes)");
    }
    const GraphLayoutResult result = kiln::bridge::layeredLayout(graph, captions(5), groupCaptions);
    QCOMPARE(result.groupBoxes.size(), 10);
    for (int i = 0; i < graph.vertices.size(); ++i) {
      const QRectF group = result.groupBoxes.value(graph.vertices[i].inGroup);
      QVERIFY(group.contains(result.vertices[i]));
      QVERIFY(group.width() >= groupCaptions[0].size() * 7.5);
      QVERIFY(result.bounds.contains(group));
      QVERIFY(result.clusterBoxes.value(graph.vertices[i].inCluster).contains(group));  // nested in its partition
    }
  }

  void tenThousandVerticesInUnderASecond() {
    const VisibleGraph graph = residualChain(3400, 30);
    QElapsedTimer timer;
    timer.start();
    const GraphLayoutResult result = kiln::bridge::layeredLayout(graph, captions(400));
    QVERIFY2(timer.elapsed() < 1000, qPrintable(QString::number(timer.elapsed())));
    QCOMPARE(result.vertices.size(), 10200);
  }
};

QTEST_MAIN(TestLayeredLayout)
#include "tst_layered_layout.moc"
