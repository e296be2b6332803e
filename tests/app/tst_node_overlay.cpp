// NodeOverlay: the colour of every node equals the colour its per-node value maps to (the scale's ends at the
// minimum and maximum, a log scale over wide ranges, the first divergence in its own colour), the top-N order, and
// the colours a real graph view's nodes get from it (nodes without data keep their EP colour).
#include <QAbstractTextDocumentLayout>
#include <QSignalSpy>
#include <QTest>
#include <QTextBlock>
#include <QTextBrowser>
#include <QTextDocument>

#include "graph_panel.h"
#include "graph_view.h"
#include "kiln/compare.h"
#include "node_details_view.h"
#include "node_overlay.h"
#include "studio_test_files.h"

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

  void histogramImageHasOneBarPerNonEmptyBin() {
    QVector<qint64> counts(kiln::kErrorHistogramBins, 0);
    counts[0] = 100;  // exact matches
    counts[7] = 50;   // [1e-4, 1e-3)
    const QImage image = kiln::studio::errorHistogramImage(counts, 280, Qt::black);
    QCOMPARE(image.width(), 280);
    // Bars are filled at mid-height of their slot: bin 0 and bin 7 have ink, an empty bin has none there.
    const double slot = (280.0 - 12) / counts.size();
    auto inkAt = [&](int bin, int y) { return qAlpha(image.pixel(static_cast<int>(6 + (bin + 0.5) * slot), y)) > 0; };
    const int lowY = image.height() - 34 - 3;  // just above the baseline
    QVERIFY(inkAt(0, lowY));
    QVERIFY(inkAt(7, lowY));
    QVERIFY(!inkAt(4, lowY));
    // Bin 0 (100) is twice as tall as bin 7 (50): at 3/4 of the tallest bar only bin 0 has ink.
    const int highY = image.height() - 34 - static_cast<int>((150 - 16 - 34) * 0.75);
    QVERIFY(inkAt(0, highY));
    QVERIFY(!inkAt(7, highY));
    QCOMPARE(kiln::errorHistogramBin(0.0), 0);
    QCOMPARE(kiln::errorHistogramBin(5e-4), 7);
    QCOMPARE(kiln::errorHistogramBin(1e9), kiln::kErrorHistogramBins - 1);
    QCOMPARE(kiln::errorHistogramLowerEdge(7), 1e-4);
  }

  void clickedNodeShowsErrorStatisticsAndHistogram() {
    kiln::studio::GraphPanel panel;
    panel.resize(1000, 700);
    panel.show();
    QSignalSpy ready(&panel, &kiln::studio::GraphPanel::layoutReady);
    panel.openModel(QStringLiteral(KILN_TEST_MODELS_DIR "/tiny_cnn.onnx"));
    QVERIFY(ready.wait(90000));
    int node = -1;
    for (int i = 0; i < panel.document()->nodes().size() && node < 0; ++i) {
      const auto& n = panel.document()->nodes()[i];
      if (n.kind == kiln::bridge::GraphNode::Kind::Op && !n.name.isEmpty() && !n.folded) node = i;
    }
    QVERIFY(node >= 0);
    NodeMetrics data = metrics({{panel.document()->nodes()[node].name, 2.5e-4}}, QStringLiteral("max_abs_error"));
    data.kind = QStringLiteral("compare");
    data.nodes[0].metrics.insert(QStringLiteral("mean_abs_error"), 1e-5);
    data.nodes[0].errorHistogram = QVector<qint64>(kiln::kErrorHistogramBins, 0);
    data.nodes[0].errorHistogram[0] = 30;
    data.nodes[0].errorHistogram[7] = 12;
    NodeOverlay overlay;
    overlay.setData(data, QStringLiteral("max_abs_error"));
    QCOMPARE(overlay.kind(), QStringLiteral("compare"));
    const auto* row = overlay.row(panel.document()->nodes()[node].name);
    QVERIFY(row);
    QCOMPARE(row->errorHistogram, data.nodes[0].errorHistogram);
    QVERIFY(!overlay.row(QStringLiteral("nope")));

    panel.selectNode(node);
    auto* details = panel.detailsView();
    details->appendNodeMetrics(*row, overlay.kind());
    QVERIFY(details->showsHistogram());
    const QString text = details->text();
    QVERIFY2(text.contains(QStringLiteral("Error against the reference")), qPrintable(text));
    QVERIFY(text.contains(QStringLiteral("max_abs_error")) && text.contains(QStringLiteral("0.00025")));
    QVERIFY(text.contains(QStringLiteral("Histogram of |difference| over 42 values")));
    QVERIFY(text.indexOf(QStringLiteral("Error against")) < text.indexOf(QStringLiteral("Inputs")));  // near the top
    // The chart takes its own room: the line that holds it is as tall as the image, and the text after it starts
    // below it (laid out before the image was known, the line was one text line high and the chart covered the
    // rows below it).
    panel.detailsView()->resize(320, 600);
    QApplication::processEvents();
    auto* browser = details->findChild<QTextBrowser*>();
    QVERIFY(browser);
    const QTextDocument* document = browser->document();
    QTextBlock chart;
    for (QTextBlock b = document->begin(); b.isValid() && !chart.isValid(); b = b.next()) {
      for (auto f = b.begin(); !f.atEnd(); ++f) {
        if (f.fragment().charFormat().isImageFormat()) chart = b;
      }
    }
    QVERIFY(chart.isValid());
    const QRectF chartBox = document->documentLayout()->blockBoundingRect(chart);
    QVERIFY2(chartBox.height() >= 150, qPrintable(QString::number(chartBox.height())));
    QVERIFY(chart.next().isValid());
    QVERIFY(document->documentLayout()->blockBoundingRect(chart.next()).top() >= chartBox.bottom() - 0.5);
    kiln::testing::saveScreenshot(details, QStringLiteral("node-error-histogram.png"));
    // Data without a histogram (an older file) still shows the statistics, and says why there is no chart.
    NodeMetricRow old = *row;
    old.errorHistogram.clear();
    panel.selectNode(node);
    details->appendNodeMetrics(old, QStringLiteral("compare"));
    QVERIFY(!details->showsHistogram());
    QVERIFY(details->text().contains(QStringLiteral("No histogram in this data")));
    // Selecting another node drops the numbers.
    panel.selectNode(node);
    QVERIFY(!details->text().contains(QStringLiteral("Error against the reference")));
  }
};

QTEST_MAIN(TestNodeOverlay)
#include "tst_node_overlay.moc"
