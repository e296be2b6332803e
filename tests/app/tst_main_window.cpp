// MainWindow end to end: open tiny_cnn.onnx through the real loader and engine, check the node table and the
// summary against the engine's own ModelInfo, and check that bad paths report errors without crashing.
#include <QFile>
#include <QMenu>
#include <QMessageBox>
#include <QMimeData>
#include <QSettings>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QTabWidget>
#include <QTemporaryDir>
#include <QTest>
#include <QUrl>

#include <set>

#include "binary_inspector.h"
#include "environment_info.h"
#include "kiln/model_info.h"
#include "kiln/version.h"
#include "main_window.h"
#include "model_summary_view.h"
#include "node_table_model.h"
#include "recent_files.h"

using kiln::bridge::NodeTableModel;
using kiln::studio::BinaryInspector;
using kiln::studio::MainWindow;

namespace {

constexpr int kLoadTimeoutMs = 30000;

// Writes `bytes` to `name` in `dir`; returns its path, or "" when it cannot.
QString writeFile(const QTemporaryDir& dir, const QString& name, const QByteArray& bytes) {
  const QString path = dir.filePath(name);
  QFile file(path);
  if (!file.open(QIODevice::WriteOnly) || file.write(bytes) != bytes.size()) return {};
  return path;
}

QString tinyCnnPath() { return QStringLiteral(KILN_TEST_MODELS_DIR "/tiny_cnn.onnx"); }

QString cell(const NodeTableModel* model, int row, int column) {
  return model->data(model->index(row, column)).toString();
}

}  // namespace

class TestMainWindow : public QObject {
  Q_OBJECT

 private slots:
  void initTestCase() {
    QVERIFY2(QFile::exists(tinyCnnPath()), qPrintable(QStringLiteral("missing test model ") + tinyCnnPath()));
    // Settings (recent files, window state) go to a throw-away test location, never the user's.
    QStandardPaths::setTestModeEnabled(true);
    QCoreApplication::setOrganizationName(QStringLiteral("KilnTest"));
    QCoreApplication::setApplicationName(QStringLiteral("tst_main_window"));
  }

  void init() { QSettings().clear(); }

  void opensModelAndListsNodes() {
    MainWindow window;
    QSignalSpy loaded(&window, &MainWindow::modelLoaded);
    window.openModel(tinyCnnPath());
    QVERIFY(loaded.wait(kLoadTimeoutMs));
    QVERIFY2(window.lastError().isEmpty(), qPrintable(window.lastError()));

    // The engine's own description is the reference: the table must render exactly its nodes, in order.
    const auto expected = kiln::inspectModel(tinyCnnPath().toStdString());
    QVERIFY2(expected.isOk(), expected.status().toString().c_str());
    const NodeTableModel* table = window.nodeTableModel();
    QCOMPARE(table->rowCount(), static_cast<int>(expected->nodes.size()));
    std::set<QString> opTypes;
    for (int row = 0; row < table->rowCount(); ++row) {
      const kiln::NodeInfo& node = expected->nodes[static_cast<size_t>(row)];
      QCOMPARE(cell(table, row, NodeTableModel::Name), QString::fromStdString(node.name));
      QCOMPARE(cell(table, row, NodeTableModel::OpType), QString::fromStdString(node.opType));
      opTypes.insert(cell(table, row, NodeTableModel::OpType));
    }
    for (const char* op : {"Conv", "Relu", "MaxPool", "Gemm", "Softmax"}) {
      QVERIFY2(opTypes.count(QString::fromLatin1(op)) == 1, op);
    }

    // Shape inference reaches every node output of this static-shape model.
    for (int row = 0; row < table->rowCount(); ++row) {
      const QString types = cell(table, row, NodeTableModel::OutputTypes);
      QVERIFY2(types.startsWith(QStringLiteral("float32[")) && !types.contains(QLatin1Char('?')), qPrintable(types));
    }

    QCOMPARE(window.windowTitle(), QStringLiteral("Kiln Studio \u2014 tiny_cnn.onnx"));
    QVERIFY2(window.loadTimeText().startsWith(QStringLiteral("Loaded in ")), qPrintable(window.loadTimeText()));
    const kiln::studio::ModelSummaryView* summary = window.summaryView();
    QCOMPARE(summary->valueOf(QStringLiteral("Model"), QStringLiteral("IR version")),
             QString::number(expected->irVersion));
    QCOMPARE(summary->valueOf(QStringLiteral("Initializers"), QStringLiteral("Count")),
             QString::number(expected->initializerCount));
    QVERIFY(expected->initializerCount > 0);
    QVERIFY(!expected->inputs.empty());
    QVERIFY(summary->valueOf(QStringLiteral("Inputs"), QString::fromStdString(expected->inputs[0].name))
                .startsWith(QStringLiteral("float32[")));
  }

