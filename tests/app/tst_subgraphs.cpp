// Subgraph navigation (issue 22): If bodies open as their own graph under a breadcrumb (main > branch >
// else_branch), double-clicking the If opens its body, a breadcrumb step goes back, outer-scope values are drawn as
// inputs of the body, and search, the Nodes table and the summary cover every graph.
#include <QGraphicsView>
#include <QLabel>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QtTest>

#include "graph_panel.h"
#include "graph_panel_waits.h"
#include "graph_view.h"
#include "if_model.h"
#include "kiln/model_info.h"
#include "kiln/partition_report.h"
#include "model_summary_view.h"
#include "node_table_model.h"

using kiln::bridge::GraphDocument;
using kiln::bridge::GraphNode;
using kiln::studio::GraphPanel;
using kiln::testing::nodeNamed;
using kiln::testing::waitForLayout;

namespace {

const QString kElse = QStringLiteral("main/branch.else_branch");
const QString kInnerThen = QStringLiteral("main/branch.else_branch/inner.then_branch");

}  // namespace

class TestSubgraphs : public QObject {
  Q_OBJECT

 private slots:
  void initTestCase() {
    QVERIFY(dir_.isValid());
    QString error;
    model_ = kiln::testing::makeIfModel(dir_.path(), &error);
    QVERIFY2(!model_.isEmpty(), qPrintable(error));
  }

  void engineDescribesEveryBody() {
    const auto info = kiln::inspectModel(model_.toStdString());
    QVERIFY(info.isOk());
    QCOMPARE(info.value().nodes.size(), size_t(6));
    QCOMPARE(info.value().subgraphs.size(), size_t(4));
    const kiln::SubgraphInfo* elseBody = nullptr;
    for (const auto& sub : info.value().subgraphs) {
      if (QString::fromStdString(sub.path) == kElse) elseBody = &sub;
    }
    QVERIFY(elseBody);
    QCOMPARE(QString::fromStdString(elseBody->parentPath), QStringLiteral("main"));
    QCOMPARE(QString::fromStdString(elseBody->ownerNode), QStringLiteral("branch"));
    QCOMPARE(QString::fromStdString(elseBody->attribute), QStringLiteral("else_branch"));
    QCOMPARE(elseBody->ownerIndex, int64_t(5));
    // relu from main, cond read by the nested If's bodies: both from outside the else branch.
    QCOMPARE(elseBody->outerScopeInputs, (std::vector<std::string>{"cond", "relu"}));
    QCOMPARE(elseBody->nodes.size(), size_t(3));
    // The If reads relu and w2 only through its bodies: they are its implicit inputs.
    const kiln::NodeInfo& branch = info.value().nodes[5];
    QVERIFY(std::find(branch.implicitInputs.begin(), branch.implicitInputs.end(), "relu") != branch.implicitInputs.end());
  }

  void documentsPerGraph() {
    const auto info = kiln::inspectModel(model_.toStdString());
    QVERIFY(info.isOk());
    const GraphDocument doc = GraphDocument::build(info.value(), kiln::Result<kiln::PartitionReport>(kiln::Status(kiln::StatusCode::FAIL, "no report")), std::nullopt);
    QCOMPARE(doc.graphPath(), QStringLiteral("main"));
    QCOMPARE(doc.bodyPaths().size(), 4);
    QCOMPARE(doc.opNodeCountAll(), 6 + 4 + 3 + 1 + 1);
    const int branch = nodeNamed(doc, QStringLiteral("branch"));
    QVERIFY(branch >= 0);
    QCOMPARE(doc.nodes()[branch].bodies,
             (QStringList{QStringLiteral("main/branch.else_branch"), QStringLiteral("main/branch.then_branch")}));
    // The value the bodies read is drawn as an edge into the If: inputs used only inside bodies are connected.
    const int relu = nodeNamed(doc, QStringLiteral("stem_relu"));
    bool reluToIf = false;
    for (const auto& e : doc.edges()) reluToIf |= e.from == relu && e.to == branch;
    QVERIFY(reluToIf);

    const auto body = doc.body(kElse);
    QVERIFY(body);
    QCOMPARE(body->graphPath(), kElse);
    const int outerRelu = nodeNamed(*body, QStringLiteral("relu"));
    QVERIFY(outerRelu >= 0);
    QVERIFY(body->nodes()[outerRelu].outerScope);
    QCOMPARE(body->nodes()[outerRelu].kind, GraphNode::Kind::GraphInput);
    // The body's own initializer 'bias' is a constant of else_add, not an input box.
    QCOMPARE(nodeNamed(*body, QStringLiteral("bias")), -1);
    QCOMPARE(body->nodes()[nodeNamed(*body, QStringLiteral("else_add"))].constantInputs, QStringList{QStringLiteral("bias")});
    QVERIFY(!doc.body(QStringLiteral("main/nope")));

    const auto crumbs = GraphDocument::breadcrumb(doc.modelInfo(), kInnerThen);
    QStringList texts;
    for (const auto& c : crumbs) texts << c.text;
    QCOMPARE(texts, (QStringList{QStringLiteral("main"), QStringLiteral("branch"), QStringLiteral("else_branch"),
                                 QStringLiteral("inner"), QStringLiteral("then_branch")}));
    QCOMPARE(crumbs[1].graphPath, QStringLiteral("main"));
    QCOMPARE(crumbs[1].selectNode, QStringLiteral("branch"));
    QCOMPARE(crumbs[2].graphPath, kElse);

    const auto hits = doc.searchAll(QStringLiteral("Neg"));
    QCOMPARE(hits.size(), 1);
    QCOMPARE(hits[0].graphPath, kInnerThen);
  }

