// BenchPanel end to end: a real two-run `kiln bench` of tiny_cnn.onnx through the panel (the build tree's kiln,
// found without KILN_CLI), its charts and ratios against the CLI's own JSON, save and load for comparison; cancel
// ends the bench's whole process tree and removes its work folder; CLI errors reach benchmarkFailed.
#include <QBarSeries>
#include <QBarSet>
#include <QBoxPlotSeries>
#include <QBoxSet>
#include <QChart>
#include <QChartView>
#include <QDir>
#include <QFile>
#include <QHorizontalStackedBarSeries>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QLabel>
#include <QPushButton>
#include <QSignalSpy>
#include <QTableWidget>
#include <QTemporaryDir>
#include <QTest>

#include <csignal>

#include "bench_panel.h"
#include "bench_report_io.h"
#include "bench_runner.h"
#include "kiln_cli.h"

using kiln::bridge::BenchRunner;
using kiln::studio::BenchPanel;

namespace {

constexpr int kBenchTimeoutMs = 120000;

QString tinyCnnPath() { return QStringLiteral(KILN_TEST_MODELS_DIR "/tiny_cnn.onnx"); }

QString ratioText(const QJsonValue& value) {
  return value.isDouble() ? QString::asprintf("%.2fx", value.toDouble()) : QStringLiteral("-");
}

// Processes in process group `pgid` that are still alive (not zombies), with their command lines.
QStringList liveGroup(qint64 pgid) {
  QStringList members;
  for (const QString& entry : QDir(QStringLiteral("/proc")).entryList(QDir::Dirs | QDir::NoDotAndDotDot)) {
    bool numeric = false;
    entry.toLongLong(&numeric);
    if (!numeric) continue;
    QFile stat(QStringLiteral("/proc/%1/stat").arg(entry));
    if (!stat.open(QIODevice::ReadOnly)) continue;
    const QByteArray text = stat.readAll();
    const QList<QByteArray> fields = text.mid(text.lastIndexOf(')') + 2).split(' ');
    if (fields.size() < 3 || fields[2].toLongLong() != pgid || fields[0] == "Z") continue;
    QFile cmdline(QStringLiteral("/proc/%1/cmdline").arg(entry));
    cmdline.open(QIODevice::ReadOnly);
    members << entry + QLatin1Char(' ') + QString::fromUtf8(cmdline.readAll().replace('\0', ' '));
  }
  return members;
}

// Every live process whose command line mentions `text` (a bench-worker anywhere, orphaned or not).
QStringList processesMentioning(const QString& text) {
  QStringList found;
  for (const QString& entry : QDir(QStringLiteral("/proc")).entryList(QDir::Dirs | QDir::NoDotAndDotDot)) {
    bool numeric = false;
    entry.toLongLong(&numeric);
    if (!numeric) continue;
    QFile cmdline(QStringLiteral("/proc/%1/cmdline").arg(entry));
    if (!cmdline.open(QIODevice::ReadOnly)) continue;
    const QString line = QString::fromUtf8(cmdline.readAll().replace('\0', ' '));
    QFile stat(QStringLiteral("/proc/%1/stat").arg(entry));
    stat.open(QIODevice::ReadOnly);
    const QByteArray s = stat.readAll();
    const bool zombie = s.mid(s.lastIndexOf(')') + 2).startsWith('Z');
    if (!zombie && line.contains(text)) found << entry + QLatin1Char(' ') + line;
  }
  return found;
}

template <class T>
T* seriesNamed(QChartView* view, const QString& objectName) {
  for (QAbstractSeries* series : view->chart()->series()) {
    if (series->objectName() == objectName) return qobject_cast<T*>(series);
  }
  return nullptr;
}

}  // namespace

class TestBenchPanel : public QObject {
  Q_OBJECT

