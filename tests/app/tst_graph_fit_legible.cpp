// Fit keeps labels legible (issue 22, bar: "on PP-OCRv4 det at Fit every visible node's label is legible or
// replaced by its op type"): on a tall graph Fit never zooms out below GraphView::readableZoom(), where a node's
// op-type label is GraphView::kFitLabelPx on screen; every node in the visible rect draws a label at least that
// big; the graph's top (its input) is in view. Ctrl+0 and the Fit button do the same, - still zooms out further,
// and a resize keeps the fit.
#include <QFileInfo>
#include <QFontMetricsF>
#include <QProcess>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QToolButton>
#include <QtTest>

#include "big_graph_model.h"
#include "graph_panel.h"
#include "graph_panel_waits.h"
#include "requirements.h"
#include "graph_view.h"

using kiln::bridge::GraphNode;
using kiln::studio::GraphNodeItem;
using kiln::studio::GraphPanel;
using kiln::studio::GraphView;

namespace {

QRectF visibleRect(const GraphView& view) { return view.mapToScene(view.viewport()->rect()).boundingRect(); }

// Every node item inside the view draws a label of at least kFitLabelPx on screen (its op type, its name, or for a
// graph input/output "input"/"output"); returns how many were checked.
int verifyVisibleLabelsLegible(const GraphView& view) {
  const double zoom = view.zoom();
  const QRectF visible = visibleRect(view);
  int checked = 0;
  for (const GraphNodeItem* item : view.nodeItems()) {
    if (!visible.intersects(item->sceneBoundingRect())) continue;
    ++checked;
    const auto labels = item->labelsAt(zoom);
    if (labels.isEmpty()) {
      qWarning("node %d ('%s') draws no label at %g", item->nodeIndex(), qPrintable(item->title()), zoom);
      return -1;
    }
    for (const auto& label : labels) {
      const bool known = label.text == item->title() || label.text == item->subtitle() ||
                         label.text == QLatin1String("input") || label.text == QLatin1String("output");
      const double onScreen = label.font.pixelSize() * zoom;
      if (!known || onScreen < GraphView::kFitLabelPx - 1e-6 ||
          QFontMetricsF(label.font).horizontalAdvance(label.text) > label.rect.width()) {
        qWarning("label '%s' of node %d: %g px on screen", qPrintable(label.text), item->nodeIndex(), onScreen);
        return -1;
      }
    }
  }
  return checked;
}

// The node drawn highest (the graph's first input).
const GraphNodeItem* topNode(const GraphView& view) {
  const GraphNodeItem* top = nullptr;
  for (const GraphNodeItem* item : view.nodeItems()) {
    if (!top || item->sceneBoundingRect().top() < top->sceneBoundingRect().top()) top = item;
  }
  return top;
}

}  // namespace

class TestGraphFitLegible : public QObject {
  Q_OBJECT

 private slots:
  void initTestCase() {
    QVERIFY(dir_.isValid());
    QString error;
    const QString model = kiln::testing::makeBigGraphModel(dir_.path(), QStringLiteral("tall.onnx"), 400, &error);
    QVERIFY2(!model.isEmpty(), qPrintable(error));
    panel_.resize(1000, 700);
    panel_.show();
    QVERIFY(kiln::testing::openAndWait(panel_, model, 120000));
    QVERIFY(panel_.view()->nodeItems().size() > 300);
  }

  void openedAtFitLabelsAreLegible() {
    GraphView* view = panel_.view();
    // The whole tall graph would need a scale far below the legible one: Fit stops there.
    QVERIFY(view->zoom() >= GraphView::readableZoom() - 1e-9);
    QVERIFY(!visibleRect(*view).contains(view->sceneRect()));
    const int checked = verifyVisibleLabelsLegible(*view);
    QVERIFY2(checked >= 5, qPrintable(QString::number(checked)));
    // The first node (the graph input) is in view: the graph is read from its top.
    QVERIFY(visibleRect(*view).contains(topNode(*view)->sceneBoundingRect()));
    QVERIFY(view->minimap()->isVisible());  // the rest is a click away
  }

