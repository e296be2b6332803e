// Tensor shapes on edges and concrete shapes from given input shapes (issue 22): View ▸ Tensor Shapes on Edges
// (Ctrl+E) draws each edge's dtype and shape, only where legible; "x=1x3x64x64" in the graph panel's Input shapes
// re-runs the engine's shape inference, and edges, node details and the Nodes table then show exactly the dims
// kiln::inspectModel infers with that shape. Bad input (not a number, unknown input, wrong rank) changes nothing.
#include <QAbstractItemModel>
#include <QAction>
#include <QImage>
#include <QLabel>
#include <QLineEdit>
#include <QPainter>
#include <QProcess>
#include <QSignalSpy>
#include <QSet>
#include <QTableView>
#include <QTemporaryDir>
#include <QtTest>

#include "graph_panel.h"
#include "graph_view.h"
#include "input_shapes_text.h"
#include "kiln/model_info.h"
#include "main_window.h"
#include "node_details_view.h"
#include "shape_syntax.h"
#include "value_format.h"

using kiln::studio::GraphEdgeItem;
using kiln::studio::GraphPanel;
using kiln::studio::GraphView;

namespace {

// x[N,3,H,W] -> Conv(8 filters, 3x3, stride 2, pad 1) -> Relu -> y: every dimension but the channels is open.
constexpr const char* kMakeModel = R"PY(
import sys
import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper
w = numpy_helper.from_array(np.ones((8, 3, 3, 3), np.float32), "w")
nodes = [helper.make_node("Conv", ["x", "w"], ["conv_out"], name="conv", strides=[2, 2], pads=[1, 1, 1, 1]),
         helper.make_node("Relu", ["conv_out"], ["y"], name="relu")]
graph = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["N", 3, "H", "W"])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)], [w])
model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
model.ir_version = 8
onnx.save(model, sys.argv[1])
)PY";

QSet<QString> edgeTexts(const GraphView& view, bool drawnOnly) {
  QSet<QString> texts;
  for (QGraphicsItem* item : view.edgeItems()) {
    const auto* edge = static_cast<const GraphEdgeItem*>(item);
    if (!drawnOnly || edge->isTensorTextShown()) texts.insert(edge->tensorText());
  }
  return texts;
}

// The value's dtype and shape as the engine infers them for `shapes`.
QString engineType(const QString& model, const kiln::bridge::InputShapes& shapes, const std::string& value) {
  const kiln::Result<kiln::ModelInfo> info = kiln::inspectModel(model.toStdString(), shapes);
  if (!info.isOk()) return QString::fromStdString(info.status().toString());
  const auto it = info.value().values.find(value);
  return it == info.value().values.end() ? QStringLiteral("(none)") : kiln::bridge::formatValueType(it->second);
}

}  // namespace

class TestEdgeShapes : public QObject {
  Q_OBJECT

 private slots:
  void initTestCase() {
    QVERIFY(dir_.isValid());
    model_ = dir_.filePath(QStringLiteral("open_dims.onnx"));
    QProcess python;
    python.start(QStringLiteral("/usr/bin/python3"), {QStringLiteral("-c"), QString::fromLatin1(kMakeModel), model_});
    QVERIFY2(python.waitForFinished(60000) && python.exitCode() == 0, python.readAllStandardError().constData());
    panel_.resize(1000, 700);
    panel_.show();
    QSignalSpy ready(&panel_, &GraphPanel::layoutReady);
    panel_.openModel(model_);
    QVERIFY(ready.wait(60000));
  }

  // The studio's shape field takes exactly what kiln's --shape takes (one parser, app/common's shape_syntax.h): every
  // text here gets the same answer from both, so a second parser with its own syntax fails this test.
  void parsesInputShapes() {
    const auto one = kiln::bridge::parseInputShapes(QStringLiteral("x=1x3x640x640"));
    QVERIFY(one.isOk());
    QCOMPARE(one.value().at("x"), (std::vector<int64_t>{1, 3, 640, 640}));
    const auto two = kiln::bridge::parseInputShapes(QStringLiteral(" x=1x3x64x64; mask=2x5 "));
    QVERIFY(two.isOk());
    QCOMPARE(two.value().size(), size_t{2});
    QCOMPARE(two.value().at("mask"), (std::vector<int64_t>{2, 5}));
    QVERIFY(kiln::bridge::parseInputShapes(QString()).value().empty());
    for (const char* text : {"x=1x3x640x640", "x=1x3x64x64, mask=1x10", "a=1;b=2", "x=", "x=1,3,640,640", "x=1x3xax64",
                             "x=1x-3", "x 1x3", "=1x3", "x=?x3x?x?", "x=99999999999999999999"}) {
      const auto studio = kiln::bridge::parseInputShapes(QString::fromLatin1(text));
      const auto cli = kiln::app::parseNamedShapeList(text);
      QVERIFY2(studio.isOk() == cli.isOk(), text);
      if (!cli.isOk()) continue;
      QCOMPARE(studio.value().size(), cli.value().size());
      for (const auto& [name, dims] : cli.value()) QCOMPARE(studio.value().at(name), dims);
    }
    const auto twice = kiln::bridge::parseInputShapes(QStringLiteral("x=1;x=2"));
    QVERIFY(!twice.isOk());
    QVERIFY2(twice.status().message().find("given twice") != std::string::npos, twice.status().message().c_str());
  }

