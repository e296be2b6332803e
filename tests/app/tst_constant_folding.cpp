// Constant nodes and initializers are folded into their consumer (issue 22): no Constant box is drawn, and the
// consumer's details show each constant's dtype, shape, range and first values.
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QtTest>

#include "graph_panel.h"
#include "graph_panel_waits.h"
#include "graph_view.h"
#include "if_model.h"
#include "kiln/model_info.h"
#include "kiln/partition_report.h"
#include "node_details_view.h"

using kiln::bridge::GraphDocument;
using kiln::studio::GraphPanel;
using kiln::testing::nodeNamed;
using kiln::testing::openAndWait;

class TestConstantFolding : public QObject {
  Q_OBJECT

 private slots:
  void initTestCase() {
    QVERIFY(dir_.isValid());
    QString error;
    model_ = kiln::testing::makeIfModel(dir_.path(), &error);
    QVERIFY2(!model_.isEmpty(), qPrintable(error));
  }

  void engineDescribesConstants() {
    const auto info = kiln::inspectModel(model_.toStdString());
    QVERIFY(info.isOk());
    const auto& constants = info.value().constants;
    // Initializers of main and of a body, and Constant nodes' values of main and of a body.
    for (const char* name : {"w1", "w2", "bias", "zero", "scale"}) QVERIFY2(constants.count(name), name);
    const kiln::ConstantInfo& bias = constants.at("bias");
    QCOMPARE(bias.dtype, kiln::DataType::FLOAT);
    QCOMPARE(bias.shape, (std::vector<int64_t>{1, 4, 1, 1}));
    QVERIFY(bias.hasRange);
    QCOMPARE(bias.minimum, 0.25);
    QCOMPARE(bias.maximum, 0.25);
    QCOMPARE(QString::fromStdString(bias.preview), QStringLiteral("[0.25, 0.25, 0.25, 0.25]"));
    // A body's initializer has a type like the main graph's (the details showed "bias ?").
    QVERIFY(info.value().values.count("bias"));
    QCOMPARE(info.value().values.at("bias").dtype, kiln::DataType::FLOAT);
    const kiln::ConstantInfo& w1 = constants.at("w1");
    QVERIFY(QString::fromStdString(w1.preview).endsWith(QStringLiteral(", ...]")));  // 144 values, 8 shown
    QCOMPARE(QString::fromStdString(w1.preview).count(u','), 8);
  }

  void constantNodesAreNotDrawn() {
    GraphPanel panel;
    panel.resize(1000, 700);
    QVERIFY(openAndWait(panel, model_));
    const auto doc = panel.document();
    const int zero = nodeNamed(*doc, QStringLiteral("zero_const"));
    QVERIFY(zero >= 0);
    QVERIFY(doc->nodes()[zero].folded);
    QCOMPARE(doc->foldedCount(), 1);
    QVERIFY(!panel.view()->nodeItem(zero));
    for (auto* item : panel.view()->nodeItems()) {
      QVERIFY(doc->nodes()[item->nodeIndex()].opType != QStringLiteral("Constant"));
    }
    const int gate = nodeNamed(*doc, QStringLiteral("gate"));
    QCOMPARE(doc->drawnNode(zero), gate);
    QCOMPARE(doc->nodes()[gate].constantInputs, QStringList{QStringLiteral("zero")});
    QVERIFY(panel.statusText().contains(QStringLiteral("1 constant folded")));

    // Selecting the consumer shows the constant with dtype, shape and value.
    panel.selectNode(gate);
    const QString details = panel.detailsView()->text();
    QVERIFY2(details.contains(QStringLiteral("Constants")), qPrintable(details));
    QVERIFY2(details.contains(QStringLiteral("float32[]")), qPrintable(details));
    QVERIFY(details.contains(QStringLiteral("[0.1]")));
    // Selecting the folded Constant (a search match, a Nodes-table row) selects its consumer.
    panel.selectNode(zero);
    QVERIFY(panel.view()->nodeItem(gate)->isSelected());

    // An initializer: the Conv's weights.
    panel.selectNode(nodeNamed(*doc, QStringLiteral("stem_conv")));
    const QString conv = panel.detailsView()->text();
    QVERIFY2(conv.contains(QStringLiteral("float32[4,4,3,3]")), qPrintable(conv));
    QVERIFY(conv.contains(QStringLiteral("min ")));
  }

  void constantThatIsAGraphOutputStays() {
    kiln::ModelInfo info;
    kiln::NodeInfo constant{"c", "Constant", "", {}, {"out"}, {"value"}, {}, {}};
    info.nodes.push_back(constant);
    kiln::ValueMetadata out;
    out.name = "out";
    info.outputs.push_back(out);
    const GraphDocument doc =
        GraphDocument::build(info, kiln::Result<kiln::PartitionReport>(kiln::Status(kiln::StatusCode::FAIL, "-")), std::nullopt);
    QVERIFY(!doc.nodes()[nodeNamed(doc, QStringLiteral("c"))].folded);
    QCOMPARE(doc.visibleGraph({}).edges.size(), 1);
  }

 private:
  QTemporaryDir dir_;
  QString model_;
};

QTEST_MAIN(TestConstantFolding)
#include "tst_constant_folding.moc"
