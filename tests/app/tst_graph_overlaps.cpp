// No text of the graph view covers another (issue 33 item 6): on real scene items, every node label, partition and
// group title, caption, transfer badge and tensor text drawn at Fit and at 100 %, pairwise, on screen; and no
// caption, badge or tensor text covers a node or a collapsed box not its own. Six kinds of model: a plain CNN, a
// model with partitions on two EPs, a compiled model with If bodies (every graph), a long chain (grouped, then all
// expanded), a U-Net (tests/tools/make_quant_unet.py; PP-OCRv4 det from the model cache as well) and compiled
// models with host↔device transfer badges; each also with tensor shapes on its edges.
#include <QFileInfo>
#include <QGraphicsItem>
#include <QGraphicsScene>
#include <QProcess>
#include <QTemporaryDir>
#include <QtTest>

#include "big_graph_model.h"
#include "graph_panel.h"
#include "graph_panel_waits.h"
#include "graph_view.h"
#include "if_model.h"
#include "kiln/compiler.h"
#include "requirements.h"
#include "studio_test_files.h"

using kiln::studio::GraphClusterItem;
using kiln::studio::GraphEdgeItem;
using kiln::studio::GraphNodeItem;
using kiln::studio::GraphPanel;
using kiln::studio::GraphView;
using kiln::testing::openAndWait;
using kiln::testing::waitForLayout;

