// CompilePanel end to end on lavapipe: compile tiny_cnn.onnx through the form and the real engine, watching progress,
// the stage list, the log view and the files; cancel after the first progress event and find the folder empty;
// refuse an existing output without touching it; and the option mapping `kiln compile` uses.
#include <QCheckBox>
#include <QComboBox>
#include <QDir>
#include <QFile>
#include <QLabel>
#include <QLineEdit>
#include <QPlainTextEdit>
#include <QProgressBar>
#include <QRadioButton>
#include <QPushButton>
#include <QSemaphore>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>
#include <QTreeWidget>

#include <atomic>
#include <cstdlib>

#include "compile_job.h"
#include "compile_panel.h"
#include "kiln/compiler.h"
#include "kiln/device.h"
#include "kiln/epcontext.h"
#include "log_hub.h"
#include "requirements.h"

using kiln::bridge::CompileJob;
using kiln::studio::CompilePanel;

namespace {

constexpr int kCompileTimeoutMs = 100000;  // lavapipe compiles on the CPU, on a machine shared by several builds

QString tinyCnnPath() { return QStringLiteral(KILN_TEST_MODELS_DIR "/tiny_cnn.onnx"); }

template <class W>
W* child(CompilePanel& panel, const char* name) {
  W* widget = panel.findChild<W*>(QString::fromLatin1(name));
  if (!widget) qFatal("CompilePanel has no %s", name);
  return widget;
}

// Everything in `dir`, hidden files included: temporary names must not survive a cancel either.
QStringList folderEntries(const QString& dir) {
  return QDir(dir).entryList(QDir::AllEntries | QDir::Hidden | QDir::System | QDir::NoDotAndDotDot);
}

QStringList treeColumn(const QTreeWidget* tree, int column) {
  QStringList texts;
  for (int i = 0; i < tree->topLevelItemCount(); ++i) texts << tree->topLevelItem(i)->text(column);
  return texts;
}

}  // namespace

class TestCompilePanel : public QObject {
  Q_OBJECT

 private slots:
  void initTestCase() {
    QVERIFY2(QFile::exists(tinyCnnPath()), qPrintable(QStringLiteral("missing test model ") + tinyCnnPath()));
    kiln::bridge::LogHub::instance()->setEchoToStderr(false);  // the refused-compile test provokes an error line
    const auto devices = kiln::listVulkanDevices();
    if (!devices.isOk() || devices->empty()) {
      if (kiln::testing::vulkanRequired()) {
        QFAIL("KILN_REQUIRE_VULKAN=1 but no Vulkan device");
      }
      QSKIP("no Vulkan device (lavapipe: mesa-vulkan-drivers)");
    }
  }