 private slots:
  void initTestCase() {
    // ctest sets KILN_CLI; the panel must find the build tree's kiln without it (ctest puts its folder on PATH).
    qunsetenv("KILN_CLI");
    QVERIFY2(QFile::exists(tinyCnnPath()), qPrintable(tinyCnnPath()));
    const kiln::bridge::KilnCliLocation cli = kiln::bridge::locateKilnCli();
    QVERIFY2(cli.found(), qPrintable(cli.error));
  }

  void parsesProgressLines() {
    QString stage;
    qint64 done = -1, total = -1;
    QVERIFY(BenchRunner::parseProgressLine(QStringLiteral("kiln: compile (embed mode 0)"), &stage, &done, &total));
    QCOMPARE(stage, QStringLiteral("compile (embed mode 0)"));
    QCOMPARE(total, qint64(0));
    QVERIFY(BenchRunner::parseProgressLine(QStringLiteral("kiln: runs (8)"), &stage, &done, &total));
    QCOMPARE(stage, QStringLiteral("runs"));
    QCOMPARE(done, qint64(0));
    QCOMPARE(total, qint64(8));
    QVERIFY(BenchRunner::parseProgressLine(QStringLiteral("kiln: runs 75%"), &stage, &done, &total));
    QCOMPARE(stage, QStringLiteral("runs"));
    QCOMPARE(done, qint64(75));
    QCOMPARE(total, qint64(100));
    QVERIFY(!BenchRunner::parseProgressLine(QStringLiteral("kiln: error: NO_SUCHFILE: x"), &stage, &done, &total));
    QVERIFY(!BenchRunner::parseProgressLine(QStringLiteral("kiln: warning: skipped"), &stage, &done, &total));
    QVERIFY(!BenchRunner::parseProgressLine(QStringLiteral("something else"), &stage, &done, &total));
  }