namespace {

// One text the view draws, or one box texts must keep off, in viewport pixels.
struct Drawn {
  QRectF rect;
  QString what;
  const QGraphicsItem* item;
};

QString describe(const QGraphicsItem* item, const QString& text) {
  return QStringLiteral("'%1' (type %2 at %3,%4)")
      .arg(text)
      .arg(item->type() - QGraphicsItem::UserType)
      .arg(item->sceneBoundingRect().left(), 0, 'f', 0)
      .arg(item->sceneBoundingRect().top(), 0, 'f', 0);
}

// Where `sceneRect` of `item` is on screen (items ignoring the view's scale are mapped through their own transform).
QRectF onScreen(const GraphView& view, const QGraphicsItem* item, const QRectF& sceneRect) {
  if (item->flags() & QGraphicsItem::ItemIgnoresTransformations) {
    return item->deviceTransform(view.viewportTransform()).mapRect(item->boundingRect());
  }
  return view.viewportTransform().mapRect(sceneRect);
}

// Every text the view's items draw at its zoom, on screen.
QVector<Drawn> drawnTexts(const GraphView& view) {
  const double lod = view.zoom();
  QVector<Drawn> texts;
  for (const QGraphicsItem* item : view.scene()->items()) {
    if (!item->isVisible()) continue;
    if (item->type() == GraphNodeItem::Type) {
      for (const auto& label : static_cast<const GraphNodeItem*>(item)->labelsAt(lod)) {
        texts.push_back({onScreen(view, item, label.textRect()), describe(item, label.text), item});
      }
    } else if (item->type() == GraphClusterItem::Type) {
      for (const auto& label : static_cast<const GraphClusterItem*>(item)->labelsAt(lod)) {
        texts.push_back({onScreen(view, item, label.textRect()), describe(item, label.text), item});
      }
    } else if (item->type() == kiln::studio::kCaptionItemType) {
      if (kiln::studio::PartitionCaptionItem::drawnAt(lod)) {
        texts.push_back({onScreen(view, item, item->sceneBoundingRect()), describe(item, QStringLiteral("caption")),
                         item});
      }
    } else if (item->type() == kiln::studio::kTransferBadgeItemType) {
      const QString badge = item->toolTip().section(u'\n', 0, 0);
      texts.push_back({onScreen(view, item, item->sceneBoundingRect()), describe(item, badge), item});
    } else if (item->type() == GraphEdgeItem::Type) {
      const auto* edge = static_cast<const GraphEdgeItem*>(item);
      if (edge->isTensorTextShown() && GraphEdgeItem::tensorTextLegibleAt(lod)) {
        texts.push_back({onScreen(view, item, edge->tensorTextRect()), describe(item, edge->tensorText()), item});
      }
    }
  }
  return texts;
}

// Node boxes and collapsed partitions and groups, on screen.
QVector<Drawn> boxes(const GraphView& view) {
  QVector<Drawn> found;
  for (const QGraphicsItem* item : view.scene()->items()) {
    const bool collapsed = item->type() == GraphClusterItem::Type &&
                           static_cast<const GraphClusterItem*>(item)->isCollapsed();
    if (item->type() == GraphNodeItem::Type || collapsed) {
      // The drawn box, without the room boundingRect leaves for a selection frame.
      const QRectF box = item->sceneBoundingRect().adjusted(4, 4, -4, -4);
      found.push_back({onScreen(view, item, box), describe(item, {}), item});
    }
  }
  return found;
}

bool covers(const QRectF& a, const QRectF& b) {
  const QRectF overlap = a.intersected(b);
  return overlap.width() > 0.5 && overlap.height() > 0.5;  // touching or sub-pixel rounding is not covering
}

// The first overlap on screen at the view's zoom, or "" when none.
QString firstOverlap(const GraphView& view) {
  const QVector<Drawn> texts = drawnTexts(view);
  for (qsizetype i = 0; i < texts.size(); ++i) {
    for (qsizetype j = i + 1; j < texts.size(); ++j) {
      if (texts[i].item != texts[j].item && covers(texts[i].rect, texts[j].rect)) {
        return texts[i].what + QStringLiteral(" covers ") + texts[j].what;
      }
    }
  }
  // Texts laid on top of the graph (captions, badges, tensor shapes) keep off the boxes of others.
  const QVector<Drawn> nodes = boxes(view);
  for (const Drawn& text : texts) {
    if (text.item->type() == GraphNodeItem::Type || text.item->type() == GraphClusterItem::Type) continue;
    for (const Drawn& box : nodes) {
      if (covers(text.rect, box.rect)) return text.what + QStringLiteral(" covers the box of ") + box.what;
    }
  }
  return {};
}

// Checks the graph on display at Fit and at 100 %, without and with tensor shapes on the edges; returns the texts
// checked at Fit.
int verifyNoOverlap(GraphPanel& panel, const QString& what) {
  GraphView* view = panel.view();
  int checked = 0;
  for (bool shapes : {false, true}) {
    view->setTensorShapesShown(shapes);
    view->fitAll();
    // Fit fits: every item, badges and captions included, is in view.
    if (!view->mapToScene(view->viewport()->rect()).boundingRect().contains(view->scene()->itemsBoundingRect())) {
      const QRectF items = view->scene()->itemsBoundingRect();
      const QRectF shown = view->mapToScene(view->viewport()->rect()).boundingRect();
      qWarning("%s at Fit: not all of the scene (%g,%g %gx%g) is in view (%g,%g %gx%g)", qPrintable(what), items.x(),
               items.y(), items.width(), items.height(), shown.x(), shown.y(), shown.width(), shown.height());
      return -1;
    }
    const QString atFit = firstOverlap(*view);
    if (!atFit.isEmpty()) {
      qWarning("%s at Fit (zoom %.3f)%s: %s", qPrintable(what), view->zoom(), shapes ? " with shapes" : "",
               qPrintable(atFit));
      return -1;
    }
    if (!shapes) checked = static_cast<int>(drawnTexts(*view).size());
    view->setTransform(QTransform());
    const QString atFull = firstOverlap(*view);
    if (!atFull.isEmpty()) {
      qWarning("%s at 100%%%s: %s", qPrintable(what), shapes ? " with shapes" : "", qPrintable(atFull));
      return -1;
    }
  }
  view->setTensorShapesShown(false);
  view->fitAll();
  return checked;
}

int badgeCount(const GraphView& view) {
  int count = 0;
  for (const QGraphicsItem* item : view.scene()->items()) count += item->type() == kiln::studio::kTransferBadgeItemType;
  return count;
}

}  // namespace

class TestGraphOverlaps : public QObject {
  Q_OBJECT

 private slots:
  void initTestCase() { QVERIFY(dir_.isValid()); }

  void plainCnn() { verifyModel(QStringLiteral(KILN_TEST_MODELS_DIR "/tiny_cnn.onnx")); }

  void partitionsOnTwoEps() { verifyModel(QStringLiteral(KILN_PARTITION_SAMPLE)); }

  void compiledModelWithIfBodies() {
    QString error;
    const QString model = kiln::testing::makeIfModel(dir_.path(), &error);
    QVERIFY2(!model.isEmpty(), qPrintable(error));
    const QString ctx = compile(model, QStringLiteral("if_ctx.onnx"));
    if (ctx.isEmpty()) return;
    GraphPanel panel;
    panel.resize(1000, 700);
    panel.show();
    QVERIFY(openAndWait(panel, ctx));
    QVERIFY(verifyNoOverlap(panel, QStringLiteral("if_ctx main")) > 0);
    for (const QString& body : panel.rootDocument()->bodyPaths()) {
      QVERIFY(waitForLayout(panel, [&] { QVERIFY(panel.openGraph(body)); }));
      QVERIFY2(verifyNoOverlap(panel, body) >= 0, qPrintable(body));
    }
  }