  void missingFileReportsError() {
    MainWindow window;
    QSignalSpy failed(&window, &MainWindow::loadFailed);
    window.openModel(QStringLiteral("/nonexistent/dir/missing.onnx"));
    QVERIFY(failed.wait(kLoadTimeoutMs));
    QVERIFY(!window.lastError().isEmpty());
    QCOMPARE(failed.first().first().toString(), window.lastError());
    QCOMPARE(window.nodeTableModel()->rowCount(), 0);
    QCOMPARE(window.windowTitle(), QStringLiteral("Kiln Studio"));
    QVERIFY(window.modelInfo() == nullptr);

    auto* box = window.findChild<QMessageBox*>();
    QVERIFY(box != nullptr);
    QVERIFY(box->isVisible());
    QVERIFY(box->text().contains(QStringLiteral("missing.onnx")));
    QCOMPARE(box->informativeText(), window.lastError());
  }

  void garbageFileReportsError() {
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    const QString path = writeFile(dir, QStringLiteral("garbage.onnx"), "this is not a protobuf \xff\xfe\x01\x02 model");
    QVERIFY(!path.isEmpty());

    MainWindow window;
    QSignalSpy failed(&window, &MainWindow::loadFailed);
    window.openModel(path);
    QVERIFY(failed.wait(kLoadTimeoutMs));
    QVERIFY(!window.lastError().isEmpty());
    QCOMPARE(window.nodeTableModel()->rowCount(), 0);
  }

  // File > Open (and drops, and recent files) of a context binary open the binary inspector, not the model
  // loader's "not a valid ONNX model" (issue 33 item 8): whatever the file is called.
  void contextBinaryOpensTheInspector() {
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    // A Kiln binary's magic, the rest damaged.
    const QString path = writeFile(dir, QStringLiteral("weights.dat"), QByteArray("KILNVKCB") + QByteArray(120, '\0'));
    QVERIFY(!path.isEmpty());

    MainWindow window;
    QSignalSpy failed(&window, &MainWindow::loadFailed);
    QSignalSpy inspected(window.binaryInspector(), &BinaryInspector::inspected);
    window.openModel(path);
    QCOMPARE(window.tabs()->currentWidget(), static_cast<QWidget*>(window.binaryInspector()));
    QTRY_VERIFY_WITH_TIMEOUT(inspected.count() > 0 || !window.binaryInspector()->lastError().isEmpty(), kLoadTimeoutMs);
    QCOMPARE(failed.count(), 0);
    QVERIFY(window.lastError().isEmpty());
  }

  void failedLoadKeepsPreviousModel() {
    MainWindow window;
    QSignalSpy loaded(&window, &MainWindow::modelLoaded);
    QSignalSpy failed(&window, &MainWindow::loadFailed);
    window.openModel(tinyCnnPath());
    QVERIFY(loaded.wait(kLoadTimeoutMs));
    const int rows = window.nodeTableModel()->rowCount();

    window.openModel(QStringLiteral("/nonexistent/other.onnx"));
    QVERIFY(failed.wait(kLoadTimeoutMs));
    QCOMPARE(window.nodeTableModel()->rowCount(), rows);
    QCOMPARE(window.windowTitle(), QStringLiteral("Kiln Studio \u2014 tiny_cnn.onnx"));
  }

  void newerOpenSupersedesPending() {
    MainWindow window;
    QSignalSpy loaded(&window, &MainWindow::modelLoaded);
    QSignalSpy failed(&window, &MainWindow::loadFailed);
    window.openModel(QStringLiteral("/nonexistent/first.onnx"));
    window.openModel(tinyCnnPath());
    QVERIFY(loaded.wait(kLoadTimeoutMs));
    QTest::qWait(50);  // a stale failure, if one leaked through, would arrive by now
    QCOMPARE(failed.count(), 0);
    QVERIFY(window.lastError().isEmpty());
    QVERIFY(window.nodeTableModel()->rowCount() > 0);
  }