  void runsTwoRunBenchmark() {
    BenchPanel panel;
    panel.resize(1400, 950);
    panel.setModel(tinyCnnPath());
    panel.setModes({QStringLiteral("cold"), QStringLiteral("epctx-file")});
    panel.setDriverCaches({QStringLiteral("warm")});
    panel.setRuns(2);
    panel.setInferences(1);
    QSignalSpy finished(&panel, &BenchPanel::benchmarkFinished);
    QSignalSpy failed(&panel, &BenchPanel::benchmarkFailed);
    QSignalSpy progress(panel.runner(), &BenchRunner::progress);
    panel.startBenchmark();
    QVERIFY(panel.isRunning());
    const QString workDir = panel.runner()->workDir();
    QVERIFY(QDir(workDir).exists());
    QVERIFY(finished.wait(kBenchTimeoutMs) || !failed.isEmpty());
    QVERIFY2(failed.isEmpty(), failed.isEmpty() ? "" : qPrintable(failed.first().first().toString()));
    QCOMPARE(finished.size(), 1);
    QVERIFY(!panel.isRunning());
    QVERIFY2(!QDir(workDir).exists(), qPrintable(workDir));

    // Progress came from the CLI's stderr lines, stage by stage, with counts for the runs.
    QStringList stages;
    bool countedRuns = false;
    for (const auto& args : progress) {
      stages << args[0].toString();
      if (args[0].toString() == QLatin1String("runs") && args[2].toLongLong() == 4) countedRuns = true;
    }
    QVERIFY2(stages.contains(QStringLiteral("compile (embed mode 0)")), qPrintable(stages.join(QLatin1Char(','))));
    QVERIFY(stages.contains(QStringLiteral("warm-up")));
    QVERIFY(countedRuns);

    // The reference is the CLI's JSON document itself, read without the panel's parser.
    const kiln::bridge::BenchReport* report = panel.currentReport();
    QVERIFY(report);
    const QJsonObject raw = report->raw;
    const QJsonArray modes = raw.value(QStringLiteral("modes")).toArray();
    QCOMPARE(modes.size(), 2);
    QCOMPARE(modes[0].toObject().value(QStringLiteral("name")).toString(), QStringLiteral("cold"));
    QCOMPARE(modes[1].toObject().value(QStringLiteral("name")).toString(), QStringLiteral("epctx-file"));
    QCOMPARE(raw.value(QStringLiteral("runs")).toInt(), 2);

    auto* creationView = panel.findChild<QChartView*>(QStringLiteral("creationChart"));
    auto* latencyView = panel.findChild<QChartView*>(QStringLiteral("latencyChart"));
    auto* stageView = panel.findChild<QChartView*>(QStringLiteral("stageChart"));
    auto* table = panel.findChild<QTableWidget*>(QStringLiteral("ratiosTable"));
    QVERIFY(creationView && latencyView && stageView && table);

    auto* boxes = seriesNamed<QBoxPlotSeries>(creationView, QStringLiteral("current"));
    QVERIFY(boxes);
    QCOMPARE(creationView->chart()->series().size(), 1);
    QCOMPARE(boxes->count(), modes.size());
    auto* latency = seriesNamed<QBarSeries>(latencyView, QStringLiteral("latency"));
    QVERIFY(latency);
    QCOMPARE(latency->count(), 2);  // first inference, time to first result
    QBarSet* first = latency->barSets()[0];
    QBarSet* result = latency->barSets()[1];
    auto* stageSeries = seriesNamed<QHorizontalStackedBarSeries>(stageView, QStringLiteral("stages"));
    QVERIFY(stageSeries);
    QCOMPARE(table->rowCount(), modes.size());

    QSet<QString> stageKeys;
    for (int r = 0; r < modes.size(); ++r) {
      const QJsonObject mode = modes[r].toObject();
      const QJsonObject create = mode.value(QStringLiteral("session_create_ms")).toObject();
      QBoxSet* box = boxes->boxSets()[r];
      QCOMPARE(box->at(QBoxSet::LowerExtreme), create.value(QStringLiteral("min")).toDouble());
      QCOMPARE(box->at(QBoxSet::Median), create.value(QStringLiteral("median")).toDouble());
      QCOMPARE(box->at(QBoxSet::UpperExtreme), create.value(QStringLiteral("p90")).toDouble());
      QVERIFY(box->at(QBoxSet::Median) > 0);
      QCOMPARE(first->at(r), mode.value(QStringLiteral("first_inference_ms")).toObject().value(QStringLiteral("median")).toDouble());
      QCOMPARE(result->at(r),
               mode.value(QStringLiteral("time_to_first_result_ms")).toObject().value(QStringLiteral("median")).toDouble());

      // Every stage but the totals is a segment of the row's bar, with the row's median.
      const QJsonObject stagesMs = mode.value(QStringLiteral("stages_ms")).toObject();
      for (auto it = stagesMs.begin(); it != stagesMs.end(); ++it) {
        if (it.key() == QLatin1String("session_total_ms") || it.key() == QLatin1String("first_run_ms")) continue;
        stageKeys.insert(it.key());
        QBarSet* segment = nullptr;
        for (QBarSet* set : stageSeries->barSets()) {
          if (set->objectName() == it.key()) segment = set;
        }
        QVERIFY2(segment, qPrintable(it.key()));
        QCOMPARE(segment->at(r), it.value().toDouble());
      }

      QCOMPARE(table->item(r, 0)->text(), mode.value(QStringLiteral("name")).toString());
      QCOMPARE(table->item(r, 1)->text(), mode.value(QStringLiteral("driver_cache")).toString());
      QCOMPARE(table->item(r, 3)->text(), ratioText(mode.value(QStringLiteral("speedup_vs_cold"))));
      QCOMPARE(table->item(r, 4)->text(), ratioText(mode.value(QStringLiteral("time_to_first_result_speedup_vs_cold"))));
    }
    QCOMPARE(table->item(0, 3)->text(), QStringLiteral("1.00x"));  // cold against itself
    QCOMPARE(stageSeries->count(), stageKeys.size());
    QVERIFY(stageKeys.contains(QStringLiteral("binary_read_ms")) || stageKeys.contains(QStringLiteral("pipeline_create_ms")));
    const QJsonObject summary = raw.value(QStringLiteral("summary")).toObject();
    auto* summaryLabel = panel.findChild<QLabel*>(QStringLiteral("summaryLabel"));
    QVERIFY(summaryLabel->text().contains(ratioText(summary.value(QStringLiteral("epctx_session_create_speedup_driver_warm")))));

    // The panel's CSV writer matches what the CLI's --csv wrote for the same run, byte for byte.
    QVERIFY(!report->csvFromCli.isEmpty());
    QCOMPARE(kiln::bridge::benchReportCsv(*report), report->csvFromCli);

    if (qEnvironmentVariableIsSet("KILN_BENCH_SCREENSHOT")) {
      panel.show();
      QVERIFY(QTest::qWaitForWindowExposed(&panel));
      QTest::qWait(100);
      panel.grab().save(qEnvironmentVariable("KILN_BENCH_SCREENSHOT"));
    }

    // Save both ways, then load the JSON back as a comparison.
    QTemporaryDir out;
    QVERIFY(out.isValid());
    const QString jsonPath = out.filePath(QStringLiteral("tiny_bench.json"));
    const QString csvPath = out.filePath(QStringLiteral("tiny_bench.csv"));
    QVERIFY2(panel.saveJson(jsonPath), qPrintable(panel.lastError()));
    QVERIFY2(panel.saveCsv(csvPath), qPrintable(panel.lastError()));
    QFile csvFile(csvPath);
    QVERIFY(csvFile.open(QIODevice::ReadOnly));
    QCOMPARE(QString::fromUtf8(csvFile.readAll()), report->csvFromCli);
    QFile jsonFile(jsonPath);
    QVERIFY(jsonFile.open(QIODevice::ReadOnly));
    QCOMPARE(QJsonDocument::fromJson(jsonFile.readAll()).object(), raw);

    QVERIFY2(panel.loadReport(jsonPath), qPrintable(panel.lastError()));
    QVERIFY(panel.comparisonReport());
    QCOMPARE(panel.currentReport()->raw, raw);  // the current run stays; the file is the comparison
    QCOMPARE(creationView->chart()->series().size(), 2);
    auto* earlierBoxes = seriesNamed<QBoxPlotSeries>(creationView, QStringLiteral("comparison"));
    QVERIFY(earlierBoxes);
    QCOMPARE(earlierBoxes->count(), modes.size());
    for (int r = 0; r < modes.size(); ++r) {
      QCOMPARE(earlierBoxes->boxSets()[r]->at(QBoxSet::Median),
               modes[r].toObject().value(QStringLiteral("session_create_ms")).toObject().value(QStringLiteral("median")).toDouble());
    }
    latency = seriesNamed<QBarSeries>(latencyView, QStringLiteral("latency"));
    QCOMPARE(latency->count(), 4);
    stageSeries = seriesNamed<QHorizontalStackedBarSeries>(stageView, QStringLiteral("stages"));
    QCOMPARE(stageSeries->barSets().first()->count(), 2 * modes.size());  // each row and its earlier run
    QCOMPARE(table->columnCount(), 9);
    QCOMPARE(table->item(0, 8)->text(), QStringLiteral("1.00x"));  // the same data: no change
    auto* reportLabel = panel.findChild<QLabel*>(QStringLiteral("reportLabel"));
    QVERIFY2(reportLabel->text().contains(QStringLiteral("tiny_bench.json")), qPrintable(reportLabel->text()));

    if (qEnvironmentVariableIsSet("KILN_BENCH_SCREENSHOT")) {
      QString path = qEnvironmentVariable("KILN_BENCH_SCREENSHOT");
      QTest::qWait(100);  // let the layouts and the charts' legends catch up
      panel.grab().save(path.replace(QStringLiteral(".png"), QStringLiteral("_compare.png")));
    }

    panel.clearComparison();
    QCOMPARE(creationView->chart()->series().size(), 1);
    QCOMPARE(table->columnCount(), 5);
  }

