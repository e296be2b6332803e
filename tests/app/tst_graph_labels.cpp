// Labels stay readable at any size (issue 22): a node shows its name and op type when both fit whole, the op type
// alone when the name does not, nothing once no text would be legible; a label is never cut. Partition captions
// are drawn whole (the layout reserves their width), on screen and in the PNG export.
#include <QFontMetricsF>
#include <QImage>
#include <QLabel>
#include <QProcess>
#include <QSplitter>
#include <QTextBlock>
#include <QTextBrowser>
#include <QTextDocument>
#include <QTextLayout>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QtTest>

#include "graph_layout.h"
#include "graph_panel.h"
#include "graph_panel_waits.h"
#include "graph_view.h"
#include "node_details_view.h"
#include "studio_test_files.h"

#include <functional>

using kiln::bridge::GraphNode;
using kiln::studio::GraphNodeItem;
using kiln::studio::GraphPanel;

namespace {

GraphNode opNode(const QString& name, const QString& opType) {
  GraphNode node;
  node.name = name;
  node.opType = opType;
  node.label = QStringLiteral("'%1' (%2)").arg(name, opType);
  return node;
}

// Every label the item draws at `lod` fits its box whole.
void verifyWhole(const GraphNodeItem& item, double lod) {
  for (const auto& label : item.labelsAt(lod)) {
    QVERIFY2(label.text == item.title() || label.text == item.subtitle() || label.text == QStringLiteral("output"),
             qPrintable(label.text));
    QVERIFY2(QFontMetricsF(label.font).horizontalAdvance(label.text) <= label.rect.width(),
             qPrintable(QStringLiteral("%1 at %2").arg(label.text).arg(lod)));
    // Legible on screen: at least 6.5 pixels.
    QVERIFY2(QFontMetricsF(label.font).height() * lod >= 6.5 || label.font.pixelSize() * lod >= 6.5,
             qPrintable(QStringLiteral("%1 too small at %2").arg(label.text).arg(lod)));
  }
}

}  // namespace

class TestGraphLabels : public QObject {
  Q_OBJECT

 private slots:
  void nameAndOpTypeWhenBothFit() {
    const GraphNodeItem item(opNode(QStringLiteral("conv1"), QStringLiteral("Conv")), 0, QRectF(0, 0, 100, 36));
    const auto labels = item.labelsAt(1.0);
    QCOMPARE(labels.size(), 2);
    QCOMPARE(labels[0].text, QStringLiteral("Conv"));
    QCOMPARE(labels[1].text, QStringLiteral("conv1"));
    verifyWhole(item, 1.0);
  }

  void opTypeWhenTheNameDoesNotFit() {
    const QString longName = QStringLiteral("backbone/stage4/block12/attention/output/dense/MatMul_quantized_1234");
    const GraphNodeItem item(opNode(longName, QStringLiteral("MatMul")), 0, QRectF(0, 0, 200, 36));
    const auto labels = item.labelsAt(1.0);
    QCOMPARE(labels.size(), 1);
    QCOMPARE(labels[0].text, QStringLiteral("MatMul"));
    verifyWhole(item, 1.0);
  }

  void graphOutputWithALongNameSaysWhatItIs() {
    GraphNode node;
    node.kind = GraphNode::Kind::GraphOutput;
    node.name = node.label = QStringLiteral("If_0_else_branch__Inline_0__/decoder/rnn/LSTM_output_0_reshaped");
    node.opType = QStringLiteral("output");
    const GraphNodeItem item(node, 0, QRectF(0, 0, 200, 25));
    const auto labels = item.labelsAt(1.0);
    QCOMPARE(labels.size(), 1);
    QCOMPARE(labels[0].text, QStringLiteral("output"));
  }

  void zoomedOutKeepsTheOpTypeLegible() {
    const GraphNodeItem item(opNode(QStringLiteral("conv1"), QStringLiteral("Conv")), 0, QRectF(0, 0, 100, 36));
    for (double lod : {0.9, 0.6, 0.5, 0.45, 0.4, 0.36}) {
      const auto labels = item.labelsAt(lod);
      QVERIFY2(!labels.isEmpty(), qPrintable(QString::number(lod)));
      QCOMPARE(labels.last().text.contains(QStringLiteral("Conv")) || labels.first().text == QStringLiteral("Conv"), true);
      verifyWhole(item, lod);
    }
    // Far out no text would be legible: none is drawn (the box is a colored block).
    QVERIFY(item.labelsAt(0.1).isEmpty());
  }

  void nothingIsEverCut_data() {
    QTest::addColumn<QString>("name");
    QTest::addColumn<QString>("opType");
    QTest::addColumn<double>("width");
    QTest::newRow("short") << QStringLiteral("a") << QStringLiteral("Add") << 72.0;
    QTest::newRow("long op") << QStringLiteral("q") << QStringLiteral("DynamicQuantizeLinear") << 72.0;
    QTest::newRow("long name") << QStringLiteral("VulkanExecutionProviderPartitionNode_17") << QStringLiteral("Conv") << 120.0;
  }
  void nothingIsEverCut() {
    QFETCH(QString, name);
    QFETCH(QString, opType);
    QFETCH(double, width);
    const GraphNodeItem item(opNode(name, opType), 0, QRectF(0, 0, width, 36));
    for (double lod = 0.05; lod < 4; lod *= 1.3) verifyWhole(item, lod);
  }

