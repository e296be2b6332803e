// kiln-studio's model diff (issue 33, item 4): two models side by side, every change of kiln::diffModels (what
// `kiln diff` prints) as a row to step through, each change focused in both graphs and its nodes coloured. B is A with
// one Conv attribute changed, one initializer changed and one node added (tests/tools/make_diff_models.py).
#include <QAction>
#include <QElapsedTimer>
#include <QFile>
#include <QSettings>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QTableWidget>
#include <QTemporaryDir>
#include <QtTest>

#include "diff_models.h"
#include "graph_panel.h"
#include "graph_panel_waits.h"
#include "graph_view.h"
#include "kiln/model_diff.h"
#include "main_window.h"
#include "model_diff_rows.h"
#include "model_diff_view.h"
#include "shortcuts.h"
#include "studio_test_files.h"
#include "theme.h"

using kiln::DiffChange;
using kiln::bridge::DiffLocator;
using kiln::bridge::DiffRow;
using kiln::studio::GraphPanel;
using kiln::studio::ModelDiffView;
using kiln::testing::nodeNamed;

namespace {

constexpr int kTimeoutMs = 60000;

// "changed node conv (Conv)": a row as the test names it, from the table's cells.
QString rowText(const QTableWidget* table, int row) {
  return QStringLiteral("%1 %2 %3")
      .arg(table->item(row, 0)->text(), table->item(row, 1)->text(), table->item(row, 2)->text());
}

// Starts `view` on the two models and waits until the diff and both layouts are done.
bool compareAndWait(ModelDiffView& view, const QString& a, const QString& b) {
  view.compare(a, b);
  QElapsedTimer timer;
  timer.start();
  while (view.isBusy() && timer.elapsed() < kTimeoutMs) QTest::qWait(20);
  return !view.isBusy();
}

// The name of the node selected in `side`'s graph, "" when none is.
QString selectedName(const ModelDiffView& view, ModelDiffView::Side side) {
  const GraphPanel* panel = view.panel(side);
  const int node = panel->view()->selectedNode();
  return node < 0 ? QString() : panel->document()->nodes()[node].name;
}

QColor fillOf(const ModelDiffView& view, ModelDiffView::Side side, const QString& node) {
  const GraphPanel* panel = view.panel(side);
  const int index = nodeNamed(*panel->document(), node);
  auto* item = index < 0 ? nullptr : panel->view()->nodeItem(index);
  return item ? item->fillColor() : QColor();
}

}  // namespace

class TestModelDiff : public QObject {
  Q_OBJECT

 private slots:
  void initTestCase() {
    QStandardPaths::setTestModeEnabled(true);
    QCoreApplication::setOrganizationName(QStringLiteral("KilnTest"));
    QCoreApplication::setApplicationName(QStringLiteral("tst_model_diff"));
    QSettings().clear();
    QString error;
    models_ = kiln::testing::makeDiffModels(dir_.path(), &error);
    QVERIFY2(!models_.first.isEmpty(), qPrintable(error));
  }

  // The rows are the engine's diff, one per change, each pointing at its node (or where it would be) on each side.
  void rowsAreTheEnginesChanges() {
    auto diff = kiln::diffModels(models_.first.toStdString(), models_.second.toStdString());
    QVERIFY2(diff.isOk(), diff.status().toString().c_str());
    const kiln::bridge::ModelDiffRows rows = kiln::bridge::modelDiffRows(*diff);
    QCOMPARE(rows.rows.size(), static_cast<qsizetype>(diff->changeCount()));
    QCOMPARE(rows.summary, QStringLiteral("3 changes: 1 node changed, 1 node added, 1 initializer changed"));
    const DiffRow& conv = rows.rows[0];
    QCOMPARE(conv.name, QStringLiteral("conv"));
    QCOMPARE(conv.inA.kind, DiffLocator::Kind::OpNode);
    QCOMPARE(conv.details.first().aspect, QStringLiteral("strides"));
    QCOMPARE(conv.details.first().a, QStringLiteral("[1, 1]"));
    QCOMPARE(conv.details.first().b, QStringLiteral("[2, 2]"));
    const DiffRow& gate = rows.rows[1];
    QCOMPARE(gate.change, DiffChange::ADDED);
    QCOMPARE(gate.inB.kind, DiffLocator::Kind::OpNode);
    QCOMPARE(gate.inA.kind, DiffLocator::Kind::Producers);  // in A: after the producer of its input x
    QCOMPARE(gate.inA.values, QStringList{QStringLiteral("x")});
    QCOMPARE(rows.rows[2].inA.kind, DiffLocator::Kind::InitializerReaders);
  }