  void compilesWithProgressStagesAndLog() {
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    CompilePanel panel;
    panel.resize(1100, 760);
    panel.show();
    panel.setSourceModel(tinyCnnPath());
    auto* output = child<QLineEdit>(panel, "outputPathEdit");
    QCOMPARE(output->text(), QString::fromStdString(kiln::defaultCtxModelPath(tinyCnnPath().toStdString())));
    const QString ctxPath = dir.filePath(QStringLiteral("tiny_ctx.onnx"));
    output->setText(ctxPath);
    child<QComboBox>(panel, "logLevelCombo")->setCurrentIndex(0);  // debug: the device choice is logged

    // The device list arrives from its thread; compile for the first listed device explicitly.
    if (!panel.devicesListed()) QVERIFY(QSignalSpy(&panel, &CompilePanel::devicesReady).wait(30000));
    auto* devices = child<QComboBox>(panel, "deviceCombo");
    QVERIFY2(devices->count() >= 2, qPrintable(devices->itemText(devices->count() - 1)));
    devices->setCurrentIndex(1);
    QCOMPARE(panel.settings().device, std::string("0"));

    QSignalSpy progressed(&panel, &CompilePanel::progressed);
    QSignalSpy compiled(&panel, &CompilePanel::compiled);
    QSignalSpy failed(&panel, &CompilePanel::compileFailed);
    auto* button = child<QPushButton>(panel, "compileButton");
    QTest::mouseClick(button, Qt::LeftButton);
    QVERIFY(panel.isRunning());
    QCOMPARE(button->text(), QStringLiteral("Cancel"));
    QVERIFY(!output->isEnabled());
    QVERIFY2(compiled.wait(kCompileTimeoutMs) || !failed.isEmpty(), "no result in time");
    QVERIFY2(failed.isEmpty(), qPrintable(panel.lastError()));
    QCOMPARE(compiled.count(), 1);
    QCOMPARE(compiled.first().at(0).toString(), ctxPath);
    QVERIFY(!panel.isRunning());
    QCOMPARE(button->text(), QStringLiteral("Compile"));
    QVERIFY(output->isEnabled());

    // Progress: the engine's stages in its order, each within its bounds, ending with the files written.
    QStringList firstSeen;
    qint64 lastCompileDone = -1;
    for (const QList<QVariant>& event : progressed) {
      const QString stage = event.at(0).toString();
      const qint64 done = event.at(1).toLongLong(), total = event.at(2).toLongLong();
      QVERIFY2(done >= 0 && (total == 0 || done <= total), qPrintable(stage));
      if (!firstSeen.contains(stage)) firstSeen << stage;
      if (stage == QLatin1String("compile")) {
        QVERIFY(done >= lastCompileDone);
        lastCompileDone = done;
      }
    }
    QVERIFY2(progressed.size() >= 6, qPrintable(firstSeen.join(QStringLiteral(", "))));
    QCOMPARE(progressed.first().at(0).toString(), QStringLiteral("load"));
    QCOMPARE(progressed.last().at(0).toString(), QStringLiteral("write"));
    QCOMPARE(progressed.last().at(1).toLongLong(), 1);
    const QStringList order = {QStringLiteral("load"), QStringLiteral("optimize"), QStringLiteral("partition"),
                               QStringLiteral("compile"), QStringLiteral("write")};
    for (qsizetype i = 1; i < order.size(); ++i) {
      QVERIFY2(firstSeen.indexOf(order[i - 1]) >= 0 && firstSeen.indexOf(order[i - 1]) < firstSeen.indexOf(order[i]),
               qPrintable(firstSeen.join(QStringLiteral(", "))));
    }
    QVERIFY2(firstSeen.filter(QStringLiteral(": glslang")).size() >= 1, qPrintable(firstSeen.join(QStringLiteral(", "))));

    // The stage list shows one row per stage, in first-seen order, with its last count and an elapsed time.
    auto* stages = child<QTreeWidget>(panel, "stageTree");
    QCOMPARE(treeColumn(stages, 0), firstSeen);
    const int writeRow = static_cast<int>(firstSeen.indexOf(QStringLiteral("write")));
    QCOMPARE(stages->topLevelItem(writeRow)->text(1), QStringLiteral("1 / 1"));
    // Stages the engine reports only as they start read "done" once later ones ran.
    QCOMPARE(stages->topLevelItem(static_cast<int>(firstSeen.indexOf(QStringLiteral("optimize"))))->text(1),
             QStringLiteral("done"));
    for (const QString& elapsed : treeColumn(stages, 2)) QVERIFY2(elapsed.endsWith(QStringLiteral(" ms")) ||
                                                                      elapsed.endsWith(QStringLiteral(" s")), qPrintable(elapsed));
    auto* bar = child<QProgressBar>(panel, "overallProgress");
    QCOMPARE(bar->value(), bar->maximum());

    // The files: exactly what the result names, nothing else (no temporary leftovers), and a loadable ctx model.
    const QStringList files = folderEntries(dir.path());
    QVERIFY2(files.contains(QStringLiteral("tiny_ctx.onnx")), qPrintable(files.join(QStringLiteral(", "))));
    QCOMPARE(files.size(), 2);  // the ctx model and its binary (embed mode 0)
    const auto info = kiln::inspectEpContextModel(ctxPath.toStdString());
    QVERIFY2(info.isOk(), info.status().toString().c_str());
    QVERIFY(!info->nodes.empty());
    for (const kiln::EpContextNodeInfo& node : info->nodes) {
      QVERIFY(node.vulkan);
      QVERIFY2(node.problem.empty(), node.problem.c_str());
      QCOMPARE(node.embedMode, 0);
    }
    QCOMPARE(info->binaries.size(), size_t{1});

    const QString result = child<QLabel>(panel, "resultView")->text();
    for (const QString& file : files) QVERIFY2(result.contains(file), qPrintable(file));
    QVERIFY(result.contains(QStringLiteral("session_total_ms")));
    QVERIFY(child<QLabel>(panel, "statusLabel")->text().startsWith(QStringLiteral("Compiled")));
    QVERIFY(panel.lastError().isEmpty());

    // The engine's own lines reached the log view through LogHub (debug level: the Vulkan device it used).
    const QString log = child<QPlainTextEdit>(panel, "logView")->toPlainText();
    QVERIFY2(log.contains(QStringLiteral("debug: Vulkan device")), qPrintable(log));

    if (const QString shot = qEnvironmentVariable("KILN_COMPILE_PANEL_SCREENSHOT"); !shot.isEmpty()) {
      QVERIFY(panel.grab().save(shot, "PNG"));
    }
  }

