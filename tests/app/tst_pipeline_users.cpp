// The SPIR-V tab's "nodes that use each pipeline" (the binary's pipeline_users section, format 1.2): for tiny_cnn
// compiled here, the nodes listed for every pipeline are the section's (kiln::readContextBinarySpirv), clicking one
// selects it in the main window's graph, and a binary written before format 1.2 (the fuzz corpus' add_relu binary)
// shows the "does not record" note instead of an empty list.
#include <QCoreApplication>
#include <QLabel>
#include <QListWidget>
#include <QSettings>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QTabWidget>
#include <QTableWidget>
#include <QTemporaryDir>
#include <QTest>

#include "binary_inspection.h"
#include "binary_inspector.h"
#include "graph_panel.h"
#include "graph_view.h"
#include "kiln/compiler.h"
#include "kiln/context_binary_parts.h"
#include "log_hub.h"
#include "main_window.h"
#include "studio_test_files.h"

using kiln::studio::BinaryInspector;
using kiln::studio::MainWindow;

namespace {

constexpr int kTimeoutMs = 60000;

QString tinyCnnPath() { return QStringLiteral(KILN_TEST_MODELS_DIR "/tiny_cnn.onnx"); }
// Written by `kiln compile` at format 1.0 and committed as a fuzz seed: no pipeline_users section.
QString formatOneOneBinary() { return QStringLiteral(KILN_SOURCE_DIR "/tests/fuzz/corpus/context_binary/add_relu_vulkan.bin"); }

}  // namespace

class TestPipelineUsers : public QObject {
  Q_OBJECT

 private slots:
  void initTestCase() {
    kiln::testing::isolateStudioSettings(QStringLiteral("tst_pipeline_users"));
    QVERIFY(dir_.isValid());
    ctxPath_ = dir_.filePath(QStringLiteral("tiny_ctx.onnx"));
    kiln::ModelCompilationOptions options;
    options.setInputModelPath(tinyCnnPath().toStdString()).setOutputModelPath(ctxPath_.toStdString());
    auto compiled = kiln::compileModel(options);
    QVERIFY2(compiled.isOk(), compiled.status().toString().c_str());
    binPath_ = QString::fromStdString(compiled->binaryPath);
  }

  void nodesListedEqualTheSection() {
    auto modules = kiln::readContextBinarySpirv(binPath_.toStdString());
    QVERIFY2(modules.isOk(), modules.status().toString().c_str());
    QVERIFY(!modules->empty());

    BinaryInspector inspector;
    QSignalSpy inspected(&inspector, &BinaryInspector::inspected);
    inspector.inspect(ctxPath_);
    QVERIFY(inspected.wait(kTimeoutMs));
    QVERIFY2(inspector.lastError().isEmpty(), qPrintable(inspector.lastError()));
    QVERIFY(inspector.pipelineUsersNote().isEmpty());
    auto* table = inspector.findChild<QTableWidget*>(QStringLiteral("spirvTable"));
    QCOMPARE(table->rowCount(), static_cast<int>(modules->size()));
    int listed = 0;
    for (int row = 0; row < table->rowCount(); ++row) {
      const auto& module = modules->at(static_cast<size_t>(row));
      QCOMPARE(table->item(row, 0)->text(), QString::fromStdString(module.key));
      QStringList expected;
      for (const auto& ref : module.nodes) {
        expected << QStringLiteral("%1 (%2)").arg(QString::fromStdString(ref.node), QString::fromStdString(ref.graph));
      }
      QVERIFY2(!expected.isEmpty(), module.key.c_str());
      inspector.selectPipeline(row);
      QCOMPARE(inspector.pipelineUserNames(), expected);
      QVERIFY(table->item(row, 4)->text().startsWith(QStringLiteral("%1: ").arg(expected.size())));
      listed += static_cast<int>(expected.size());
    }
    QVERIFY(listed >= table->rowCount());
    // A click names the node, its partition and the EPContext node running it.
    inspector.selectPipeline(0);
    QSignalSpy requested(&inspector, &BinaryInspector::nodeRequested);
    inspector.activatePipelineUser(0);
    QCOMPARE(requested.size(), 1);
    const auto& first = modules->front().nodes.front();
    QCOMPARE(requested[0][0].toString(), QString::fromStdString(first.graph));
    QCOMPARE(requested[0][1].toString(), QString::fromStdString(first.node));
    QVERIFY(!requested[0][2].toString().isEmpty());
  }

