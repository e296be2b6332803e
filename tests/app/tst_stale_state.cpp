// Nothing of the previous model stays when another one opens (issue 22): the node filter and the graph search are
// cleared, the compile panel's old error goes, and the binary inspector drops the previous ctx model's EPContext rows
// when a bare context binary is inspected.
#include <QFile>
#include <QLabel>
#include <QLineEdit>
#include <QSettings>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QTableWidget>
#include <QTemporaryDir>
#include <QTest>

#include "binary_inspector.h"
#include "compile_panel.h"
#include "graph_panel.h"
#include "kiln/compiler.h"
#include "log_hub.h"
#include "main_window.h"
#include "node_table_model.h"
#include "studio_test_files.h"

using kiln::studio::BinaryInspector;
using kiln::studio::CompilePanel;
using kiln::studio::MainWindow;

namespace {

constexpr int kLoadTimeoutMs = 30000;

QString tinyCnnPath() { return QStringLiteral(KILN_TEST_MODELS_DIR "/tiny_cnn.onnx"); }

}  // namespace

class TestStaleState : public QObject {
  Q_OBJECT

 private slots:
  void initTestCase() {
    QVERIFY(dir_.isValid());
    kiln::testing::isolateStudioSettings(QStringLiteral("tst_stale_state"));
    modelB_ = dir_.filePath(QStringLiteral("b.onnx"));
    QVERIFY(QFile::copy(tinyCnnPath(), modelB_));
  }

  void searchAndFilterClearedOnNextModel() {
    MainWindow window;
    QSignalSpy loaded(&window, &MainWindow::modelLoaded);
    window.openModel(tinyCnnPath());
    QVERIFY(loaded.wait(kLoadTimeoutMs));
    auto* search = window.graphPanel()->findChild<QLineEdit*>(QStringLiteral("graphSearchEdit"));
    QVERIFY(search);
    search->setText(QStringLiteral("no_such_node_anywhere"));
    QLineEdit* filter = nullptr;
    for (QLineEdit* edit : window.findChildren<QLineEdit*>()) {
      if (edit->placeholderText().startsWith(QStringLiteral("Filter nodes"))) filter = edit;
    }
    QVERIFY(filter);
    filter->setText(QStringLiteral("no_such_node_anywhere"));
    window.openModel(modelB_);
    QVERIFY(loaded.wait(kLoadTimeoutMs));
    QCOMPARE(search->text(), QString());
    QCOMPARE(filter->text(), QString());
    QVERIFY(window.nodeTableModel()->rowCount() > 0);
  }

  void compileErrorClearedOnNextModel() {
    CompilePanel panel;
    panel.setSourceModel(tinyCnnPath());
    panel.findChild<QLineEdit*>(QStringLiteral("shapesEdit"))->setText(QStringLiteral("x=1xAx2"));  // a form error
    panel.startCompile();
    QVERIFY(!panel.lastError().isEmpty());
    auto* status = panel.findChild<QLabel*>(QStringLiteral("statusLabel"));
    QVERIFY(!status->text().isEmpty());
    panel.setSourceModel(modelB_);
    QCOMPARE(panel.lastError(), QString());
    QCOMPARE(status->text(), QString());
  }

  void inspectorDropsEpContextRowsForBareBinary() {
    const QString ctx = dir_.filePath(QStringLiteral("tiny_ctx.onnx"));
    kiln::ModelCompilationOptions options;
    options.setInputModelPath(tinyCnnPath().toStdString()).setOutputModelPath(ctx.toStdString());
    auto compiled = kiln::compileModel(options);
    QVERIFY2(compiled.isOk(), compiled.status().toString().c_str());
    BinaryInspector inspector;
    QSignalSpy inspected(&inspector, &BinaryInspector::inspected);
    inspector.inspect(ctx);
    QVERIFY(inspected.wait(kLoadTimeoutMs));
    auto* nodes = inspector.findChild<QTableWidget*>(QStringLiteral("nodeTable"));
    QVERIFY(nodes);
    QVERIFY(nodes->rowCount() > 0);
    inspector.inspect(QString::fromStdString(compiled->binaryPath));
    QVERIFY(inspected.wait(kLoadTimeoutMs));
    QCOMPARE(nodes->rowCount(), 0);
  }

 private:
  QTemporaryDir dir_;
  QString modelB_;
};

QTEST_MAIN(TestStaleState)
#include "tst_stale_state.moc"
