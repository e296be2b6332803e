// The compile output guard (issue 22's data loss): the output path follows the open model, an existing output is
// replaced only after the user says so (Cancel leaves it byte-identical), and the Result pane belongs to the compile
// that produced it, so opening model B after compiling model A never writes over A's files.
#include <QAction>
#include <QDir>
#include <QFile>
#include <QLabel>
#include <QLineEdit>
#include <QSettings>
#include <QSignalSpy>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QTest>

#include "compile_outputs.h"
#include "compile_panel.h"
#include "kiln/compiler.h"
#include "kiln/device.h"
#include "log_hub.h"
#include "main_window.h"
#include "requirements.h"
#include "studio_test_files.h"

using kiln::app::CompileSettings;
using kiln::studio::CompilePanel;
using kiln::studio::MainWindow;
using kiln::testing::saveScreenshot;

namespace {

constexpr int kCompileTimeoutMs = 100000;
constexpr int kLoadTimeoutMs = 30000;

QString tinyCnnPath() { return QStringLiteral(KILN_TEST_MODELS_DIR "/tiny_cnn.onnx"); }
QString defaultCtx(const QString& model) { return QString::fromStdString(kiln::defaultCtxModelPath(model.toStdString())); }

QLineEdit* outputEdit(CompilePanel& panel) { return panel.findChild<QLineEdit*>(QStringLiteral("outputPathEdit")); }
QString resultText(CompilePanel& panel) { return panel.findChild<QLabel*>(QStringLiteral("resultView"))->text(); }

QByteArray readAll(const QString& path) {
  QFile file(path);
  return file.open(QIODevice::ReadOnly) ? file.readAll() : QByteArray("<unreadable>");
}

void writeFile(const QString& path, const QByteArray& bytes) {
  QFile file(path);
  QVERIFY(file.open(QIODevice::WriteOnly));
  file.write(bytes);
}

}  // namespace

class TestOutputGuard : public QObject {
  Q_OBJECT

 private slots:
  void initTestCase() {
    QVERIFY(dir_.isValid());
    kiln::testing::isolateStudioSettings(QStringLiteral("tst_output_guard"));
    modelA_ = dir_.filePath(QStringLiteral("a.onnx"));
    modelB_ = dir_.filePath(QStringLiteral("b.onnx"));
    QVERIFY(QFile::copy(tinyCnnPath(), modelA_));
    QVERIFY(QFile::copy(tinyCnnPath(), modelB_));
  }

  void outputFilesOfACompile() {
    CompileSettings settings;
    settings.inputModel = modelA_.toStdString();
    QCOMPARE(kiln::bridge::compileOutputFiles(settings),
             QStringList({dir_.filePath(QStringLiteral("a_ctx.onnx")), dir_.filePath(QStringLiteral("a_vulkan.bin"))}));
    settings.embedMode = true;
    settings.outputModel = dir_.filePath(QStringLiteral("out/x_ctx.onnx")).toStdString();
    settings.externalInitializersFile = "weights.data";
    QCOMPARE(kiln::bridge::compileOutputFiles(settings),
             QStringList({dir_.filePath(QStringLiteral("out/x_ctx.onnx")), dir_.filePath(QStringLiteral("out/weights.data"))}));
    QVERIFY(kiln::bridge::compileOutputFiles(CompileSettings{}).isEmpty());  // bad input: nothing to compile
  }

  void outputPathFollowsTheModel() {
    CompilePanel panel;
    panel.setSourceModel(modelA_);
    QCOMPARE(outputEdit(panel)->text(), defaultCtx(modelA_));
    const QString typedForA = dir_.filePath(QStringLiteral("det_ctx.onnx"));
    outputEdit(panel)->setText(typedForA);
    panel.setSourceModel(modelB_);  // the path typed for A must not carry over to B
    QCOMPARE(outputEdit(panel)->text(), defaultCtx(modelB_));
    QCOMPARE(QString::fromStdString(panel.settings().outputModel), defaultCtx(modelB_));
    panel.setSourceModel(modelA_);  // but A keeps what was typed for it
    QCOMPARE(outputEdit(panel)->text(), typedForA);
    outputEdit(panel)->setText(QString());
    panel.setSourceModel(modelB_);
    panel.setSourceModel(modelA_);  // an emptied field forgets the choice
    QCOMPARE(outputEdit(panel)->text(), defaultCtx(modelA_));
  }

