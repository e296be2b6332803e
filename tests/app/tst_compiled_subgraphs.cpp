// A compiled model with If bodies shows its nested EPContext nodes where their partitions were: inside the bodies,
// with their decoded details, and search and the summary reach them (issue 22).
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QtTest>

#include "graph_panel.h"
#include "graph_panel_waits.h"
#include "graph_view.h"
#include "if_model.h"
#include "node_details_view.h"
#include "kiln/compiler.h"
#include "requirements.h"

using kiln::bridge::GraphDocument;
using kiln::studio::GraphPanel;
using kiln::testing::waitForLayout;

class TestCompiledSubgraphs : public QObject {
  Q_OBJECT

 private slots:
  void nestedEpContextNodesInBodies() {
    QTemporaryDir dir;
    KILN_COMPILE_IF_MODEL(compiled, dir.path(), QStringLiteral("if_ctx.onnx"), false);
    const QString& ctx = compiled.ctx;

    GraphPanel panel;
    panel.resize(1000, 700);
    QVERIFY(waitForLayout(panel, [&] { panel.openModel(ctx); }));
    const auto root = panel.rootDocument();
    QVERIFY(root);
    QVERIFY(!root->bodyPaths().isEmpty());
    // Every EPContext node of every graph carries its details, and at least one sits in a body.
    int nested = 0, total = 0;
    auto count = [&](const GraphDocument& doc) {
      for (const auto& n : doc.nodes()) {
        if (!n.epContext) continue;
        ++total;
        QVERIFY2(n.epContextDetails.has_value(), qPrintable(doc.graphPath() + QStringLiteral(": ") + n.name));
        QVERIFY(n.epContextDetails->problem.isEmpty());
        QVERIFY(!n.cpuFallback());
        if (doc.graphPath() != QStringLiteral("main")) ++nested;
      }
    };
    count(*root);
    for (const QString& path : root->bodyPaths()) count(*root->body(path));
    QVERIFY2(nested >= 3, qPrintable(QString::number(nested)));
    QVERIFY(total > nested);

    // The then branch's EPContext node is drawn there, as a hexagon item, once the body opens.
    const QString thenBranch = QStringLiteral("main/branch.then_branch");
    QVERIFY(waitForLayout(panel, [&] { QVERIFY(panel.openGraph(thenBranch)); }));
    int drawn = 0;
    for (auto* item : panel.view()->nodeItems()) drawn += item->isEpContext() ? 1 : 0;
    QVERIFY(drawn >= 1);
    // Search finds them across graphs.
    QVERIFY(panel.search(QStringLiteral("EPContext")) == total);
  }

  // A ctx model whose main graph has no EPContext node (the If alone) still decodes the ones in its bodies, and their
  // details offer to inspect the binary (issue 33, item 7: they showed raw attributes only).
  void epContextNodesOnlyInBodiesAreDecoded() {
    QTemporaryDir dir;
    KILN_COMPILE_IF_MODEL(compiled, dir.path(), QStringLiteral("bodies_ctx.onnx"), true);
    const QString& ctx = compiled.ctx;
    GraphPanel panel;
    panel.resize(1000, 700);
    QVERIFY(waitForLayout(panel, [&] { panel.openModel(ctx); }));
    const auto root = panel.rootDocument();
    QVERIFY(root);
    for (const auto& n : root->nodes()) QVERIFY2(!n.epContext, qPrintable(n.name));
    int decoded = 0;
    for (const QString& path : root->bodyPaths()) {
      for (const auto& n : root->body(path)->nodes()) {
        if (!n.epContext) continue;
        QVERIFY2(n.epContextDetails.has_value(), qPrintable(path + QStringLiteral(": ") + n.name));
        QVERIFY(!n.epContextDetails->binaryPath.isEmpty());
        ++decoded;
      }
    }
    QCOMPARE(decoded, 3);
    // Selected inside its body, the node's details decode it and link to the binary inspector.
    const QString thenBranch = QStringLiteral("main/branch.then_branch");
    QVERIFY(waitForLayout(panel, [&] { QVERIFY(panel.openGraph(thenBranch)); }));
    int node = -1;
    for (int i = 0; i < panel.document()->nodes().size(); ++i) node = panel.document()->nodes()[i].epContext ? i : node;
    QVERIFY(node >= 0);
    panel.selectNode(node);
    const QString text = panel.detailsView()->text();
    QVERIFY2(text.contains(QStringLiteral("Inspect binary")), qPrintable(text));
  }
};

QTEST_MAIN(TestCompiledSubgraphs)
#include "tst_compiled_subgraphs.moc"