  void doubleClickOpensBodyAndBreadcrumbGoesBack() {
    GraphPanel panel;
    panel.resize(1000, 700);
    panel.show();
    QVERIFY(waitForLayout(panel, [&] { panel.openModel(model_); }));
    QCOMPARE(panel.currentGraphPath(), QStringLiteral("main"));
    QCOMPARE(panel.breadcrumbText(), QStringLiteral("main"));
    const int branch = nodeNamed(*panel.document(), QStringLiteral("branch"));
    auto* item = panel.view()->nodeItem(branch);
    QVERIFY(item);
    panel.view()->centerOn(item);
    const QPoint at = panel.view()->mapFromScene(item->sceneBoundingRect().center());
    QVERIFY(waitForLayout(panel, [&] { QTest::mouseDClick(panel.view()->viewport(), Qt::LeftButton, {}, at); }));
    QCOMPARE(panel.currentGraphPath(), QStringLiteral("main/branch.else_branch"));
    QCOMPARE(panel.breadcrumbText(), QStringLiteral("main \u25b8 branch \u25b8 else_branch"));
    // The outer-scope values are drawn as the body's inputs.
    QVERIFY(panel.view()->nodeItem(nodeNamed(*panel.document(), QStringLiteral("relu"))));
    QVERIFY(panel.view()->nodeItem(nodeNamed(*panel.document(), QStringLiteral("cond"))));

    // Clicking "branch" in the breadcrumb goes back to main with the If selected.
    auto* crumb = panel.findChild<QLabel*>(QStringLiteral("graphBreadcrumb"));
    QVERIFY(crumb && crumb->isVisible());
    QVERIFY(crumb->text().contains(QStringLiteral("then_branch")));  // the other branch is one click away
    QVERIFY(waitForLayout(panel, [&] { emit crumb->linkActivated(QStringLiteral("main#branch")); }));
    QCOMPARE(panel.currentGraphPath(), QStringLiteral("main"));
    auto* selected = panel.view()->nodeItem(nodeNamed(*panel.document(), QStringLiteral("branch")));
    QVERIFY(selected && selected->isSelected());
    QVERIFY(!panel.openGraph(QStringLiteral("main/missing.body")));
  }

  void searchReachesNestedBodies() {
    GraphPanel panel;
    panel.resize(1000, 700);
    QVERIFY(waitForLayout(panel, [&] { panel.openModel(model_); }));
    QVERIFY(waitForLayout(panel, [&] { QCOMPARE(panel.search(QStringLiteral("inner_neg")), 1); }));
    QCOMPARE(panel.currentGraphPath(), kInnerThen);
    auto* item = panel.view()->nodeItem(nodeNamed(*panel.document(), QStringLiteral("inner_neg")));
    QVERIFY(item && item->isSelected());
    // stem_relu and else_relu, and the outer-scope inputs relu (both branches) and e_relu (both inner branches).
    QVERIFY(waitForLayout(panel, [&] { QCOMPARE(panel.search(QStringLiteral("relu")), 6); }));
    QCOMPARE(panel.currentGraphPath(), QStringLiteral("main"));
  }

  void nodesTableAndSummaryCoverEveryGraph() {
    const auto info = kiln::inspectModel(model_.toStdString());
    QVERIFY(info.isOk());
    auto shared = std::make_shared<const kiln::ModelInfo>(info.value());
    kiln::bridge::NodeTableModel table;
    table.setModelInfo(shared);
    QCOMPARE(table.rowCount(), 15);
    QStringList graphs;
    for (int row = 0; row < table.rowCount(); ++row) {
      graphs << table.data(table.index(row, kiln::bridge::NodeTableModel::Graph)).toString();
      if (table.data(table.index(row, kiln::bridge::NodeTableModel::Name)).toString() == QStringLiteral("inner_neg")) {
        QCOMPARE(table.graphPath(row), kInnerThen);
        QCOMPARE(table.nodeIndex(row), 0);
      }
    }
    QCOMPARE(graphs.count(QStringLiteral("main")), 6);
    QCOMPARE(table.headerData(kiln::bridge::NodeTableModel::Graph, Qt::Horizontal).toString(), QStringLiteral("Graph"));
    QCOMPARE(graphs.count(kElse), 3);
    kiln::studio::ModelSummaryView summary;
    summary.showModel(shared.get());
    QCOMPARE(summary.valueOf(QStringLiteral("Operators"), QStringLiteral("If")), QStringLiteral("2"));
    QCOMPARE(summary.valueOf(QStringLiteral("Graphs"), QStringLiteral("branch.else_branch")), QStringLiteral("3 nodes"));
    QCOMPARE(summary.valueOf(QStringLiteral("Graphs"), QStringLiteral("inner.then_branch")), QStringLiteral("1 node"));
  }

 private:
  QTemporaryDir dir_;
  QString model_;
};

QTEST_MAIN(TestSubgraphs)
#include "tst_subgraphs.moc"