  void listsTheChangesAndStepsThroughThemInBothGraphs() {
    ModelDiffView view;
    view.show();
    QVERIFY(QTest::qWaitForWindowExposed(&view));
    QVERIFY(compareAndWait(view, models_.first, models_.second));
    QVERIFY2(view.summaryText().startsWith(QStringLiteral("3 changes")), qPrintable(view.summaryText()));

    // Exactly the three changes, in the engine's order.
    const QTableWidget* table = view.diffTable();
    QCOMPARE(table->rowCount(), 3);
    QCOMPARE(rowText(table, 0), QStringLiteral("changed node conv (Conv)"));
    QCOMPARE(rowText(table, 1), QStringLiteral("added node gate (Sigmoid)"));
    QCOMPARE(rowText(table, 2), QStringLiteral("changed initializer W2"));
    QCOMPARE(view.currentRow(), -1);
    QVERIFY(view.findChild<QWidget*>(QStringLiteral("diffLegend"))->isVisible());
    QVERIFY(!view.panel(ModelDiffView::A)->findChild<QWidget*>(QStringLiteral("graphLegend"))->isVisible());

    // A's nodes coloured removed/changed, B's added/changed; a node reading a changed initializer is changed too.
    using kiln::studio::diffAddedColor;
    using kiln::studio::diffChangedColor;
    using kiln::studio::diffUnchangedColor;
    QCOMPARE(fillOf(view, ModelDiffView::A, QStringLiteral("conv")), diffChangedColor());
    QCOMPARE(fillOf(view, ModelDiffView::A, QStringLiteral("head")), diffChangedColor());
    QCOMPARE(fillOf(view, ModelDiffView::A, QStringLiteral("relu")), diffUnchangedColor());
    QCOMPARE(fillOf(view, ModelDiffView::B, QStringLiteral("gate")), diffAddedColor());
    QCOMPARE(fillOf(view, ModelDiffView::B, QStringLiteral("conv")), diffChangedColor());
    QCOMPARE(fillOf(view, ModelDiffView::B, QStringLiteral("relu")), diffUnchangedColor());

    // Laid out and idle: neither graph offers to cancel anything (the toolbars hide it once they lay out again).
    for (ModelDiffView::Side side : {ModelDiffView::A, ModelDiffView::B}) {
      QTRY_VERIFY(!view.panel(side)->findChild<QWidget*>(QStringLiteral("graphCancelButton"))->isVisible());
    }

    // Next steps through them in order, each focused in both graphs.
    QVERIFY(view.next());
    QCOMPARE(view.currentRow(), 0);
    QCOMPARE(selectedName(view, ModelDiffView::A), QStringLiteral("conv"));
    QCOMPARE(selectedName(view, ModelDiffView::B), QStringLiteral("conv"));
    QVERIFY(view.detailsTable()->rowCount() >= 2);  // strides and inputs, A against B
    QCOMPARE(view.detailsTable()->item(0, 0)->text(), QStringLiteral("strides"));
    QCOMPARE(view.detailsTable()->item(0, 1)->text(), QStringLiteral("[1, 1]"));
    QCOMPARE(view.detailsTable()->item(0, 2)->text(), QStringLiteral("[2, 2]"));
    QTest::qWait(50);  // the tables' column widths settle
    kiln::testing::saveScreenshot(&view, QStringLiteral("model_diff.png"));

    QVERIFY(view.next());
    QCOMPARE(view.currentRow(), 1);
    QCOMPARE(selectedName(view, ModelDiffView::B), QStringLiteral("gate"));
    // A has no such node: nothing selected there, the producer of its input (graph input x) highlighted.
    QCOMPARE(selectedName(view, ModelDiffView::A), QString());
    const int inputX = nodeNamed(*view.panel(ModelDiffView::A)->document(), QStringLiteral("x"));
    QVERIFY(view.panel(ModelDiffView::A)->view()->nodeItem(inputX)->isHighlighted());
    QTest::qWait(50);  // the tables' column widths settle
    kiln::testing::saveScreenshot(&view, QStringLiteral("model_diff_added.png"));

    QVERIFY(view.next());
    QCOMPARE(view.currentRow(), 2);
    QCOMPARE(selectedName(view, ModelDiffView::A), QStringLiteral("head"));  // the node reading W2
    QCOMPARE(selectedName(view, ModelDiffView::B), QStringLiteral("head"));
    QCOMPARE(view.detailsTable()->item(1, 0)->text(), QStringLiteral("xxh3"));
    QVERIFY(view.detailsTable()->item(1, 1)->text() != view.detailsTable()->item(1, 2)->text());
    QVERIFY(!view.next());  // the last change
    QCOMPARE(view.currentRow(), 2);

    // The keys: Shift+F7 back, F7 forward, with the focus anywhere in the view.
    view.activateWindow();
    QVERIFY(QTest::qWaitForWindowActive(&view));
    view.diffTable()->setFocus();
    const QKeySequence previous = kiln::studio::shortcutKeys(QStringLiteral("diff.previous"));
    QTest::keyClick(view.diffTable(), static_cast<Qt::Key>(previous[0].key()), previous[0].keyboardModifiers());
    QCOMPARE(view.currentRow(), 1);
    const QKeySequence next = kiln::studio::shortcutKeys(QStringLiteral("diff.next"));
    QTest::keyClick(view.panel(ModelDiffView::A)->view(), static_cast<Qt::Key>(next[0].key()),
                    next[0].keyboardModifiers());
    QCOMPARE(view.currentRow(), 2);
  }