  void longChain() {
    QString error;
    const QString model = kiln::testing::makeBigGraphModel(dir_.path(), QStringLiteral("chain.onnx"), 400, &error);
    QVERIFY2(!model.isEmpty(), qPrintable(error));
    verifyModel(model, true);
  }

  void uNet() {
    QProcess python;
    python.start(QStringLiteral("/usr/bin/python3"),
                 {QStringLiteral(KILN_SOURCE_DIR "/tests/tools/make_quant_unet.py"), dir_.path(),
                  QStringLiteral("--size"), QStringLiteral("64")});
    QVERIFY2(python.waitForFinished(120000) && python.exitCode() == 0, python.readAllStandardError().constData());
    verifyModel(dir_.filePath(QStringLiteral("quant_unet.onnx")), true);
  }

  void ppocrDet() {
    const QString model = QStringLiteral(KILN_TEST_MODEL_CACHE "/ch_PP-OCRv4_det_infer.onnx");
    if (!QFileInfo::exists(model)) {
      if (kiln::testing::modelsRequired()) QFAIL("PP-OCRv4 det is not in the model cache and KILN_REQUIRE_MODELS=1");
      QSKIP("PP-OCRv4 det is not in the model cache (tests/tools/fetch_models.sh)");
    }
    verifyModel(model, true);
  }

  void transferBadges() {
    const QString sample = compile(QStringLiteral(KILN_PARTITION_SAMPLE), QStringLiteral("sample_ctx.onnx"));
    if (sample.isEmpty()) return;
    QString error;
    const QString chain = kiln::testing::makeBigGraphModel(dir_.path(), QStringLiteral("badges.onnx"), 150, &error);
    QVERIFY2(!chain.isEmpty(), qPrintable(error));
    const QString chainCtx = compile(chain, QStringLiteral("badges_ctx.onnx"));
    if (chainCtx.isEmpty()) return;
    for (const QString& model : {sample, chainCtx}) {
      GraphPanel panel;
      panel.resize(1000, 700);
      panel.show();
      QVERIFY(openAndWait(panel, model));
      QVERIFY2(badgeCount(*panel.view()) > 0, qPrintable(model));
      QVERIFY2(verifyNoOverlap(panel, model) > 0, qPrintable(model));
      kiln::testing::saveScreenshot(&panel, QFileInfo(model).completeBaseName() + QStringLiteral("_fit.png"));
    }
  }

 private:
  // Opens `model` and checks it as opened; with `expanded`, again with every partition and group open.
  void verifyModel(const QString& model, bool expanded = false) {
    GraphPanel panel;
    panel.resize(1000, 700);
    panel.show();
    QVERIFY(openAndWait(panel, model, 120000));
    QVERIFY2(verifyNoOverlap(panel, QFileInfo(model).fileName()) > 0, qPrintable(model));
    // For a person to look at (KILN_STUDIO_SCREENSHOTS): the model as opened, at Fit.
    kiln::testing::saveScreenshot(&panel, QFileInfo(model).completeBaseName() + QStringLiteral("_fit.png"));
    if (!expanded) return;
    QVERIFY2(waitForLayout(panel, [&] { panel.expandAll(); }, 120000), qPrintable(panel.statusText()));
    // A long graph whole at Fit may be too small for any text: then only 100 % has texts to compare.
    QVERIFY2(verifyNoOverlap(panel, QFileInfo(model).fileName() + QStringLiteral(" expanded")) >= 0, qPrintable(model));
    kiln::testing::saveScreenshot(&panel, QFileInfo(model).completeBaseName() + QStringLiteral("_expanded_fit.png"));
  }

  // `model` compiled into the test's folder as `name`; "" (the test skipped, or failed where Vulkan is required)
  // when it cannot be compiled here.
  QString compile(const QString& model, const QString& name) {
    const QString ctx = dir_.filePath(name);
    kiln::ModelCompilationOptions options;
    options.setInputModelPath(model.toStdString()).setOutputModelPath(ctx.toStdString());
    const auto compiled = kiln::compileModel(options);
    if (compiled.isOk()) return ctx;
    if (kiln::testing::vulkanRequired()) {
      QTest::qFail(compiled.status().toString().c_str(), __FILE__, __LINE__);
    } else {
      const QString why = QString::fromStdString(compiled.status().toString());
      QTest::qSkip(qPrintable(QStringLiteral("cannot compile: ") + why), __FILE__, __LINE__);
    }
    return {};
  }

  QTemporaryDir dir_;
};

QTEST_MAIN(TestGraphOverlaps)
#include "tst_graph_overlaps.moc"
