// Control flow (If, Loop, Scan) runs on the CPU by design: the graph must not draw it as a red "CPU fallback"
// warning, while a real fallback (a Conv the Vulkan EP rejected) still is one (issue 22).
#include <QTest>

#include "graph_document.h"
#include "graph_view.h"

using kiln::bridge::GraphNode;
using kiln::studio::GraphNodeItem;

namespace {

GraphNode rejectedNode(const QString& opType, const QString& domain = {}) {
  GraphNode node;
  node.name = QStringLiteral("n_") + opType;
  node.opType = opType;
  node.domain = domain;
  node.label = QStringLiteral("'%1' (%2)").arg(node.name, opType);
  node.executionProvider = QStringLiteral("CPUExecutionProvider");
  node.fallbackReasons << QStringLiteral("VulkanExecutionProvider: no kernel for %1").arg(opType);
  return node;
}

}  // namespace

class TestControlFlow : public QObject {
  Q_OBJECT

 private slots:
  void controlFlowIsNotAFallback_data() {
    QTest::addColumn<QString>("opType");
    QTest::addColumn<QString>("domain");
    QTest::addColumn<bool>("warning");
    QTest::newRow("If") << QStringLiteral("If") << QString() << false;
    QTest::newRow("Loop") << QStringLiteral("Loop") << QString() << false;
    QTest::newRow("Scan ai.onnx") << QStringLiteral("Scan") << QStringLiteral("ai.onnx") << false;
    QTest::newRow("Conv") << QStringLiteral("Conv") << QString() << true;
    QTest::newRow("custom If") << QStringLiteral("If") << QStringLiteral("com.example") << true;
  }
  void controlFlowIsNotAFallback() {
    QFETCH(QString, opType);
    QFETCH(QString, domain);
    QFETCH(bool, warning);
    const GraphNode node = rejectedNode(opType, domain);
    QCOMPARE(node.cpuFallback(), warning);
    QCOMPARE(node.isControlFlow(), !warning);
    const GraphNodeItem item(node, 0, QRectF(0, 0, 120, 40));
    QCOMPARE(item.isCpuFallback(), warning);
  }

  void nodeWithoutReasonsIsNeverAFallback() {
    GraphNode node = rejectedNode(QStringLiteral("Conv"));
    node.fallbackReasons.clear();
    QVERIFY(!node.cpuFallback());
  }
};

QTEST_MAIN(TestControlFlow)
#include "tst_control_flow.moc"