  // Selecting a node in one graph selects its change, or else its counterpart in the other graph.
  void selectingANodeSyncsTheOtherGraph() {
    ModelDiffView view;
    view.show();
    QVERIFY(compareAndWait(view, models_.first, models_.second));
    GraphPanel* a = view.panel(ModelDiffView::A);
    GraphPanel* b = view.panel(ModelDiffView::B);
    a->view()->focusNode(nodeNamed(*a->document(), QStringLiteral("relu")));  // unchanged
    QCOMPARE(view.currentRow(), -1);
    QCOMPARE(selectedName(view, ModelDiffView::B), QStringLiteral("relu"));
    b->view()->focusNode(nodeNamed(*b->document(), QStringLiteral("gate")));
    QCOMPARE(view.currentRow(), 1);
    QCOMPARE(selectedName(view, ModelDiffView::B), QStringLiteral("gate"));  // the click's own selection stays
    a->view()->focusNode(nodeNamed(*a->document(), QStringLiteral("conv")));
    QCOMPARE(view.currentRow(), 0);
    QCOMPARE(selectedName(view, ModelDiffView::B), QStringLiteral("conv"));
  }

  // Unnamed nodes (kiln diff pairs them by position; the note says so) are found by the value they write: selecting
  // A's unnamed Relu selects B's. The CLI's own diff test models (tests/cli/diff_commands.py's conv_net).
  void unnamedNodesAreFoundByTheirOutputs() {
    ModelDiffView view;
    view.show();
    QVERIFY(compareAndWait(view, QStringLiteral(KILN_SOURCE_DIR "/tests/cli/data/diff_conv_a.onnx"),
                           QStringLiteral(KILN_SOURCE_DIR "/tests/cli/data/diff_conv_b.onnx")));
    QCOMPARE(view.diffTable()->rowCount(), 2);
    QVERIFY2(view.summaryText().contains(QStringLiteral("note: main: 1 unnamed node matched by position")),
             qPrintable(view.summaryText()));
    auto unnamedRelu = [&view](ModelDiffView::Side side) {
      const auto& nodes = view.panel(side)->document()->nodes();
      for (int i = 0; i < nodes.size(); ++i) {
        if (nodes[i].opType == QLatin1String("Relu") && nodes[i].name.isEmpty()) return i;
      }
      return -1;
    };
    const int reluA = unnamedRelu(ModelDiffView::A), reluB = unnamedRelu(ModelDiffView::B);
    QVERIFY(reluA >= 0 && reluB >= 0);
    view.panel(ModelDiffView::A)->view()->focusNode(reluA);
    QCOMPARE(view.panel(ModelDiffView::B)->view()->selectedNode(), reluB);
    QCOMPARE(view.currentRow(), -1);  // unchanged
  }

  void identicalModelsShowNoDifferences() {
    ModelDiffView view;
    view.show();
    QVERIFY(compareAndWait(view, models_.first, models_.first));
    QVERIFY2(view.summaryText().startsWith(QStringLiteral("No differences")), qPrintable(view.summaryText()));
    QCOMPARE(view.diffTable()->rowCount(), 0);
    QVERIFY(!view.next());
    QCOMPARE(fillOf(view, ModelDiffView::A, QStringLiteral("conv")), kiln::studio::diffUnchangedColor());
  }