  void cancelEndsTheWholeTree() {
    BenchPanel panel;
    panel.setModel(tinyCnnPath());
    panel.setModes({QStringLiteral("cold"), QStringLiteral("epctx-file")});
    panel.setDriverCaches({QStringLiteral("warm")});
    panel.setRuns(200);
    panel.setInferences(1);
    QSignalSpy finished(&panel, &BenchPanel::benchmarkFinished);
    QSignalSpy failed(&panel, &BenchPanel::benchmarkFailed);
    QSignalSpy canceled(panel.runner(), &BenchRunner::canceled);
    panel.startBenchmark();
    QVERIFY(panel.isRunning());
    const qint64 pgid = panel.runner()->processId();
    const QString workDir = panel.runner()->workDir();
    QVERIFY(pgid > 0);
    QVERIFY(QDir(workDir).exists());
    // Cancel once the bench has a child of its own (kiln compile, then bench-workers): that is what must not leak.
    QTRY_VERIFY_WITH_TIMEOUT(liveGroup(pgid).size() >= 2, 30000);
    panel.cancelBenchmark();
    QVERIFY(canceled.wait(15000));
    QVERIFY(!panel.isRunning());
    QVERIFY2(liveGroup(pgid).isEmpty(), qPrintable(liveGroup(pgid).join(QLatin1Char('\n'))));
    const QStringList orphans = processesMentioning(workDir);
    QVERIFY2(orphans.isEmpty(), qPrintable(orphans.join(QLatin1Char('\n'))));
    QVERIFY2(!QDir(workDir).exists(), qPrintable(workDir));
    QTest::qWait(500);  // nothing may arrive late
    QCOMPARE(finished.size(), 0);
    QCOMPARE(failed.size(), 0);

    // The panel is ready for another run afterwards.
    auto* runButton = panel.findChild<QPushButton*>(QStringLiteral("runButton"));
    QVERIFY(runButton && runButton->isEnabled());
  }

