// Keyboard use of the graph view (issue 22): + and - (with or without Ctrl) zoom, Ctrl+0 fits, arrow keys and Tab
// walk from node to node along the edges, and the minimap appears while zoomed in and moves the view.
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QtTest>

#include "graph_panel.h"
#include "graph_panel_waits.h"
#include "graph_view.h"
#include "if_model.h"
#include "node_details_view.h"

using kiln::bridge::GraphDocument;
using kiln::studio::GraphPanel;
using kiln::studio::GraphView;
using kiln::testing::nodeNamed;
using kiln::testing::openAndWait;

class TestGraphKeyboard : public QObject {
  Q_OBJECT

 private slots:
  void initTestCase() {
    QVERIFY(dir_.isValid());
    QString error;
    model_ = kiln::testing::makeIfModel(dir_.path(), &error);
    QVERIFY2(!model_.isEmpty(), qPrintable(error));
    panel_.resize(1000, 700);
    panel_.show();
    QVERIFY(openAndWait(panel_, model_));
  }

  void keyboardZoom_data() {
    QTest::addColumn<int>("key");
    QTest::addColumn<int>("modifiers");
    QTest::addColumn<bool>("zoomIn");
    QTest::newRow("+") << int(Qt::Key_Plus) << int(Qt::NoModifier) << true;
    QTest::newRow("=") << int(Qt::Key_Equal) << int(Qt::NoModifier) << true;
    QTest::newRow("Ctrl++") << int(Qt::Key_Plus) << int(Qt::ControlModifier) << true;
    QTest::newRow("Ctrl+=") << int(Qt::Key_Equal) << int(Qt::ControlModifier) << true;
    QTest::newRow("-") << int(Qt::Key_Minus) << int(Qt::NoModifier) << false;
    QTest::newRow("Ctrl+-") << int(Qt::Key_Minus) << int(Qt::ControlModifier) << false;
  }
  void keyboardZoom() {
    QFETCH(int, key);
    QFETCH(int, modifiers);
    QFETCH(bool, zoomIn);
    GraphView* view = panel_.view();
    view->fitAll();
    const double before = view->zoom();
    QTest::keyClick(view, static_cast<Qt::Key>(key), static_cast<Qt::KeyboardModifiers>(modifiers));
    QVERIFY2(zoomIn ? view->zoom() > before * 1.1 : view->zoom() < before * 0.9,
             qPrintable(QStringLiteral("%1 -> %2").arg(before).arg(view->zoom())));
  }

  void ctrlZeroFits() {
    GraphView* view = panel_.view();
    view->fitAll();
    const double fit = view->zoom();
    QTest::keyClick(view, Qt::Key_Plus);
    QTest::keyClick(view, Qt::Key_Plus);
    QVERIFY(view->zoom() > fit * 1.3);
    QVERIFY(view->minimap()->isVisible());  // part of the graph is out of sight
    QTest::keyClick(view, Qt::Key_0, Qt::ControlModifier);
    QVERIFY(qAbs(view->zoom() - fit) < 1e-6);
    QVERIFY(!view->minimap()->isVisible());  // everything is in the view again
  }

  void arrowsAndTabFollowEdges() {
    GraphView* view = panel_.view();
    const auto doc = panel_.document();
    view->scene()->clearSelection();
    QTest::keyClick(view, Qt::Key_Down);  // nothing selected: the first node (the input x)
    QCOMPARE(view->selectedNode(), nodeNamed(*doc, QStringLiteral("x")));
    QTest::keyClick(view, Qt::Key_Down);
    QCOMPARE(view->selectedNode(), nodeNamed(*doc, QStringLiteral("stem_conv")));
    QTest::keyClick(view, Qt::Key_Tab);
    QCOMPARE(view->selectedNode(), nodeNamed(*doc, QStringLiteral("stem_relu")));
    // stem_relu feeds mean and (through its bodies) the If: Down goes to the first, Right to its sibling.
    QTest::keyClick(view, Qt::Key_Down);
    QCOMPARE(view->selectedNode(), nodeNamed(*doc, QStringLiteral("mean")));
    QTest::keyClick(view, Qt::Key_Right);
    QCOMPARE(view->selectedNode(), nodeNamed(*doc, QStringLiteral("branch")));
    QTest::keyClick(view, Qt::Key_Left);
    QCOMPARE(view->selectedNode(), nodeNamed(*doc, QStringLiteral("mean")));
    QTest::keyClick(view, Qt::Key_Up);
    QCOMPARE(view->selectedNode(), nodeNamed(*doc, QStringLiteral("stem_relu")));
    QTest::keyClick(view, Qt::Key_Backtab, Qt::ShiftModifier);
    QCOMPARE(view->selectedNode(), nodeNamed(*doc, QStringLiteral("stem_conv")));
    // The graph's first node has no producer: Up stays where it is.
    view->focusNode(nodeNamed(*doc, QStringLiteral("x")));
    QVERIFY(!view->stepAlongEdges(-1));
    QCOMPARE(view->selectedNode(), nodeNamed(*doc, QStringLiteral("x")));
  }

  void minimapMovesTheView() {
    GraphView* view = panel_.view();
    view->fitAll();
    for (int i = 0; i < 6; ++i) view->zoomBy(1.25);
    QVERIFY(view->minimap()->isVisible());
    const QRectF frame = view->minimap()->viewportFrame();
    QVERIFY(!frame.isEmpty());
    // Clicking the minimap's bottom-right corner moves the view there.
    const QPoint corner = view->minimap()->rect().bottomRight() - QPoint(5, 5);
    QTest::mouseClick(view->minimap(), Qt::LeftButton, {}, corner);
    const QRectF moved = view->minimap()->viewportFrame();
    QVERIFY2(moved.center().y() > frame.center().y(), qPrintable(QStringLiteral("%1 -> %2").arg(frame.center().y()).arg(moved.center().y())));
  }

  void staysFittedWhenResized() {
    GraphView* view = panel_.view();
    view->fitAll();
    panel_.resize(1000, 400);
    QCoreApplication::processEvents();
    const QRectF visible = view->mapToScene(view->viewport()->rect()).boundingRect();
    QVERIFY(visible.contains(view->sceneRect().adjusted(1, 1, -1, -1)));
    panel_.resize(1000, 700);
  }

  void narrowPanelPutsDetailsBelow() {
    panel_.resize(GraphPanel::kNarrowWidth - 100, 700);
    QCoreApplication::processEvents();
    QVERIFY(panel_.detailsView()->geometry().top() >= view()->geometry().bottom());
    panel_.resize(1000, 700);
    QCoreApplication::processEvents();
    QVERIFY(panel_.detailsView()->geometry().left() >= view()->geometry().right());
  }

 private:
  GraphView* view() { return panel_.view(); }
  QTemporaryDir dir_;
  QString model_;
  GraphPanel panel_;
};

QTEST_MAIN(TestGraphKeyboard)
#include "tst_graph_keyboard.moc"