  // A missing file or one that is not ONNX is said in the view; the next good pair works.
  void unreadableModelsAreSaidInTheView() {
    ModelDiffView view;
    view.show();
    QSignalSpy failed(&view, &ModelDiffView::diffFailed);
    QVERIFY(compareAndWait(view, models_.first, dir_.filePath(QStringLiteral("missing.onnx"))));
    QCOMPARE(failed.size(), 1);
    QVERIFY2(view.summaryText().contains(QStringLiteral("NO_SUCHFILE")), qPrintable(view.summaryText()));
    QTest::qWait(50);  // the tables' column widths settle
    kiln::testing::saveScreenshot(&view, QStringLiteral("model_diff_missing.png"));
    // No diff to colour by: A's graph keeps its EP colours, under its own legend, not the diff's.
    QVERIFY(!view.findChild<QWidget*>(QStringLiteral("diffLegend"))->isVisible());
    QVERIFY(view.panel(ModelDiffView::A)->findChild<QWidget*>(QStringLiteral("graphLegend"))->isVisible());
    const kiln::bridge::GraphDocument& documentA = *view.panel(ModelDiffView::A)->document();
    const QString ep = documentA.nodes()[nodeNamed(documentA, QStringLiteral("relu"))].executionProvider;
    QCOMPARE(fillOf(view, ModelDiffView::A, QStringLiteral("relu")), kiln::studio::epQColor(ep));
    QCOMPARE(view.diffTable()->rowCount(), 0);
    const QString text = dir_.filePath(QStringLiteral("not_onnx.onnx"));
    QFile file(text);
    QVERIFY(file.open(QIODevice::WriteOnly));
    file.write("this is not a model\n");
    file.close();
    QVERIFY(compareAndWait(view, text, models_.second));
    QCOMPARE(failed.size(), 2);
    QVERIFY2(view.summaryText().contains(QStringLiteral("INVALID_PROTOBUF")), qPrintable(view.summaryText()));
    QVERIFY(compareAndWait(view, models_.first, models_.second));
    QCOMPARE(view.diffTable()->rowCount(), 3);
  }

  // The unchanged nodes' grey and the legend follow View > Theme; the change colours read on both canvases.
  void themeSwitchRecoloursTheUnchangedNodes() {
    ModelDiffView view;
    view.show();
    QVERIFY(compareAndWait(view, models_.first, models_.second));
    const QColor light = kiln::studio::diffUnchangedColor();
    kiln::studio::applyTheme(kiln::studio::ThemeChoice::Dark);
    const QColor dark = kiln::studio::diffUnchangedColor();
    QVERIFY(dark != light);
    QTRY_COMPARE(fillOf(view, ModelDiffView::A, QStringLiteral("relu")), dark);  // the palette change is posted
    QCOMPARE(fillOf(view, ModelDiffView::B, QStringLiteral("gate")), kiln::studio::diffAddedColor());
    QVERIFY(view.next());
    QTest::qWait(50);  // the tables' column widths settle
    kiln::testing::saveScreenshot(&view, QStringLiteral("model_diff_dark.png"));
    kiln::studio::applyTheme(kiln::studio::ThemeChoice::Light);
    QTRY_COMPARE(fillOf(view, ModelDiffView::A, QStringLiteral("relu")), light);
  }

  // Tools > Diff Models compares the model on display (A) with the one chosen (B).
  void mainWindowDiffsTheOpenModel() {
    kiln::studio::MainWindow window;
    QSignalSpy loaded(&window, &kiln::studio::MainWindow::modelLoaded);
    window.openModel(models_.first);
    QVERIFY(loaded.wait(kTimeoutMs));
    auto* action = window.findChild<QAction*>(QStringLiteral("diffModelsAction"));
    QVERIFY(action);
    QCOMPARE(action->shortcut(), kiln::studio::shortcutKeys(QStringLiteral("tools.diff")));
    ModelDiffView* view = window.openModelDiff(models_.second);
    QVERIFY(view && view->isWindow() && view->isVisible());
    QCOMPARE(view->pathA(), models_.first);
    QCOMPARE(view->pathB(), models_.second);
    QTRY_VERIFY_WITH_TIMEOUT(!view->isBusy(), kTimeoutMs);
    QCOMPARE(view->diffTable()->rowCount(), 3);
    QCOMPARE(window.openModelDiff(models_.first), view);  // one window, its models replaced
    QCOMPARE(view->pathB(), models_.first);
    QTRY_VERIFY_WITH_TIMEOUT(!view->isBusy(), kTimeoutMs);
    QCOMPARE(view->diffTable()->rowCount(), 0);
  }

 private:
  QTemporaryDir dir_;
  std::pair<QString, QString> models_;
};

QTEST_MAIN(TestModelDiff)
#include "tst_model_diff.moc"