  // tiny_cnn's workers end on their own within a second, so an orphan could slip out of the real test unseen. A
  // stand-in for kiln whose "worker" never ends on its own makes that certain: only killing the group ends it.
  void cancelKillsWorkersThatWouldOutliveTheBench() {
    QTemporaryDir dir;
    const QString fake = dir.filePath(QStringLiteral("kiln"));
    QFile script(fake);
    QVERIFY(script.open(QIODevice::WriteOnly));
    script.write("#!/bin/sh\necho 'kiln: warm-up (2)' >&2\nsleep 300 &\nwait\n");
    script.close();
    script.setPermissions(script.permissions() | QFileDevice::ExeOwner);
    qputenv("KILN_CLI", fake.toUtf8());
    BenchPanel panel;
    panel.setModel(tinyCnnPath());
    QSignalSpy progress(panel.runner(), &BenchRunner::progress);
    QSignalSpy canceled(panel.runner(), &BenchRunner::canceled);
    panel.startBenchmark();
    qunsetenv("KILN_CLI");
    const qint64 pgid = panel.runner()->processId();
    QVERIFY(progress.wait(10000));
    QCOMPARE(progress.first().at(0).toString(), QStringLiteral("warm-up"));
    QCOMPARE(progress.first().at(2).toLongLong(), qint64(2));
    QTRY_VERIFY_WITH_TIMEOUT(liveGroup(pgid).size() >= 2, 10000);
    panel.cancelBenchmark();
    QVERIFY(canceled.wait(15000));
    const QStringList left = liveGroup(pgid);
    if (!left.isEmpty()) ::kill(static_cast<pid_t>(-pgid), SIGKILL);  // do not leave the sleep behind
    QVERIFY2(left.isEmpty(), qPrintable(left.join(QLatin1Char('\n'))));
  }

