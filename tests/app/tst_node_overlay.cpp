// NodeOverlay: the colour of every node equals the colour its per-node value maps to (the scale's ends at the
// minimum and maximum, a log scale over wide ranges, the first divergence in its own colour), the top-N order, and
// the colours a real graph view's nodes get from it (nodes without data keep their EP colour).
#include <QSignalSpy>
#include <QTest>

#include "graph_panel.h"
#include "graph_view.h"
#include "node_overlay.h"

using kiln::bridge::NodeMetricRow;
using kiln::bridge::NodeMetrics;
using kiln::studio::NodeOverlay;

namespace {

NodeMetrics metrics(const QList<std::pair<QString, double>>& values, const QString& metric = QStringLiteral("time_ms")) {
  NodeMetrics data;
  data.kind = QStringLiteral("profile");
  for (const auto& [node, value] : values) {
    NodeMetricRow row;
    row.node = node;
    row.opType = QStringLiteral("Conv");
    row.metrics.insert(metric, value);
    data.nodes << row;
  }
  return data;
}

}  // namespace

class TestNodeOverlay : public QObject {
  Q_OBJECT

 private slots:
  void coloursFollowTheValues() {
    NodeOverlay overlay;
    overlay.setData(metrics({{QStringLiteral("a"), 1.0}, {QStringLiteral("b"), 2.0}, {QStringLiteral("c"), 3.0}}),
                    QStringLiteral("time_ms"));
    QCOMPARE(overlay.minimum(), 1.0);
    QCOMPARE(overlay.maximum(), 3.0);
    QVERIFY(!overlay.logarithmic());
    for (const auto& [node, value] : QList<std::pair<QString, double>>{{QStringLiteral("a"), 1.0}, {QStringLiteral("b"), 2.0}, {QStringLiteral("c"), 3.0}}) {
      QCOMPARE(overlay.value(node).value(), value);
      QCOMPARE(overlay.colorFor(node).value(), overlay.colorForValue(value));
    }
    // Pale at the minimum, dark red at the maximum: the larger value is darker.
    QCOMPARE(overlay.colorFor(QStringLiteral("a"))->name(), QStringLiteral("#fff59d"));
    QCOMPARE(overlay.colorFor(QStringLiteral("c"))->name(), QStringLiteral("#b71c1c"));
    QCOMPARE(overlay.colorFor(QStringLiteral("b"))->name(), QStringLiteral("#fb8c00"));
    QVERIFY(overlay.colorFor(QStringLiteral("a"))->lightness() > overlay.colorFor(QStringLiteral("c"))->lightness());
    QVERIFY(!overlay.colorFor(QStringLiteral("nope")).has_value());
  }

  void wideRangesUseALogScale() {
    NodeOverlay overlay;
    overlay.setData(metrics({{QStringLiteral("a"), 0.001}, {QStringLiteral("b"), 0.1}, {QStringLiteral("c"), 10.0}}),
                    QStringLiteral("time_ms"));
    QVERIFY(overlay.logarithmic());
    // 0.1 is half-way between 1e-3 and 1e1 in decades: the middle colour.
    QCOMPARE(overlay.colorFor(QStringLiteral("b"))->name(), QStringLiteral("#fb8c00"));
  }

  void missingMetricAndNonFiniteValuesAreSkipped() {
    NodeMetrics data = metrics({{QStringLiteral("a"), 1.0}, {QStringLiteral("b"), std::numeric_limits<double>::quiet_NaN()}});
    NodeOverlay overlay;
    overlay.setData(data, QStringLiteral("max_abs_error"));
    QVERIFY(overlay.isEmpty());
    overlay.setData(data, QStringLiteral("time_ms"));
    QVERIFY(!overlay.colorFor(QStringLiteral("b")).has_value());
    QCOMPARE(overlay.minimum(), 1.0);
    QCOMPARE(overlay.maximum(), 1.0);
  }

  void firstDivergenceStandsOut() {
    NodeMetrics data = metrics({{QStringLiteral("a"), 0.0}, {QStringLiteral("b"), 0.5}}, QStringLiteral("max_abs_error"));
    data.nodes[1].firstDivergence = true;
    NodeOverlay overlay;
    overlay.setData(data, QStringLiteral("max_abs_error"));
    QCOMPARE(overlay.colorFor(QStringLiteral("b"))->rgb(), QColor(NodeOverlay::kFirstDivergence).rgb());
    QCOMPARE(overlay.colorFor(QStringLiteral("a")).value(), overlay.colorForValue(0.0));
  }

  void topNodesLargestFirst() {
    NodeOverlay overlay;
    overlay.setData(metrics({{QStringLiteral("a"), 1.0}, {QStringLiteral("b"), 5.0}, {QStringLiteral("c"), 3.0}}),
                    QStringLiteral("time_ms"));
    const auto top = overlay.topNodes(2);
    QCOMPARE(top.size(), 2);
    QCOMPARE(top[0].first, QStringLiteral("b"));
    QCOMPARE(top[1].first, QStringLiteral("c"));
  }

  void graphNodesTakeTheOverlayColours() {
    kiln::studio::GraphPanel panel;
    QSignalSpy ready(&panel, &kiln::studio::GraphPanel::layoutReady);
    panel.openModel(QStringLiteral(KILN_TEST_MODELS_DIR "/tiny_cnn.onnx"));
    QVERIFY(ready.wait(90000));
    const auto document = panel.document();
    QVERIFY(document);
    // Every other op node gets a value (its index); the rest have none.
    QList<std::pair<QString, double>> values;
    for (int i = 0; i < document->nodes().size(); ++i) {
      const auto& node = document->nodes()[i];
      if (node.kind == kiln::bridge::GraphNode::Kind::Op && !node.name.isEmpty() && i % 2 == 0) values << std::make_pair(node.name, double(i + 1));
    }
    QVERIFY(values.size() >= 2);
    NodeOverlay overlay;
    overlay.setData(metrics(values), QStringLiteral("time_ms"));
    const int coloured = overlay.applyTo(panel.view(), *document);
    int checked = 0;
    for (auto it = panel.view()->nodeItems().begin(); it != panel.view()->nodeItems().end(); ++it) {
      const auto& node = document->nodes()[it.key()];
      const auto expected = overlay.colorFor(node.name);
      if (expected) {
        QCOMPARE(it.value()->fillColor(), *expected);
        ++checked;
      } else if (node.kind == kiln::bridge::GraphNode::Kind::Op) {
        QCOMPARE(it.value()->fillColor(), QColor(NodeOverlay::kNoData));  // not mistaken for a value
      }
    }
    QCOMPARE(checked, coloured);
    QVERIFY(checked >= 2);
    auto* legend = panel.view()->viewport()->findChild<kiln::studio::OverlayLegend*>(QStringLiteral("graphOverlayLegend"));
    QVERIFY(legend && !legend->isHidden());
    // Cleared, every node gets its EP colour back.
    overlay.clear();
    QCOMPARE(overlay.applyTo(panel.view(), *document), 0);
    QVERIFY(legend->isHidden());
    for (auto it = panel.view()->nodeItems().begin(); it != panel.view()->nodeItems().end(); ++it) {
      const auto& node = document->nodes()[it.key()];
      if (node.kind == kiln::bridge::GraphNode::Kind::Op) {
        QCOMPARE(it.value()->fillColor(), kiln::studio::epQColor(node.executionProvider));
      }
    }
  }
};

QTEST_MAIN(TestNodeOverlay)
#include "tst_node_overlay.moc"
