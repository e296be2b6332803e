// A huge graph far out is drawn as one cached picture (issue 22: a 10,000-node graph with every partition
// expanded paints far out in well under 30 ms): the items hide behind it, selection and search highlights are drawn
// over it, a click zooms onto the nearest node, zooming in brings the items back, exports still draw every item.
// Far out is 5 %, at the graph's top: since long graphs are one column (issue 33 item 5: no more side-by-side
// bands), the whole 4000-node graph at Fit is a column a pixel wide, where these cases used to look at a page.
#include <QImage>
#include <QImageReader>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QtTest>

#include "big_graph_model.h"
#include "graph_panel.h"
#include "graph_panel_waits.h"
#include "graph_view.h"

using kiln::studio::GraphPanel;
using kiln::studio::GraphView;

namespace {

// The view at 5 %, its top at the graph's top: far enough out for the picture, with the graph across the view.
void farOut(GraphView* view) {
  view->fitAll();
  view->zoomBy(0.05 / view->zoom());
  const QRectF scene = view->sceneRect();
  const QRectF visible = view->mapToScene(view->viewport()->rect()).boundingRect();
  view->centerOn(scene.center().x(), scene.top() + visible.height() / 2);
}

}  // namespace

class TestGraphOverview : public QObject {
  Q_OBJECT

 private slots:
  void initTestCase() {
    QVERIFY(dir_.isValid());
    QString error;
    const QString model = kiln::testing::makeBigGraphModel(dir_.path(), QStringLiteral("big.onnx"), 4000, &error);
    QVERIFY2(!model.isEmpty(), qPrintable(error));
    panel_.resize(1000, 700);
    panel_.show();
    QVERIFY(kiln::testing::openAndWait(panel_, model, 120000));
    QVERIFY(kiln::testing::waitForLayout(panel_, [this] { panel_.expandAll(); }, 120000));
    QVERIFY(panel_.view()->nodeItems().size() > 3500);
  }

  void farOutIsOnePicture() {
    GraphView* view = panel_.view();
    farOut(view);
    QVERIFY(view->isOverview());
    int visible = 0;
    for (auto* item : view->nodeItems()) visible += item->isVisible() ? 1 : 0;
    QCOMPARE(visible, 0);
    // The picture is what the viewport shows: not blank.
    QImage image(view->viewport()->size(), QImage::Format_RGB32);
    image.fill(Qt::white);
    {
      QPainter painter(&image);
      view->render(&painter, QRectF(image.rect()), view->viewport()->rect());
    }
    int colored = 0;
    for (int y = 0; y < image.height(); y += 4) {
      for (int x = 0; x < image.width(); x += 4) colored += image.pixel(x, y) != qRgb(255, 255, 255) ? 1 : 0;
    }
    QVERIFY2(colored > 100, qPrintable(QString::number(colored)));
  }

  void clickZoomsOntoANode() {
    GraphView* view = panel_.view();
    farOut(view);
    QVERIFY(view->isOverview());
    QTest::mouseClick(view->viewport(), Qt::LeftButton, {}, view->viewport()->rect().center());
    QVERIFY(!view->isOverview());
    QVERIFY(view->selectedNode() >= 0);
    QVERIFY(view->nodeItem(view->selectedNode())->isVisible());
    farOut(view);
    QVERIFY(view->isOverview());
    // Keyboard zoom in far enough brings the items back.
    for (int i = 0; i < 12 && view->isOverview(); ++i) QTest::keyClick(view, Qt::Key_Plus);
    QVERIFY(!view->isOverview());
    for (auto* item : view->nodeItems()) QVERIFY(item->isVisible());
  }

  void exportDrawsTheItems() {
    farOut(panel_.view());
    QVERIFY(panel_.view()->isOverview());
    QString error;
    QVERIFY2(panel_.exportPng(dir_.filePath(QStringLiteral("g.png")), &error), qPrintable(error));
    // Only its header is read: Qt refuses to decode images over 128 MB by default.
    QVERIFY(QImageReader(dir_.filePath(QStringLiteral("g.png"))).size().height() > 1000);  // the long side
    QVERIFY(panel_.view()->isOverview());  // back to the picture afterwards
  }

 private:
  QTemporaryDir dir_;
  GraphPanel panel_;
};

QTEST_MAIN(TestGraphOverview)
#include "tst_graph_overview.moc"