  void destroyingThePanelMidRunEndsTheTree() {
    qint64 pgid = 0;
    QString workDir;
    {
      BenchPanel panel;
      panel.setModel(tinyCnnPath());
      panel.setModes({QStringLiteral("cold")});
      panel.setDriverCaches({QStringLiteral("cold")});
      panel.setRuns(200);
      panel.startBenchmark();
      pgid = panel.runner()->processId();
      workDir = panel.runner()->workDir();
      QTRY_VERIFY_WITH_TIMEOUT(liveGroup(pgid).size() >= 2, 30000);
    }
    QVERIFY2(liveGroup(pgid).isEmpty(), qPrintable(liveGroup(pgid).join(QLatin1Char('\n'))));
    QVERIFY2(!QDir(workDir).exists(), qPrintable(workDir));
  }

  void missingModelReportsTheCliError() {
    BenchPanel panel;
    panel.setModel(QStringLiteral("/nonexistent/missing.onnx"));
    panel.setModes({QStringLiteral("cold")});
    panel.setRuns(1);
    QSignalSpy finished(&panel, &BenchPanel::benchmarkFinished);
    QSignalSpy failed(&panel, &BenchPanel::benchmarkFailed);
    panel.startBenchmark();
    QVERIFY(failed.wait(30000));
    const QString message = failed.first().first().toString();
    QVERIFY2(message.contains(QStringLiteral("NO_SUCHFILE: no model file at '/nonexistent/missing.onnx'")), qPrintable(message));
    QVERIFY2(message.contains(QStringLiteral("exit code 1")), qPrintable(message));
    QCOMPARE(panel.lastError(), message);
    QCOMPARE(finished.size(), 0);
    QVERIFY(!panel.isRunning());
  }

  void wrongInputNameFailsBeforeAnyProcess() {
    BenchPanel panel;
    panel.setModel(tinyCnnPath());
    panel.setModes({QStringLiteral("cold")});
    panel.setRuns(1);
    panel.setShapes(QStringLiteral("x=1x3x32x32"));
    QSignalSpy failed(&panel, &BenchPanel::benchmarkFailed);
    panel.startBenchmark();
    QCOMPARE(failed.size(), 1);  // at once: no kiln process was started
    const QString message = failed.first().first().toString();
    QVERIFY2(message.contains(QStringLiteral("'x', which is not an input of tiny_cnn.onnx (its inputs: image)")),
             qPrintable(message));
    QVERIFY(!panel.isRunning());
  }

  void wrongKilnCliIsAClearError() {
    qputenv("KILN_CLI", "/nonexistent/kiln");
    BenchPanel panel;
    panel.setModel(tinyCnnPath());
    QSignalSpy failed(&panel, &BenchPanel::benchmarkFailed);
    panel.startBenchmark();
    qunsetenv("KILN_CLI");
    QCOMPARE(failed.size(), 1);
    QVERIFY2(failed.first().first().toString().contains(QStringLiteral("KILN_CLI names '/nonexistent/kiln'")),
             qPrintable(failed.first().first().toString()));
    QVERIFY(!panel.isRunning());
  }

  void loadRejectsOtherJson() {
    QTemporaryDir dir;
    const QString path = dir.filePath(QStringLiteral("other.json"));
    QFile file(path);
    QVERIFY(file.open(QIODevice::WriteOnly));
    file.write("{\"hello\": 1}");
    file.close();
    BenchPanel panel;
    QVERIFY(!panel.loadReport(path));
    QVERIFY2(panel.lastError().contains(QStringLiteral("not a kiln bench report")), qPrintable(panel.lastError()));
    QVERIFY(!panel.currentReport());
    QVERIFY(!panel.loadReport(dir.filePath(QStringLiteral("absent.json"))));
    QVERIFY(panel.lastError().contains(QStringLiteral("cannot open")));
  }
};

QTEST_MAIN(TestBenchPanel)
#include "tst_bench_panel.moc"