  void olderBinaryShowsTheNote() {
    BinaryInspector inspector;
    QSignalSpy inspected(&inspector, &BinaryInspector::inspected);
    inspector.inspect(formatOneOneBinary());
    QVERIFY(inspected.wait(kTimeoutMs));
    QVERIFY2(inspector.lastError().isEmpty(), qPrintable(inspector.lastError()));
    QCOMPARE(QString::fromStdString(inspector.inspection()->binaries.first().info.formatVersion), QStringLiteral("1.0"));
    QCOMPARE(inspector.pipelineUsersNote(), kiln::bridge::noPipelineUsersNote());
    QVERIFY(inspector.pipelineUsersNote().contains(QStringLiteral("does not record which nodes use each pipeline")));
    auto* table = inspector.findChild<QTableWidget*>(QStringLiteral("spirvTable"));
    QVERIFY(table->rowCount() > 0);
    QCOMPARE(table->item(0, 4)->text(), QStringLiteral("not recorded"));
    inspector.selectPipeline(0);
    QVERIFY(inspector.pipelineUserNames().isEmpty());
    QCOMPARE(inspector.findChild<QLabel*>(QStringLiteral("pipelineUsersCaption"))->text(), kiln::bridge::noPipelineUsersNote());
    QVERIFY(!inspector.disassemblyText().isEmpty());  // the rest of the tab works as before
  }

  // In the main window, a click on a listed node selects that node in the source graph (the Nodes table's jump).
  void clickSelectsTheNodeInTheGraph() {
    MainWindow window;
    window.resize(1400, 900);
    QSignalSpy loaded(&window, &MainWindow::modelLoaded);
    QSignalSpy laidOut(window.graphPanel(), &kiln::studio::GraphPanel::layoutReady);
    window.openModel(tinyCnnPath());
    QVERIFY(loaded.wait(kTimeoutMs));
    if (laidOut.isEmpty()) QVERIFY(laidOut.wait(kTimeoutMs));
    BinaryInspector* inspector = window.binaryInspector();
    QSignalSpy inspected(inspector, &BinaryInspector::inspected);
    window.inspectBinary(binPath_);
    QVERIFY(inspected.wait(kTimeoutMs));
    auto modules = kiln::readContextBinarySpirv(binPath_.toStdString());
    QVERIFY2(modules.isOk(), modules.status().toString().c_str());
    // A pipeline whose first user keeps its source name (device fusions may name a fused node anew).
    const auto source = window.graphPanel()->rootDocument();
    int row = -1;
    QString name;
    for (size_t m = 0; m < modules->size() && row < 0; ++m) {
      if (modules->at(m).nodes.empty()) continue;
      const QString candidate = QString::fromStdString(modules->at(m).nodes.front().node);
      for (const auto& node : source->nodes()) {
        if (node.name == candidate && !candidate.isEmpty()) {
          row = static_cast<int>(m);
          name = candidate;
        }
      }
    }
    QVERIFY2(row >= 0, "no pipeline user keeps a source node's name");
    inspector->selectPipeline(row);
    inspector->activatePipelineUser(0);
    QCOMPARE(window.tabs()->currentIndex(), 0);
    const int selected = window.graphPanel()->view()->selectedNode();
    QVERIFY(selected >= 0);
    QCOMPARE(window.graphPanel()->document()->nodes()[selected].name, name);
    QVERIFY(window.showPipelineUser(name, {}));
    QVERIFY(!window.showPipelineUser(QStringLiteral("no_such_node"), QStringLiteral("no_such_epcontext")));
  }

 private:
  QTemporaryDir dir_;
  QString ctxPath_, binPath_;
};

QTEST_MAIN(TestPipelineUsers)
#include "tst_pipeline_users.moc"