  // The other options reach the engine: embed mode (one file), the node-name prefix, and a device profile instead
  // of the live device (the profile of lavapipe itself, as `kiln devices --profile` writes it).
  void compilesEmbeddedWithPrefixForAProfile() {
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    const auto profile = kiln::vulkanDeviceProfile(0);
    QVERIFY2(profile.isOk(), profile.status().toString().c_str());
    const QString profilePath = dir.filePath(QStringLiteral("profiles/device0.json"));
    QVERIFY(QDir().mkpath(dir.filePath(QStringLiteral("profiles"))));
    {
      QFile file(profilePath);
      QVERIFY(file.open(QIODevice::WriteOnly));
      file.write(QByteArray::fromStdString(profile.value()));
    }
    const QString outDir = dir.filePath(QStringLiteral("out"));
    QVERIFY(QDir().mkpath(outDir));
    const QString ctxPath = outDir + QStringLiteral("/embedded_ctx.onnx");

    CompilePanel panel;
    panel.setSourceModel(tinyCnnPath());
    child<QLineEdit>(panel, "outputPathEdit")->setText(ctxPath);
    child<QCheckBox>(panel, "embedModeCheck")->setChecked(true);
    child<QLineEdit>(panel, "prefixEdit")->setText(QStringLiteral("m1_"));
    child<QRadioButton>(panel, "profileRadio")->setChecked(true);
    QVERIFY(!child<QComboBox>(panel, "deviceCombo")->isEnabled());
    child<QLineEdit>(panel, "profileEdit")->setText(profilePath);
    child<QComboBox>(panel, "optimizationCombo")->setCurrentIndex(3);  // all
    const kiln::app::CompileSettings settings = panel.settings();
    QCOMPARE(QString::fromStdString(settings.targetProfile), profilePath);
    QVERIFY(settings.device.empty());
    QCOMPARE(settings.optimizationLevel, std::string("all"));

    QSignalSpy compiled(&panel, &CompilePanel::compiled);
    QTest::mouseClick(child<QPushButton>(panel, "compileButton"), Qt::LeftButton);
    QVERIFY2(compiled.wait(kCompileTimeoutMs), qPrintable(panel.lastError()));
    QCOMPARE(folderEntries(outDir), QStringList{QStringLiteral("embedded_ctx.onnx")});
    const auto info = kiln::inspectEpContextModel(ctxPath.toStdString());
    QVERIFY2(info.isOk(), info.status().toString().c_str());
    QVERIFY(!info->nodes.empty());
    for (const kiln::EpContextNodeInfo& node : info->nodes) {
      QCOMPARE(node.embedMode, 1);
      QVERIFY2(QString::fromStdString(node.name).startsWith(QStringLiteral("m1_")), node.name.c_str());
      QVERIFY2(node.problem.empty(), node.problem.c_str());
    }
    QVERIFY(child<QLabel>(panel, "resultView")->text().contains(QStringLiteral("binary embedded")));
  }

