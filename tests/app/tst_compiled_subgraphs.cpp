// A compiled model with If bodies shows its nested EPContext nodes where their partitions were: inside the bodies,
// with their decoded details, and search and the summary reach them (issue 22).
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QtTest>

#include "graph_panel.h"
#include "graph_panel_waits.h"
#include "graph_view.h"
#include "if_model.h"
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
    QString error;
    const QString model = kiln::testing::makeIfModel(dir.path(), &error);
    QVERIFY2(!model.isEmpty(), qPrintable(error));
    const QString ctx = dir.filePath(QStringLiteral("if_ctx.onnx"));
    kiln::ModelCompilationOptions options;
    options.setInputModelPath(model.toStdString()).setOutputModelPath(ctx.toStdString());
    const auto compiled = kiln::compileModel(options);
    if (!compiled.isOk()) {
      if (kiln::testing::vulkanRequired()) QFAIL(compiled.status().toString().c_str());
      QSKIP(qPrintable(QStringLiteral("cannot compile: ") + QString::fromStdString(compiled.status().toString())));
    }

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
};

QTEST_MAIN(TestCompiledSubgraphs)
#include "tst_compiled_subgraphs.moc"