  // A loaded model enters File > Open Recent, survives into a new window (QSettings) and reopens from there.
  void recentFilesPersistAndReopen() {
    {
      MainWindow window;
      QVERIFY(!window.recentMenu()->isEnabled());
      QSignalSpy loaded(&window, &MainWindow::modelLoaded);
      window.openModel(tinyCnnPath());
      QVERIFY(loaded.wait(kLoadTimeoutMs));
      QVERIFY(window.recentMenu()->isEnabled());
    }
    MainWindow window;
    const QList<QAction*> actions = window.recentMenu()->actions();
    QVERIFY(!actions.isEmpty());
    QCOMPARE(actions.first()->text(), kiln::bridge::recentFileLabel(0, tinyCnnPath()));
    QVERIFY(actions.first()->text().startsWith(QStringLiteral("&1 tiny_cnn.onnx  (")));
    QCOMPARE(actions.first()->toolTip(), QFileInfo(tinyCnnPath()).absoluteFilePath());
    QSignalSpy loaded(&window, &MainWindow::modelLoaded);
    actions.first()->trigger();
    QVERIFY(loaded.wait(kLoadTimeoutMs));
    QCOMPARE(window.windowTitle(), QStringLiteral("Kiln Studio \u2014 tiny_cnn.onnx"));
  }

  // The window comes back at the size it was closed at (issue 33 item 8: kiln-studio's main() used to resize every
  // new window to 1280x760 after the geometry was restored).
  void windowSizeIsRestored() {
    {
      MainWindow window;
      window.show();
      window.resize(900, 610);
      QTRY_COMPARE(window.size(), QSize(900, 610));
      window.close();
    }
    MainWindow window;
    QCOMPARE(window.size(), QSize(900, 610));
  }

  void failedOpenStaysOutOfRecentFiles() {
    MainWindow window;
    QSignalSpy failed(&window, &MainWindow::loadFailed);
    window.openModel(QStringLiteral("/nonexistent/missing.onnx"));
    QVERIFY(failed.wait(kLoadTimeoutMs));
    QVERIFY(!window.recentMenu()->isEnabled());
  }

  void helpMenuOpensTheBundledSample() {
    QVERIFY(!kiln::bridge::sampleModelPath().isEmpty());
    MainWindow window;
    QSignalSpy loaded(&window, &MainWindow::modelLoaded);
    QVERIFY(window.openSampleModel());
    QVERIFY(loaded.wait(kLoadTimeoutMs));
    QCOMPARE(QString::fromStdString(window.modelInfo()->path), kiln::bridge::sampleModelPath());
  }

  void droppedModelOpens() {
    MainWindow window;
    window.show();  // QApplication delivers drops only to visible widgets that accept them
    QVERIFY(QTest::qWaitForWindowExposed(&window));
    QSignalSpy loaded(&window, &MainWindow::modelLoaded);
    QMimeData mime;
    mime.setUrls({QUrl::fromLocalFile(QStringLiteral("/tmp/notes.txt")), QUrl::fromLocalFile(tinyCnnPath())});
    // As a real drag does: enter (which the window must accept, making it the drop target), then drop.
    QDragEnterEvent enter(QPoint(10, 10), Qt::CopyAction, &mime, Qt::LeftButton, Qt::NoModifier);
    QApplication::sendEvent(&window, &enter);
    QVERIFY(enter.isAccepted());
    QDropEvent drop(QPointF(10, 10), Qt::CopyAction, &mime, Qt::LeftButton, Qt::NoModifier);
    QApplication::sendEvent(&window, &drop);
    QVERIFY(loaded.wait(kLoadTimeoutMs));
    QCOMPARE(window.windowTitle(), QStringLiteral("Kiln Studio \u2014 tiny_cnn.onnx"));
  }

  // About names Kiln's and Qt's versions at once, and the Vulkan driver once the worker has enumerated devices.
  void aboutBoxNamesVersionsAndDriver() {
    MainWindow window;
    QVERIFY(window.aboutText().contains(QString::fromLatin1(kiln::engineVersion())));
    QVERIFY(window.aboutText().contains(QString::fromLatin1(qVersion())));
    QVERIFY(window.aboutText().contains(QStringLiteral("GPL-3.0-or-later")));
    const QAction* about = nullptr;
    for (QAction* action : window.findChildren<QAction*>()) {
      if (action->menuRole() == QAction::AboutRole) about = action;
    }
    QVERIFY(about != nullptr);
    const_cast<QAction*>(about)->trigger();
    auto* box = window.findChild<QMessageBox*>();
    QVERIFY(box != nullptr);
    const QStringList devices = kiln::bridge::describeVulkanDevices();
    QVERIFY(!devices.isEmpty());
    QTRY_VERIFY_WITH_TIMEOUT(box->text().contains(devices.first().toHtmlEscaped()), kLoadTimeoutMs);
  }
};

QTEST_MAIN(TestMainWindow)
#include "tst_main_window.moc"