  // The fields that describe one model (shapes naming its inputs, its prefix, its external initializers file) follow
  // it as the output path does (issue 33: A's shape reached B's compile, which then failed on an unknown input).
  void modelFieldsFollowTheModel() {
    CompilePanel panel;
    panel.setSourceModel(modelA_);
    auto* shapes = panel.findChild<QLineEdit*>(QStringLiteral("shapesEdit"));
    auto* prefix = panel.findChild<QLineEdit*>(QStringLiteral("prefixEdit"));
    auto* external = panel.findChild<QLineEdit*>(QStringLiteral("extInitializersEdit"));
    QVERIFY(shapes && prefix && external);
    shapes->setText(QStringLiteral("x=1x3x640x640"));
    prefix->setText(QStringLiteral("a_"));
    external->setText(QStringLiteral("a_weights.data"));
    panel.setSourceModel(modelB_);
    QVERIFY(shapes->text().isEmpty() && prefix->text().isEmpty() && external->text().isEmpty());
    QVERIFY(panel.settings().shapes.empty());
    QVERIFY(panel.settings().nodeNamePrefix.empty());
    shapes->setText(QStringLiteral("input=1x1x32x32"));
    panel.setSourceModel(modelA_);  // A's fields come back, B's stay B's
    QCOMPARE(shapes->text(), QStringLiteral("x=1x3x640x640"));
    QCOMPARE(prefix->text(), QStringLiteral("a_"));
    QCOMPARE(external->text(), QStringLiteral("a_weights.data"));
    panel.setSourceModel(modelB_);
    QCOMPARE(shapes->text(), QStringLiteral("input=1x1x32x32"));
    QVERIFY(prefix->text().isEmpty());
  }

  void existingOutputAsksAndCancelKeepsIt_data() {
    QTest::addColumn<QString>("existingName");
    QTest::newRow("ctx model") << QStringLiteral("guard_ctx.onnx");
    QTest::newRow("binary") << QStringLiteral("guard_vulkan.bin");
  }
  void existingOutputAsksAndCancelKeepsIt() {
    QFETCH(QString, existingName);
    QTemporaryDir out;
    const QString existing = out.filePath(existingName);
    const QByteArray original("A's compiled output, which must survive");
    writeFile(existing, original);
    CompilePanel panel;
    panel.setSourceModel(modelB_);
    outputEdit(panel)->setText(out.filePath(QStringLiteral("guard_ctx.onnx")));
    QStringList asked;
    panel.setReplaceQuestion([&asked](const QStringList& files) {
      asked = files;
      return false;
    });
    QSignalSpy failed(&panel, &CompilePanel::compileFailed);
    panel.startCompile();
    QCOMPARE(asked, QStringList{QFileInfo(existing).absoluteFilePath()});
    QVERIFY(!panel.isRunning());
    QCOMPARE(failed.size(), 1);
    QCOMPARE(failed.first().at(0).toString(), QStringLiteral("CANCELLED"));
    QCOMPARE(readAll(existing), original);
    QCOMPARE(QDir(out.path()).entryList(QDir::Files | QDir::Hidden), QStringList{existingName});
  }

  // End to end on lavapipe: compile A, open B, and B's compile goes beside B; aiming B at A's files asks first.
  void resultPaneBelongsToItsCompile() {
    const auto devices = kiln::listVulkanDevices();
    if (!devices.isOk() || devices->empty()) {
      if (kiln::testing::vulkanRequired()) QFAIL("KILN_REQUIRE_VULKAN=1 but no Vulkan device");
      QSKIP("no Vulkan device (lavapipe: mesa-vulkan-drivers)");
    }
    CompilePanel panel;
    panel.resize(1100, 760);
    panel.show();
    int questions = 0;
    panel.setReplaceQuestion([&questions](const QStringList&) { return ++questions, false; });
    panel.setSourceModel(modelA_);
    QSignalSpy compiled(&panel, &CompilePanel::compiled);
    QSignalSpy failed(&panel, &CompilePanel::compileFailed);
    panel.startCompile();
    QVERIFY2(compiled.wait(kCompileTimeoutMs) || !failed.isEmpty(), "no result in time");
    QVERIFY2(failed.isEmpty(), qPrintable(panel.lastError()));
    QCOMPARE(questions, 0);  // nothing existed
    QCOMPARE(panel.resultSourceModel(), modelA_);
    QVERIFY2(resultText(panel).contains(modelA_), qPrintable(resultText(panel)));
    const QString ctxA = defaultCtx(modelA_);
    const QString binA = QString::fromStdString(kiln::defaultContextBinaryPath(ctxA.toStdString()));
    const QByteArray ctxBytes = readAll(ctxA), binBytes = readAll(binA);
    QVERIFY(!binBytes.isEmpty());

    panel.setSourceModel(modelB_);
    saveScreenshot(&panel, QStringLiteral("compile-panel-after-second-model.png"));
    QCOMPARE(panel.resultSourceModel(), QString());
    QVERIFY2(resultText(panel).contains(QStringLiteral("b.onnx")), qPrintable(resultText(panel)));
    QVERIFY2(!resultText(panel).contains(modelA_), qPrintable(resultText(panel)));
    QCOMPARE(outputEdit(panel)->text(), defaultCtx(modelB_));

    outputEdit(panel)->setText(ctxA);  // the user aims B at A's output: asked, refused, A intact
    panel.startCompile();
    QCOMPARE(questions, 1);
    QVERIFY(!panel.isRunning());
    QCOMPARE(readAll(ctxA), ctxBytes);
    QCOMPARE(readAll(binA), binBytes);

    // Recompiling A onto the files this panel just wrote for A needs no question.
    panel.setSourceModel(modelA_);
    QCOMPARE(outputEdit(panel)->text(), ctxA);
    compiled.clear();
    failed.clear();
    panel.startCompile();
    QVERIFY2(compiled.wait(kCompileTimeoutMs) || !failed.isEmpty(), "no result in time");
    QVERIFY2(failed.isEmpty(), qPrintable(panel.lastError()));
    QCOMPARE(questions, 1);
  }

