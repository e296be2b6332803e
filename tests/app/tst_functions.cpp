// Model-local ONNX functions (issue 22): the engine inlines each call at load (the model runs, every EP sees
// the function's nodes as "<call>/<node>"), kiln::inspectModel describes each call's body as a graph of its
// own, and the studio opens it like an If body: double-click, breadcrumb "main ▸ block ▸ custom:ScaleShift",
// formal inputs and outputs drawn as the body's, attribute references in the node details, search and the
// Nodes table inside it, and the call drawn with the EP its inlined nodes run on (never as a CPU-fallback
// warning).
#include <QLabel>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QtTest>
#include <cmath>

#include "function_model.h"
#include "graph_panel.h"
#include "graph_panel_waits.h"
#include "graph_view.h"
#include "kiln/config_keys.h"
#include "kiln/model_info.h"
#include "kiln/partition_report.h"
#include "kiln/session.h"
#include "model_summary_view.h"
#include "node_details_view.h"
#include "node_table_model.h"

using kiln::bridge::GraphDocument;
using kiln::bridge::GraphNode;
using kiln::studio::GraphPanel;
using kiln::testing::nodeNamed;
using kiln::testing::waitForLayout;

namespace {

const QString kBody = QStringLiteral("main/block.custom:ScaleShift");

kiln::SessionOptions cpuOnly() {
  kiln::SessionOptions options;
  (void)options.addConfigEntry(kiln::config::kExecutionProviders, "cpu");
  return options;
}

}  // namespace

class TestFunctions : public QObject {
  Q_OBJECT

 private slots:
  void initTestCase() {
    QVERIFY(dir_.isValid());
    QString error;
    model_ = kiln::testing::makeFunctionModel(dir_.path(), &error);
    QVERIFY2(!model_.isEmpty(), qPrintable(error));
  }

  void engineInlinesCallsAndRuns() {
    const auto report = kiln::analyzePartitions(model_.toStdString(), cpuOnly());
    QVERIFY2(report.isOk(), report.isOk() ? "" : report.status().toString().c_str());
    QStringList placed;
    for (const auto& node : report.value().graphs.at(0).nodes) placed << QString::fromStdString(node.node);
    QCOMPARE(placed,
             (QStringList{QStringLiteral("'stem' (Relu)"), QStringLiteral("'block/scale_mul' (Mul)"),
                          QStringLiteral("'block/shift_add' (Add)"), QStringLiteral("'block/squash' (Tanh)"),
                          QStringLiteral("'head' (Sigmoid)")}));
    auto session = kiln::Session::create(model_.toStdString(), cpuOnly());
    QVERIFY2(session.isOk(), session.isOk() ? "" : session.status().toString().c_str());
    std::vector<float> x(4 * 8 * 8);
    for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(i % 7) - 3.0f;
    auto input = kiln::Tensor::fromVector<float>({1, 4, 8, 8}, x);
    auto outputs = session.value()->run({{"x", input}});
    QVERIFY2(outputs.isOk(), outputs.isOk() ? "" : outputs.status().toString().c_str());
    const float* y = outputs.value().at(0).tensor.data<float>();
    for (size_t i = 0; i < x.size(); ++i) {
      // alpha = 0.5 comes through the attribute reference; bias 0.25 through the formal input B.
      const double expected = 1 / (1 + std::exp(-std::tanh(std::max(0.0f, x[i]) * 0.5 + 0.25)));
      QVERIFY2(std::abs(y[i] - expected) < 1e-5, qPrintable(QStringLiteral("element %1").arg(i)));
    }
  }

  void functionCallingItselfIsAnErrorNotAHang() {
    QString error;
    const QString model = kiln::testing::makeFunctionModel(dir_.path(), &error, true);
    QVERIFY2(!model.isEmpty(), qPrintable(error));
    const auto report = kiln::analyzePartitions(model.toStdString(), cpuOnly());
    QVERIFY(!report.isOk());
    QCOMPARE(report.status().code(), kiln::StatusCode::INVALID_GRAPH);
    QVERIFY2(QString::fromStdString(report.status().toString()).contains(QStringLiteral("calls itself")),
             report.status().toString().c_str());
    // Described as written, to a bounded depth: the studio still opens it.
    const auto info = kiln::inspectModel(model.toStdString());
    QVERIFY(info.isOk());
    QCOMPARE(info.value().subgraphs.size(),
             size_t(8));  // 8 levels of calls described, then the call stays plain
  }