  void partitionCaptionText() {
    kiln::bridge::GraphCluster cluster;
    cluster.name = QStringLiteral("vulkan_partition_with_a_long_name_12");
    cluster.executionProvider = QStringLiteral("VulkanExecutionProvider");
    cluster.nodes = {0, 1, 2};
    QCOMPARE(cluster.caption(), QStringLiteral("vulkan_partition_with_a_long_name_12 \u00b7 Vulkan (3 nodes)"));
    cluster.nodes = {0};
    QCOMPARE(cluster.nodeCountText(), QStringLiteral("1 node"));
  }

  void captionsFitTheirBoxesOnScreenAndInPng() {
    GraphPanel panel;
    panel.resize(1200, 800);
    QSignalSpy ready(&panel, &GraphPanel::layoutReady);
    panel.openModel(QStringLiteral(KILN_PARTITION_SAMPLE));
    QVERIFY(ready.wait(60000));
    int checked = 0;
    for (int c = 0; c < panel.document()->clusters().size(); ++c) {
      auto* item = panel.view()->clusterItem(c);
      if (!item || item->isCollapsed()) continue;
      QFont font;
      font.setPointSizeF(9);
      font.setBold(true);
      const double captionWidth = QFontMetricsF(font).horizontalAdvance(panel.document()->clusters()[c].caption());
      QVERIFY2(captionWidth + 16 <= item->boundingRect().width(),
               qPrintable(QStringLiteral("%1: caption %2 wider than box %3").arg(panel.document()->clusters()[c].caption()).arg(captionWidth).arg(item->boundingRect().width())));
      ++checked;
    }
    QVERIFY(checked > 0);
    // The DOT label reserves one wide character per caption character (it used to be 12, so longer names were cut).
    const QByteArray dot = kiln::bridge::GraphLayout::toDot(panel.document()->visibleGraph({}), *panel.document());
    for (const auto& cluster : panel.document()->clusters()) {
      QVERIFY(dot.contains("label=\"" + QByteArray(cluster.caption().size(), 'X') + "\""));
    }
    QTemporaryDir dir;
    QString error;
    QVERIFY2(panel.exportPng(dir.filePath(QStringLiteral("g.png")), &error), qPrintable(error));
    QVERIFY(!QImage(dir.filePath(QStringLiteral("g.png"))).isNull());
  }

  // The legend wraps in a narrow panel (beside the compiled graph) instead of cutting its chips.
  void legendChipsWrapWhole() {
    GraphPanel panel;
    panel.resize(320, 500);
    panel.show();
    QSignalSpy ready(&panel, &GraphPanel::layoutReady);
    panel.openModel(QStringLiteral(KILN_PARTITION_SAMPLE));
    QVERIFY(ready.wait(60000));
    auto* legend = panel.findChild<QWidget*>(QStringLiteral("graphLegend"));
    QVERIFY(legend);
    const auto chips = legend->findChildren<QLabel*>();
    QVERIFY(chips.size() >= 3);
    int lines = 0, lastY = -1;
    for (const QLabel* chip : chips) {
      QVERIFY2(chip->geometry().right() < legend->width(), qPrintable(chip->text()));
      QVERIFY2(chip->width() >= chip->sizeHint().width(), qPrintable(chip->text()));
      if (chip->y() != lastY) ++lines;
      lastY = chip->y();
    }
    QVERIFY2(lines > 1, "at 320 px the chips take more than one line");
    QVERIFY(panel.minimumSizeHint().width() < 320);
  }