  void cancelsAfterFirstProgressAndWritesNothing() {
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    CompilePanel panel;
    panel.setSourceModel(tinyCnnPath());
    child<QLineEdit>(panel, "outputPathEdit")->setText(dir.filePath(QStringLiteral("tiny_ctx.onnx")));
    auto* button = child<QPushButton>(panel, "compileButton");

    // tiny_cnn compiles in a blink, so the compiling thread is held inside its first progress event until the GUI
    // thread has clicked Cancel: the cancel then lands after the first event whatever the machine's speed.
    auto* job = panel.findChild<CompileJob*>();
    QVERIFY(job);
    QSemaphore cancelClicked;
    std::atomic<bool> held{false};
    const QMetaObject::Connection hold = connect(
        job, &CompileJob::progress, job,
        [&] {
          if (!held.exchange(true)) cancelClicked.tryAcquire(1, 30000);
        },
        Qt::DirectConnection);
    const QMetaObject::Connection click = connect(&panel, &CompilePanel::progressed, &panel, [&] {
      if (button->text() == QLatin1String("Cancel")) {
        QTest::mouseClick(button, Qt::LeftButton);
        QCOMPARE(button->text(), QStringLiteral("Cancelling…"));
        QVERIFY(!button->isEnabled());
      }
      cancelClicked.release();
    });

    QSignalSpy progressed(&panel, &CompilePanel::progressed);
    QSignalSpy compiled(&panel, &CompilePanel::compiled);
    QSignalSpy failed(&panel, &CompilePanel::compileFailed);
    QTest::mouseClick(button, Qt::LeftButton);
    QVERIFY(failed.wait(kCompileTimeoutMs));
    QCOMPARE(failed.first().at(0).toString(), QStringLiteral("CANCELLED"));
    QVERIFY(compiled.isEmpty());
    QVERIFY(!progressed.isEmpty());
    QCOMPARE(progressed.first().at(0).toString(), QStringLiteral("load"));
    QVERIFY2(panel.lastError().startsWith(QStringLiteral("CANCELLED: ")), qPrintable(panel.lastError()));
    QVERIFY(!panel.isRunning());
    QCOMPARE(button->text(), QStringLiteral("Compile"));
    QVERIFY(button->isEnabled());
    QCOMPARE(folderEntries(dir.path()), QStringList());

    // The panel compiles again after a cancel.
    disconnect(hold);
    disconnect(click);
    QSignalSpy compiledAgain(&panel, &CompilePanel::compiled);
    panel.startCompile();
    QVERIFY2(compiledAgain.wait(kCompileTimeoutMs), qPrintable(panel.lastError()));
    QVERIFY(QFile::exists(dir.filePath(QStringLiteral("tiny_ctx.onnx"))));
  }