  void engineDescribesTheBodyAtItsCall() {
    const auto info = kiln::inspectModel(model_.toStdString());
    QVERIFY(info.isOk());
    QCOMPARE(info.value().nodes.size(), size_t(3));  // the call, as written
    QCOMPARE(QString::fromStdString(info.value().nodes[1].localFunction),
             QStringLiteral("custom:ScaleShift"));
    QCOMPARE(info.value().subgraphs.size(), size_t(1));
    const kiln::SubgraphInfo& body = info.value().subgraphs[0];
    QCOMPARE(QString::fromStdString(body.path), kBody);
    QCOMPARE(QString::fromStdString(body.function), QStringLiteral("custom:ScaleShift"));
    QCOMPARE(body.ownerIndex, int64_t(1));
    QCOMPARE(body.nodes.size(), size_t(4));
    QCOMPARE(body.inputs.size(), size_t(2));
    QCOMPARE(QString::fromStdString(body.inputs[1].name), QStringLiteral("B"));
    QCOMPARE(body.inputs[0].dtype, kiln::DataType::FLOAT);  // typed as the call's value 'relu'
    QCOMPARE(QString::fromStdString(body.outputs[0].name), QStringLiteral("Y"));
    const kiln::NodeInfo& alpha = body.nodes[0];
    QCOMPARE(QString::fromStdString(alpha.name), QStringLiteral("alpha_const"));
    QCOMPARE(alpha.attributes.size(), size_t(1));
    QCOMPARE(QString::fromStdString(alpha.attributes[0].second), QStringLiteral("@alpha = 0.5"));
  }

  void documentDrawsCallAndBody() {
    const auto info = kiln::inspectModel(model_.toStdString());
    QVERIFY(info.isOk());
    const GraphDocument doc = GraphDocument::build(
        info.value(), kiln::analyzePartitions(model_.toStdString(), cpuOnly()), std::nullopt);
    const GraphNode& call = doc.nodes()[nodeNamed(doc, QStringLiteral("block"))];
    QCOMPARE(call.bodies, QStringList{kBody});
    QVERIFY(!call.removedByOptimizer);
    QVERIFY(!call.cpuFallback());
    // 3 nodes: the optimizer folds alpha_const (its value known once inlined) into an initializer.
    QCOMPARE(call.executionProvider, QStringLiteral("CPUExecutionProvider"));
    QCOMPARE(call.partition, QStringLiteral("cpu_0"));  // drawn in the partition running its inlined nodes
    QVERIFY2(
        call.functionNote.contains(QStringLiteral("inlined at load: its 3 nodes run as 'block/...' on CPU")),
        qPrintable(call.functionNote));
    const auto body = doc.body(kBody);
    QVERIFY(body);
    // Formal inputs and outputs are the body's inputs and outputs; its nodes take their inlined copies' EP.
    QCOMPARE(body->nodes()[nodeNamed(*body, QStringLiteral("X"))].kind, GraphNode::Kind::GraphInput);
    QCOMPARE(body->nodes()[nodeNamed(*body, QStringLiteral("B"))].kind, GraphNode::Kind::GraphInput);
    QCOMPARE(body->nodes()[nodeNamed(*body, QStringLiteral("Y"))].kind, GraphNode::Kind::GraphOutput);
    QCOMPARE(body->nodes()[nodeNamed(*body, QStringLiteral("squash"))].executionProvider,
             QStringLiteral("CPUExecutionProvider"));
    QVERIFY(
        !body->nodes()[nodeNamed(*body, QStringLiteral("alpha_const"))].folded);  // its value is a reference
    QStringList crumbs;
    for (const auto& c : GraphDocument::breadcrumb(doc.modelInfo(), kBody)) crumbs << c.text;
    QCOMPARE(crumbs, (QStringList{QStringLiteral("main"), QStringLiteral("block"),
                                  QStringLiteral("custom:ScaleShift")}));
  }