  void declaredShapesPrefillTheField() {
    auto* edit = panel_.findChild<QLineEdit*>(QStringLiteral("inputShapesEdit"));
    QVERIFY(edit);
    QVERIFY(edit->isVisible());  // the model leaves dimensions open
    QCOMPARE(edit->text(), QStringLiteral("x=?x3x?x?"));
  }

  void toggleDrawsEachEdgesTensor() {
    GraphView* view = panel_.view();
    QVERIFY(!view->tensorShapesShown());
    QVERIFY(edgeTexts(*view, true).isEmpty());
    view->setTensorShapesShown(true);
    // Each edge's text is its value's dtype and shape as the model (shape inference included) gives it.
    const QSet<QString> expected = {engineType(model_, {}, "x"), engineType(model_, {}, "conv_out"),
                                    engineType(model_, {}, "y")};
    QCOMPARE(edgeTexts(*view, true), expected);
    QVERIFY(expected.contains(QStringLiteral("float32[N,3,H,W]")));
    // Drawn: a rendering with the texts differs from one without.
    view->resetTransform();
    auto render = [view] {
      QImage image(view->viewport()->size(), QImage::Format_RGB32);
      image.fill(Qt::white);
      QPainter painter(&image);
      view->render(&painter, QRectF(image.rect()), view->viewport()->rect());
      return image;
    };
    const QImage with = render();
    view->setTensorShapesShown(false);
    QVERIFY(edgeTexts(*view, true).isEmpty());
    QVERIFY(render() != with);
    // Level of detail: legible at 1:1, left out far out.
    QVERIFY(GraphEdgeItem::tensorTextLegibleAt(1.0));
    QVERIFY(!GraphEdgeItem::tensorTextLegibleAt(0.3));
  }

  void textsKeepOffNodesCaptionsAndEachOther() {
    // A straight edge whose middle is taken: its text moves along it.
    GraphEdgeItem edge({QPointF(0, 0), QPointF(0, 300)}, QPointF(), 1, QStringLiteral("float32[1,8,32,32]"));
    const QRectF taken(-400, 130, 800, 40);
    kiln::studio::LabelSpace space;
    space.occupy(taken, 1);
    auto place = [&space](const QVector<QPointF>& anchors, const QSizeF& size, bool* covers) {
      return space.place(anchors, size, 1, covers);
    };
    edge.placeTensorText(place);
    QVERIFY(!edge.tensorTextRect().isEmpty());
    QVERIFY(!edge.tensorTextRect().intersects(taken));
    // An edge with no free spot anywhere along it: its text is left out, never drawn over another (issue 33 item 6;
    // it used to be drawn above what it covered).
    GraphEdgeItem crowded({QPointF(0, 0), QPointF(0, 300)}, QPointF(), 1, QStringLiteral("float32[1,8,32,32]"));
    space.occupy(QRectF(-1000, -100, 2000, 500), 1);
    crowded.placeTensorText(place);
    QVERIFY(crowded.tensorTextRect().isEmpty());
    // In the view: a text lies over no node and no other text.
    GraphView* view = panel_.view();
    view->setTensorShapesShown(true);
    QVector<QRectF> placed;
    for (QGraphicsItem* item : view->edgeItems()) {
      const auto* e = static_cast<const GraphEdgeItem*>(item);
      if (!e->isTensorTextShown() || e->tensorTextRect().isEmpty()) continue;
      for (const auto* node : view->nodeItems()) {
        const QRectF box = node->sceneBoundingRect().adjusted(3, 3, -3, -3);  // less the selection margin
        QVERIFY2(!box.intersects(e->tensorTextRect()), qPrintable(e->tensorText()));
      }
      for (const QRectF& other : placed) QVERIFY(!other.intersects(e->tensorTextRect()));
      placed.push_back(e->tensorTextRect());
    }
    QVERIFY(!placed.isEmpty());
    view->setTensorShapesShown(false);
  }