  // Cancel lands in every stage, including "write" 0/1, after which the engine has staged the binary under a
  // temporary name: the folder must still be empty. The cancel is made from the compiling thread, inside the
  // stage's first event, so it lands exactly there.
  void cancelsInEveryStage_data() {
    QTest::addColumn<QString>("stage");
    for (const char* stage : {"load", "optimize", "partition", "compile", ": glslang", ": pipelines", "write"}) {
      QTest::newRow(stage) << QString::fromLatin1(stage);
    }
  }
  void cancelsInEveryStage() {
    QFETCH(QString, stage);
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    CompilePanel panel;
    panel.setSourceModel(tinyCnnPath());
    child<QLineEdit>(panel, "outputPathEdit")->setText(dir.filePath(QStringLiteral("tiny_ctx.onnx")));
    auto* job = panel.findChild<CompileJob*>();
    QVERIFY(job);
    const bool suffix = stage.startsWith(QLatin1Char(':'));
    connect(
        job, &CompileJob::progress, job,
        [job, stage, suffix](const QString& reported) {
          if (suffix ? reported.endsWith(stage) : reported == stage) job->cancel();
        },
        Qt::DirectConnection);
    QSignalSpy progressed(&panel, &CompilePanel::progressed);
    QSignalSpy failed(&panel, &CompilePanel::compileFailed);
    panel.startCompile();
    QVERIFY(failed.wait(kCompileTimeoutMs));
    QCOMPARE(failed.first().at(0).toString(), QStringLiteral("CANCELLED"));
    QVERIFY(!progressed.isEmpty());
    // The engine may finish reporting the step it was in (the rest of a parallel stage, "compile" n/n) but never
    // commits: "write" 1/1 is reported only after the files were renamed into place.
    bool reached = false;
    for (const QList<QVariant>& event : progressed) {
      const QString reported = event.at(0).toString();
      reached = reached || (suffix ? reported.endsWith(stage) : reported == stage);
      QVERIFY(!(reported == QLatin1String("write") && event.at(1).toLongLong() == 1));
    }
    QVERIFY(reached);
    QCOMPARE(folderEntries(dir.path()), QStringList());
    QCOMPARE(child<QLabel>(panel, "resultView")->text(), QStringLiteral("<i>Cancelled; nothing was written.</i>"));
  }

  void refusesExistingOutputWithoutTouchingIt() {
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    const QString ctxPath = dir.filePath(QStringLiteral("tiny_ctx.onnx"));
    const QByteArray original("an earlier ctx model the user wants to keep");
    {
      QFile file(ctxPath);
      QVERIFY(file.open(QIODevice::WriteOnly));
      file.write(original);
    }
    CompilePanel panel;
    panel.setSourceModel(tinyCnnPath());
    child<QLineEdit>(panel, "outputPathEdit")->setText(ctxPath);
    child<QCheckBox>(panel, "errorIfExistsCheck")->setChecked(true);
    QVERIFY(panel.settings().errorIfOutputExists);

    QSignalSpy failed(&panel, &CompilePanel::compileFailed);
    QSignalSpy compiled(&panel, &CompilePanel::compiled);
    QTest::mouseClick(child<QPushButton>(panel, "compileButton"), Qt::LeftButton);
    QVERIFY(failed.wait(kCompileTimeoutMs));
    QCOMPARE(failed.first().at(0).toString(), QStringLiteral("FAIL"));
    QVERIFY(compiled.isEmpty());
    // The engine's message, shown as it is.
    const QString shown = child<QLabel>(panel, "statusLabel")->text();
    QVERIFY2(shown.startsWith(QStringLiteral("FAIL: ")) && shown.contains(QStringLiteral("exists already")) &&
                 shown.contains(ctxPath),
             qPrintable(shown));
    QVERIFY(child<QPlainTextEdit>(panel, "logView")->toPlainText().contains(QStringLiteral("exists already")));
    QFile file(ctxPath);
    QVERIFY(file.open(QIODevice::ReadOnly));
    QCOMPARE(file.readAll(), original);
    QCOMPARE(folderEntries(dir.path()), QStringList{QStringLiteral("tiny_ctx.onnx")});
  }

  void reportsFormAndShapeErrors() {
    QTemporaryDir dir;
    QVERIFY(dir.isValid());
    CompilePanel panel;
    QSignalSpy failed(&panel, &CompilePanel::compileFailed);

    // No model: refused at once, in the form's words, without a thread.
    panel.startCompile();
    QCOMPARE(failed.count(), 1);
    QCOMPARE(failed.takeFirst().at(0).toString(), QStringLiteral("INVALID_ARGUMENT"));
    QVERIFY(!panel.isRunning());

    panel.setSourceModel(tinyCnnPath());
    child<QLineEdit>(panel, "outputPathEdit")->setText(dir.filePath(QStringLiteral("tiny_ctx.onnx")));
    auto* shapes = child<QLineEdit>(panel, "shapesEdit");
    shapes->setText(QStringLiteral("image=1x3xAx32"));
    panel.startCompile();
    QCOMPARE(failed.count(), 1);
    QVERIFY2(panel.lastError().contains(QStringLiteral("1x3x640x640")), qPrintable(panel.lastError()));
    failed.clear();

    // A well-formed shape for an input the model lacks: the job checks it against the model, as the CLI does.
    shapes->setText(QStringLiteral("pixels=1x3x32x32"));
    panel.startCompile();
    QVERIFY(failed.wait(kCompileTimeoutMs));
    QCOMPARE(failed.first().at(0).toString(), QStringLiteral("INVALID_ARGUMENT"));
    QVERIFY2(panel.lastError().contains(QStringLiteral("not a model input")), qPrintable(panel.lastError()));
    QCOMPARE(folderEntries(dir.path()), QStringList());
  }