  // The scenario through the window: type an output for A, compile with Ctrl+B, open B, Ctrl+B again: B's files go beside B and
  // A's stay byte-identical.
  void ctrlBOnSecondModelLeavesFirstIntact() {
    const auto devices = kiln::listVulkanDevices();
    if (!devices.isOk() || devices->empty()) {
      if (kiln::testing::vulkanRequired()) QFAIL("KILN_REQUIRE_VULKAN=1 but no Vulkan device");
      QSKIP("no Vulkan device (lavapipe: mesa-vulkan-drivers)");
    }
    QTemporaryDir work;
    const QString a = work.filePath(QStringLiteral("det.onnx")), b = work.filePath(QStringLiteral("rec.onnx"));
    QVERIFY(QFile::copy(tinyCnnPath(), a));
    QVERIFY(QFile::copy(tinyCnnPath(), b));
    MainWindow window;
    CompilePanel* panel = window.compilePanel();
    int questions = 0;
    panel->setReplaceQuestion([&questions](const QStringList&) { return ++questions, false; });
    QAction* compileAction = nullptr;
    for (QAction* action : window.findChildren<QAction*>()) {
      if (action->shortcut() == QKeySequence(Qt::CTRL | Qt::Key_B)) compileAction = action;
    }
    QVERIFY(compileAction);
    QSignalSpy loaded(&window, &MainWindow::modelLoaded);
    QSignalSpy compiled(panel, &CompilePanel::compiled);
    window.openModel(a);
    QVERIFY(loaded.wait(kLoadTimeoutMs));
    const QString ctxA = work.filePath(QStringLiteral("det_typed_ctx.onnx"));
    const QString binA = work.filePath(QStringLiteral("det_typed_vulkan.bin"));
    outputEdit(*panel)->setText(ctxA);  // typed for A: it must not carry over to B
    compileAction->trigger();
    QVERIFY(compiled.wait(kCompileTimeoutMs));
    QCOMPARE(compiled.last().at(0).toString(), ctxA);
    const QByteArray ctxBytes = readAll(ctxA), binBytes = readAll(binA);
    QVERIFY(!binBytes.isEmpty());

    window.openModel(b);
    QVERIFY(loaded.wait(kLoadTimeoutMs));
    QCOMPARE(panel->resultSourceModel(), QString());
    compileAction->trigger();
    QVERIFY(compiled.wait(kCompileTimeoutMs));
    QCOMPARE(compiled.last().at(0).toString(), work.filePath(QStringLiteral("rec_ctx.onnx")));
    QCOMPARE(panel->resultSourceModel(), b);
    QCOMPARE(questions, 0);
    QCOMPARE(readAll(ctxA), ctxBytes);
    QCOMPARE(readAll(binA), binBytes);
    QVERIFY(QFile::exists(work.filePath(QStringLiteral("rec_vulkan.bin"))));
  }

 private:
  QTemporaryDir dir_;
  QString modelA_, modelB_;
};

QTEST_MAIN(TestOutputGuard)
#include "tst_output_guard.moc"