  // A node whose values have exporter-length names keeps its types readable in a narrow details pane (issue 33: at
  // 260 px the names took the width and the types wrapped one character per line): no laid-out line but the last
  // of its paragraph holds fewer than three characters.
  void detailsKeepTypesReadableInANarrowPane() {
    QTemporaryDir dir;
    const QString path = dir.filePath(QStringLiteral("long_names.onnx"));
    QProcess python;
    python.start(QStringLiteral("/usr/bin/python3"), {QStringLiteral("-c"), QStringLiteral(R"(
import sys, onnx
from onnx import helper, TensorProto
a = '/backbone/stage1/block0/conv/Conv_output_0'
b = '/backbone/stage1/block0/act/Relu_output_0'
g = helper.make_graph([helper.make_node('Relu', [a], [b], name='/backbone/stage1/block0/act/Relu')], 'g',
                      [helper.make_tensor_value_info(a, TensorProto.FLOAT, [1, 64, 160, 160])],
                      [helper.make_tensor_value_info(b, TensorProto.FLOAT, [1, 64, 160, 160])])
onnx.save(helper.make_model(g, opset_imports=[helper.make_opsetid('', 13)]), sys.argv[1])
)"), path});
    QVERIFY(python.waitForFinished(60000));
    QVERIFY2(python.exitCode() == 0, python.readAllStandardError().constData());
    GraphPanel panel;
    panel.resize(900, 600);
    panel.show();
    QVERIFY(kiln::testing::openAndWait(panel, path));
    auto* splitter = panel.findChild<QSplitter*>();
    QVERIFY(splitter);
    splitter->setSizes({640, 260});
    const int relu = [&] {
      for (int i = 0; i < panel.document()->nodes().size(); ++i) {
        if (panel.document()->nodes()[i].opType == QLatin1String("Relu")) return i;
      }
      return -1;
    }();
    QVERIFY(relu >= 0);
    panel.selectNode(relu);
    QCoreApplication::processEvents();
    auto* browser = panel.detailsView()->findChild<QTextBrowser*>();
    QVERIFY(browser);
    QVERIFY2(browser->width() <= 270, qPrintable(QString::number(browser->width())));
    QTextDocument* document = browser->document();
    document->setTextWidth(browser->viewport()->width());
    QVERIFY(panel.detailsView()->text().contains(QStringLiteral("float32[1,64,160,160]")));
    for (QTextBlock block = document->begin(); block.isValid(); block = block.next()) {
      QTextLayout* layout = block.layout();
      for (int i = 0; layout && i + 1 < layout->lineCount(); ++i) {
        QVERIFY2(layout->lineAt(i).textLength() >= 3,
                 qPrintable(QStringLiteral("'%1' wraps after %2 characters").arg(block.text()).arg(layout->lineAt(i).textLength())));
      }
    }
    kiln::testing::saveScreenshot(&panel, QStringLiteral("details_narrow_pane.png"));
  }

  // Every legend swatch shows the look it explains (issue 33: the CPU-fallback and EPContext swatches were blank,
  // their borders lost in rich text): the fallback swatch has the dashed red border's pixels, the EPContext one the
  // hexagon's dark border, each EP chip its EP's fill.
  void legendSwatchesShowTheirLooks() {
    GraphPanel panel;
    panel.resize(900, 600);
    panel.show();
    QVERIFY(kiln::testing::openAndWait(panel, QStringLiteral(KILN_PARTITION_SAMPLE)));
    auto* legend = panel.findChild<QWidget*>(QStringLiteral("graphLegend"));
    QVERIFY(legend);
    const auto chips = legend->findChildren<QLabel*>(QStringLiteral("legendChip"));
    QVERIFY(chips.size() >= 3);
    // Pixels of the chip's swatch (its left kSwatchWidth pixels) for which `match` holds.
    auto count = [](QLabel* chip, const std::function<bool(const QColor&)>& match) {
      const QImage image = chip->grab().toImage();
      int found = 0;
      for (int y = 0; y < image.height(); ++y) {
        for (int x = 0; x < std::min(image.width(), 26); ++x) found += match(image.pixelColor(x, y)) ? 1 : 0;
      }
      return found;
    };
    int checked = 0;
    for (QLabel* chip : chips) {
      const auto look = static_cast<kiln::studio::NodeLook>(chip->property("look").toInt());
      if (look == kiln::studio::NodeLook::CPU_FALLBACK) {
        const int red = count(chip, [](const QColor& c) { return c.red() > 150 && c.green() < 100 && c.blue() < 100; });
        QVERIFY2(red >= 12, qPrintable(QStringLiteral("%1: %2 red pixels").arg(chip->text()).arg(red)));
        ++checked;
      } else if (look == kiln::studio::NodeLook::EP_CONTEXT) {
        const int dark = count(chip, [](const QColor& c) { return c.red() < 80 && c.green() < 80 && c.blue() < 80; });
        QVERIFY2(dark >= 20, qPrintable(QStringLiteral("%1: %2 dark pixels").arg(chip->text()).arg(dark)));
        ++checked;
      } else if (look == kiln::studio::NodeLook::FILLED) {
        QColor fill;
        for (const QString& ep : {QStringLiteral("VulkanExecutionProvider"), QStringLiteral("CPUExecutionProvider")}) {
          if (chip->text() == kiln::bridge::epShortName(ep)) fill = kiln::studio::epQColor(ep);
        }
        if (!fill.isValid()) continue;
        const int filled = count(chip, [&](const QColor& c) {
          return std::abs(c.red() - fill.red()) + std::abs(c.green() - fill.green()) + std::abs(c.blue() - fill.blue()) < 24;
        });
        QVERIFY2(filled >= 40, qPrintable(QStringLiteral("%1: %2 pixels of its EP's colour").arg(chip->text()).arg(filled)));
        ++checked;
      }
    }
    QVERIFY2(checked >= 3, "the fallback, EPContext and at least one EP chip were checked");
    kiln::testing::saveScreenshot(legend, QStringLiteral("graph_legend.png"));
  }
};

QTEST_MAIN(TestGraphLabels)
#include "tst_graph_labels.moc"