  // The option mapping of `kiln compile` (app/cli/cmd_compile.cpp), key by key.
  void mapsSettingsAsTheCliDoes() {
    const auto list = kiln::bridge::parseShapeList(QStringLiteral(" image=2x3x32x32, mask=1;  other=4 "));
    QVERIFY2(list.isOk(), list.status().toString().c_str());
    QCOMPARE(list.value(), (QStringList{QStringLiteral("image=2x3x32x32"), QStringLiteral("mask=1"),
                                        QStringLiteral("other=4")}));
    QVERIFY(!kiln::bridge::parseShapeList(QStringLiteral("=1x2")).isOk());
    QVERIFY(!kiln::bridge::parseShapeList(QStringLiteral("image=1x")).isOk());
    QVERIFY(kiln::bridge::parseShapeList(QString()).isOk());
    // A dimension past int64 is refused, naming it (the CLI shares the parser: kiln::app::parseNamedShapeList).
    const auto overflow = kiln::bridge::parseShapeList(QStringLiteral("image=1x99999999999999999999"));
    QCOMPARE(overflow.status().code(), kiln::StatusCode::INVALID_ARGUMENT);
    QVERIFY(overflow.status().message().find("99999999999999999999") != std::string::npos);

    kiln::app::CompileSettings settings;
    settings.inputModel = tinyCnnPath().toStdString();
    settings.outputModel = "/tmp/out_ctx.onnx";
    settings.device = "1";
    settings.autotune = true;
    settings.shapes = {"image=4x3x32x32"};
    settings.embedMode = true;
    settings.errorIfOutputExists = true;
    settings.errorIfNoNodesCompiled = true;
    auto options = kiln::app::compilationOptionsFor(settings);
    QVERIFY2(options.isOk(), options.status().toString().c_str());
    const kiln::SessionOptions& session = options->sessionOptions();
    QCOMPARE(session.configEntryOr("kiln.vulkan.device", ""), std::string("1"));
    QCOMPARE(session.configEntryOr("kiln.vulkan.autotune", ""), std::string("1"));
    // The shapes are the session's input shapes, which the engine checks against the model when it compiles.
    QCOMPARE(session.inputShapes().at("image"), (kiln::Shape{4, 3, 32, 32}));
    QVERIFY(options->embedMode());
    QCOMPARE(static_cast<uint32_t>(options->flags()),
             static_cast<uint32_t>(kiln::CompileFlags::ERROR_IF_OUTPUT_FILE_EXISTS | kiln::CompileFlags::ERROR_IF_NO_NODES_COMPILED));

    settings.shapes = {"image=4x3x32"};
    settings.embedMode = false;
    settings.device.clear();
    settings.autotune = false;
    auto wrongRankOptions = kiln::app::compilationOptionsFor(settings);
    QVERIFY2(wrongRankOptions.isOk(), wrongRankOptions.status().toString().c_str());
    const auto wrongRank = kiln::compileModel(*wrongRankOptions);  // refused while loading, before any output
    QCOMPARE(wrongRank.status().code(), kiln::StatusCode::INVALID_ARGUMENT);
    QVERIFY2(wrongRank.status().message().find("rank 3") != std::string::npos, wrongRank.status().message().c_str());
  }
};

QTEST_MAIN(TestCompilePanel)
#include "tst_compile_panel.moc"