  void ctrlZeroAndFitButtonKeepLabelsLegible() {
    GraphView* view = panel_.view();
    view->fitAll();  // the whole graph: too small to read
    QVERIFY(view->zoom() < GraphView::readableZoom());
    QVERIFY(verifyVisibleLabelsLegible(*view) < 0);
    QTest::keyClick(view, Qt::Key_0, Qt::ControlModifier);
    QVERIFY(qAbs(view->zoom() - GraphView::readableZoom()) < 1e-9);
    QVERIFY(verifyVisibleLabelsLegible(*view) >= 5);
    const QPointF center = visibleRect(*view).center();
    view->fitAll();
    QToolButton* fit = nullptr;
    for (QToolButton* button : panel_.findChildren<QToolButton*>()) {
      if (button->text() == QLatin1String("Fit")) fit = button;
    }
    QVERIFY(fit);
    fit->click();
    QVERIFY(qAbs(view->zoom() - GraphView::readableZoom()) < 1e-9);
    QVERIFY((visibleRect(*view).center() - center).manhattanLength() < 1);
  }

  void zoomOutStillGoesFurther() {
    GraphView* view = panel_.view();
    view->fitReadable();
    QTest::keyClick(view, Qt::Key_Minus);
    QVERIFY(view->zoom() < GraphView::readableZoom() * 0.9);
  }

  void resizeKeepsTheReadableFit() {
    GraphView* view = panel_.view();
    view->fitReadable();
    panel_.resize(900, 500);
    QCoreApplication::processEvents();
    QVERIFY(qAbs(view->zoom() - GraphView::readableZoom()) < 1e-9);
    QVERIFY(visibleRect(*view).contains(topNode(*view)->sceneBoundingRect()));
    QVERIFY(verifyVisibleLabelsLegible(*view) >= 3);
    panel_.resize(1000, 700);
  }

  void smallGraphFitsWhole() {
    // x -> Relu -> Sigmoid -> y: legible with room to spare when whole, so Fit shows all of it.
    const QString model = dir_.filePath(QStringLiteral("small.onnx"));
    QProcess python;
    python.start(QStringLiteral("/usr/bin/python3"),
                 {QStringLiteral("-c"),
                  QStringLiteral("import sys, onnx\nfrom onnx import TensorProto as T, helper as h\n"
                                 "g = h.make_graph([h.make_node('Relu', ['x'], ['r'], name='relu'),"
                                 " h.make_node('Sigmoid', ['r'], ['y'], name='sigmoid')], 'g',"
                                 " [h.make_tensor_value_info('x', T.FLOAT, [1, 4])],"
                                 " [h.make_tensor_value_info('y', T.FLOAT, [1, 4])])\n"
                                 "m = h.make_model(g, opset_imports=[h.make_opsetid('', 17)])\n"
                                 "m.ir_version = 8\nonnx.save(m, sys.argv[1])\n"),
                  model});
    QVERIFY2(python.waitForFinished(60000) && python.exitCode() == 0, python.readAllStandardError().constData());
    GraphPanel panel;
    panel.resize(1000, 700);
    panel.show();
    QVERIFY(kiln::testing::openAndWait(panel, model));
    QVERIFY(visibleRect(*panel.view()).contains(panel.view()->sceneRect().adjusted(1, 1, -1, -1)));
    QVERIFY(panel.view()->zoom() >= GraphView::readableZoom());
  }

  // The bar's model itself, from the model cache the setup_models fixture fills (tests/tools/fetch_models.sh); its
  // absence fails the test under KILN_REQUIRE_MODELS=1 (CI), as every real-model test does.
  void ppocrDetAtFit() {
    const QString model = QStringLiteral(KILN_TEST_MODEL_CACHE "/ch_PP-OCRv4_det_infer.onnx");
    if (!QFileInfo::exists(model)) {
      if (kiln::testing::modelsRequired()) QFAIL("PP-OCRv4 det is not in the model cache and KILN_REQUIRE_MODELS=1");
      QSKIP("PP-OCRv4 det is not in the model cache (tests/tools/fetch_models.sh)");
    }
    GraphPanel panel;
    panel.resize(1000, 700);
    panel.show();
    QVERIFY(kiln::testing::openAndWait(panel, model, 120000));
    for (const GraphNodeItem* item : panel.view()->nodeItems()) {
      const GraphNode& node = panel.document()->nodes()[item->nodeIndex()];
      QVERIFY2(node.opType != QLatin1String("Constant"), "a Constant drawn as a box");
    }
    QVERIFY(panel.view()->zoom() >= GraphView::readableZoom() - 1e-9);
    QVERIFY(verifyVisibleLabelsLegible(*panel.view()) >= 5);
  }

 private:
  QTemporaryDir dir_;
  GraphPanel panel_;
};

QTEST_MAIN(TestGraphFitLegible)
#include "tst_graph_fit_legible.moc"