  void concreteShapesFromInputShapes() {
    GraphView* view = panel_.view();
    view->setTensorShapesShown(true);
    QSignalSpy applied(&panel_, &GraphPanel::inputShapesApplied);
    QSignalSpy ready(&panel_, &GraphPanel::layoutReady);
    QVERIFY(panel_.applyInputShapes(QStringLiteral("x=1x3x64x64")));
    QVERIFY(applied.wait(60000));
    if (ready.isEmpty()) QVERIFY(ready.wait(60000));
    const kiln::bridge::InputShapes shapes{{"x", {1, 3, 64, 64}}};
    QCOMPARE(engineType(model_, shapes, "conv_out"), QStringLiteral("float32[1,8,32,32]"));
    const QSet<QString> expected = {engineType(model_, shapes, "x"), engineType(model_, shapes, "conv_out"),
                                    engineType(model_, shapes, "y")};
    QCOMPARE(edgeTexts(*view, true), expected);  // the toggle stays on across the re-layout
    // Node details of the Conv show the concrete output shape too.
    for (int i = 0; i < panel_.document()->nodes().size(); ++i) {
      if (panel_.document()->nodes()[i].name == QLatin1String("conv")) panel_.selectNode(i);
    }
    QVERIFY(panel_.detailsView()->text().contains(QStringLiteral("1,8,32,32")));
  }

  void badInputChangesNothing_data() {
    QTest::addColumn<QString>("text");
    QTest::addColumn<QString>("message");
    QTest::newRow("not a number") << QStringLiteral("x=1x3xax64") << QStringLiteral("'a' is not a non-negative integer");
    QTest::newRow("unknown input") << QStringLiteral("image=1x3x64x64") << QStringLiteral("not a model input");
    QTest::newRow("wrong rank") << QStringLiteral("x=1x3x64") << QStringLiteral("rank");
    QTest::newRow("fixed dim differs") << QStringLiteral("x=1x4x64x64") << QStringLiteral("fixed dimension");
  }
  void badInputChangesNothing() {
    QFETCH(QString, text);
    QFETCH(QString, message);
    const auto before = panel_.rootDocument();
    const auto shapesBefore = panel_.inputShapes();
    const QSet<QString> edgesBefore = edgeTexts(*panel_.view(), false);
    QSignalSpy rejected(&panel_, &GraphPanel::inputShapesRejected);
    QSignalSpy applied(&panel_, &GraphPanel::inputShapesApplied);
    if (panel_.applyInputShapes(text)) QVERIFY(rejected.wait(60000));
    QCOMPARE(rejected.size(), 1);
    const QString said = rejected.first().first().toString();
    QVERIFY2(said.contains(message), qPrintable(said));
    auto* label = panel_.findChild<QLabel*>(QStringLiteral("inputShapesMessage"));
    QVERIFY(label && label->text().contains(message));
    QCOMPARE(applied.size(), 0);
    QCOMPARE(panel_.rootDocument(), before);
    QCOMPARE(panel_.inputShapes(), shapesBefore);
    QCOMPARE(edgeTexts(*panel_.view(), false), edgesBefore);
    QVERIFY(!panel_.isBusy());
  }

  void viewMenuToggleAndNodesTable() {
    kiln::studio::MainWindow window;
    auto* action = window.findChild<QAction*>(QStringLiteral("tensorShapesAction"));
    QVERIFY(action && action->isCheckable());
    QCOMPARE(action->shortcut(), QKeySequence(Qt::CTRL | Qt::Key_E));
    action->trigger();
    QVERIFY(window.graphPanel()->view()->tensorShapesShown());
    QVERIFY(window.compiledGraphPanel()->view()->tensorShapesShown());
    QSignalSpy ready(window.graphPanel(), &GraphPanel::layoutReady);
    window.openModel(model_);
    QVERIFY(ready.wait(60000));
    QSignalSpy applied(window.graphPanel(), &GraphPanel::inputShapesApplied);
    QVERIFY(window.graphPanel()->applyInputShapes(QStringLiteral("x=2x3x16x16")));
    QVERIFY(applied.wait(60000));
    // The Nodes table lists the Conv's output with the concrete shape.
    auto tableShows = [&window](const QString& text) {
      for (QTableView* table : window.findChildren<QTableView*>()) {
        const QAbstractItemModel* model = table->model();
        for (int row = 0; model && row < model->rowCount(); ++row) {
          for (int column = 0; column < model->columnCount(); ++column) {
            if (model->index(row, column).data().toString().contains(text)) return true;
          }
        }
      }
      return false;
    };
    QVERIFY(tableShows(QStringLiteral("[2,8,8,8]")));
    action->trigger();
    QVERIFY(!window.graphPanel()->view()->tensorShapesShown());
  }

 private:
  QTemporaryDir dir_;
  QString model_;
  GraphPanel panel_;
};

QTEST_MAIN(TestEdgeShapes)
#include "tst_edge_shapes.moc"
