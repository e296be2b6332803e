// The layered layout that replaces dot above GraphLayout::kMaxDotVertices (issue 22: a 10,000-node graph with every
// partition expanded is laid out in well under 3 s, where dot took about 20 s): every vertex placed without overlap,
// edges from producer to consumer, partition boxes holding their members and their whole caption, cycles survived.
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
    // Edges run down from the producer's bottom to the consumer's top (or on into the next band), ending in an
    // arrow tip.
    int bandCrossings = 0;
    for (int e = 0; e < graph.edges.size(); ++e) {
      const QRectF from = result.vertices[graph.edges[e].from], to = result.vertices[graph.edges[e].to];
      QCOMPARE(result.edgeSplines[e].size(), 4);
      QCOMPARE(result.edgeSplines[e].first(), QPointF(from.center().x(), from.bottom()));
      QCOMPARE(result.edgeArrowTips[e], QPointF(to.center().x(), to.top()));
      if (to.top() < from.bottom()) {
        QVERIFY(to.left() > from.right());
        ++bandCrossings;
      }
    }
    // 120 ranks of about 88 points: a long graph is set in bands side by side, wider than tall.
    QVERIFY(bandCrossings > 0);
    QVERIFY2(result.bounds.width() > result.bounds.height() * 0.3,
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

  void tallDotLayoutsAreSetInBands() {
    // A dot-like drawing: one column of 200 boxes 40 points apart, one partition around all of them.
    VisibleGraph graph;
    GraphLayoutResult layout;
    for (int i = 0; i < 200; ++i) {
      graph.vertices.push_back({QStringLiteral("n%1").arg(i), i, -1, 0, 1, 0.4});
      layout.vertices.push_back(QRectF(20, 20 + i * 60, 72, 29));
      if (i > 0) {
        graph.edges.push_back({i - 1, i, 1});
        layout.edgeSplines.push_back({QPointF(56, i * 60 - 11), QPointF(56, i * 60), QPointF(56, i * 60 + 5), QPointF(56, i * 60 + 12)});
        layout.edgeArrowTips.push_back(QPointF(56, i * 60 + 20));
      }
    }
    layout.clusterBoxes.insert(0, QRectF(10, 5, 92, 200 * 60 + 10));
    layout.bounds = QRectF(0, 0, 112, 200 * 60 + 30);
    kiln::bridge::setInBands(&layout, graph);
    QVERIFY2(layout.bands >= 4, qPrintable(QString::number(layout.bands)));
    QVERIFY(layout.bounds.width() > layout.bounds.height() * 0.3);
    QCOMPARE(layout.clusterBoxes.count(0), layout.bands);  // one box per band
    for (int i = 0; i < 200; ++i) {
      QVERIFY(layout.bounds.contains(layout.vertices[i]));
      bool inBox = false;
      for (const QRectF& box : layout.clusterBoxes.values(0)) inBox |= box.contains(layout.vertices[i]);
      QVERIFY(inBox);
    }
    // Edges end at their consumer's top, inside a band or across to the next one.
    for (int e = 0; e < graph.edges.size(); ++e) {
      const QRectF to = layout.vertices[graph.edges[e].to];
      QCOMPARE(layout.edgeArrowTips[e], QPointF(to.center().x(), to.top()));
    }
    // A wide layout is left alone.
    GraphLayoutResult wide = layout;
    const QRectF before = wide.bounds;
    kiln::bridge::setInBands(&wide, graph);
    QCOMPARE(wide.bounds, before);
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