  void doubleClickOpensBodyAndDetailsShowReferences() {
    GraphPanel panel;
    panel.resize(1000, 700);
    panel.show();
    QVERIFY(waitForLayout(panel, [&] { panel.openModel(model_); }));
    const int block = nodeNamed(*panel.document(), QStringLiteral("block"));
    panel.selectNode(block);
    QVERIFY2(panel.detailsView()->text().contains(
                 QStringLiteral("model-local function custom:ScaleShift, inlined at load")),
             qPrintable(panel.detailsView()->text()));
    QVERIFY(panel.detailsView()->text().contains(QStringLiteral("Open custom:ScaleShift")));
    auto* item = panel.view()->nodeItem(block);
    QVERIFY(item);
    panel.view()->centerOn(item);
    const QPoint at = panel.view()->mapFromScene(item->sceneBoundingRect().center());
    QVERIFY(
        waitForLayout(panel, [&] { QTest::mouseDClick(panel.view()->viewport(), Qt::LeftButton, {}, at); }));
    QCOMPARE(panel.currentGraphPath(), kBody);
    QCOMPARE(panel.breadcrumbText(), QStringLiteral("main \u25b8 block \u25b8 custom:ScaleShift"));
    QVERIFY(panel.view()->nodeItem(nodeNamed(*panel.document(), QStringLiteral("X"))));
    panel.selectNode(nodeNamed(*panel.document(), QStringLiteral("alpha_const")));
    QVERIFY2(panel.detailsView()->text().contains(QStringLiteral("@alpha = 0.5")),
             qPrintable(panel.detailsView()->text()));
    auto* crumb = panel.findChild<QLabel*>(QStringLiteral("graphBreadcrumb"));
    QVERIFY(crumb);
    QVERIFY(waitForLayout(panel, [&] { emit crumb->linkActivated(QStringLiteral("main#block")); }));
    QCOMPARE(panel.currentGraphPath(), QStringLiteral("main"));
  }

  void searchTableAndSummaryCoverTheBody() {
    GraphPanel panel;
    panel.resize(1000, 700);
    QVERIFY(waitForLayout(panel, [&] { panel.openModel(model_); }));
    QVERIFY(waitForLayout(panel, [&] { QCOMPARE(panel.search(QStringLiteral("shift_add")), 1); }));
    QCOMPARE(panel.currentGraphPath(), kBody);
    auto* item = panel.view()->nodeItem(nodeNamed(*panel.document(), QStringLiteral("shift_add")));
    QVERIFY(item && item->isSelected());

    const auto info = kiln::inspectModel(model_.toStdString());
    QVERIFY(info.isOk());
    auto shared = std::make_shared<const kiln::ModelInfo>(info.value());
    kiln::bridge::NodeTableModel table;
    table.setModelInfo(shared);
    QCOMPARE(table.rowCount(), 3 + 4);
    bool found = false;
    for (int row = 0; row < table.rowCount(); ++row) {
      if (table.data(table.index(row, kiln::bridge::NodeTableModel::Name)).toString() !=
          QStringLiteral("squash"))
        continue;
      found = true;
      QCOMPARE(table.graphPath(row), kBody);
    }
    QVERIFY(found);
    kiln::studio::ModelSummaryView summary;
    summary.showModel(shared.get());
    QCOMPARE(summary.valueOf(QStringLiteral("Graphs"), QStringLiteral("block.custom:ScaleShift")),
             QStringLiteral("4 nodes"));
    QCOMPARE(summary.valueOf(QStringLiteral("Operators"), QStringLiteral("Tanh")), QStringLiteral("1"));
  }

 private:
  QTemporaryDir dir_;
  QString model_;
};

QTEST_MAIN(TestFunctions)
#include "tst_functions.moc"
