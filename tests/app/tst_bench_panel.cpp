// BenchPanel end to end: a real two-run `kiln bench` of tiny_cnn.onnx through the panel (the build tree's kiln,
// found without KILN_CLI), its charts and ratios against the CLI's own JSON, save and load for comparison; cancel
// ends the bench's whole process tree and removes its work folder; CLI errors reach benchmarkFailed.
#include <QBarCategoryAxis>
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
#include <QLegend>
#include <QLegendMarker>
#include <QLabel>
#include <QPushButton>
#include <QSignalSpy>
#include <QTableWidget>
#include <QTemporaryDir>
#include <QTest>

#include <QGraphicsScene>
#include <QGraphicsTextItem>
#include <QTextDocument>

#include <cmath>
#include <csignal>
#include <tuple>

#include "bench_charts.h"
#include "bench_panel.h"
#include "bench_report_io.h"
#include "bench_runner.h"
#include "kiln_cli.h"
#include "studio_test_files.h"
#include "theme.h"

using kiln::bridge::BenchRunner;
using kiln::studio::BenchPanel;
using kiln::testing::saveScreenshot;

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

// {min, p25, median, p75, p90, max} from `median` and a spread; without `quartiles`, as reports before kiln bench
// gave p25, p75 and max: {min, median, p90}.
QJsonObject statJson(double median, double spread, bool quartiles) {
  QJsonObject stat{{QStringLiteral("min"), median - spread}, {QStringLiteral("median"), median},
                   {QStringLiteral("p90"), median + 0.8 * spread}};
  if (quartiles) {
    stat.insert(QStringLiteral("p25"), median - 0.4 * spread);
    stat.insert(QStringLiteral("p75"), median + 0.5 * spread);
    stat.insert(QStringLiteral("max"), median + spread);
  }
  return stat;
}

// A kiln bench report with one row per {mode, first inference ms, time to first result ms}, written to `path`.
void writeReport(const QString& path, const QList<std::tuple<QString, double, double>>& rows, bool quartiles,
                 double createScale = 1) {
  QJsonArray modes;
  double create = 900;
  for (const auto& [mode, first, result] : rows) {
    QJsonObject row{{QStringLiteral("name"), mode},
                    {QStringLiteral("driver_cache"), QStringLiteral("warm")},
                    {QStringLiteral("runs"), 5},
                    {QStringLiteral("session_create_ms"), statJson(create * createScale, create * createScale / 4, quartiles)},
                    {QStringLiteral("first_inference_ms"), statJson(first, first / 10, quartiles)},
                    {QStringLiteral("time_to_first_result_ms"), statJson(result, result / 10, quartiles)},
                    {QStringLiteral("inference_ms"), statJson(first / 2, first / 20, quartiles)},
                    {QStringLiteral("stages_ms"), QJsonObject{{QStringLiteral("load_ms"), 3.0 * createScale},
                                                              {QStringLiteral("glslang_ms"), create * createScale / 3},
                                                              {QStringLiteral("pipeline_create_ms"), create * createScale / 5}}},
                    {QStringLiteral("counters"), QJsonObject{}},
                    {QStringLiteral("speedup_vs_cold"), 900 / create}};
    modes.append(row);
    create /= 2;
  }
  const QJsonObject document{{QStringLiteral("model"), QStringLiteral("det.onnx")},
                             {QStringLiteral("device"), QStringLiteral("llvmpipe")},
                             {QStringLiteral("runs"), 5},
                             {QStringLiteral("inferences_per_run"), 1},
                             {QStringLiteral("modes"), modes},
                             {QStringLiteral("summary"), QJsonObject{}}};
  QFile file(path);
  QVERIFY(file.open(QIODevice::WriteOnly));
  file.write(QJsonDocument(document).toJson());
}

// The visible texts of a chart (title, axis labels, legend, bar value labels) in scene coordinates.
QList<QPair<QString, QRectF>> chartTexts(QChartView* view) {
  QList<QPair<QString, QRectF>> texts;
  for (QGraphicsItem* item : view->scene()->items()) {
    auto* text = dynamic_cast<QGraphicsTextItem*>(item);
    if (!text || !text->isVisible() || text->toPlainText().trimmed().isEmpty()) continue;
    if (text->defaultTextColor().alpha() == 0) continue;  // a transparent label (an earlier run's bar) is not drawn
    // The glyphs, not the item's document margins.
    const QRectF glyphs = text->boundingRect().adjusted(text->document()->documentMargin(), text->document()->documentMargin(),
                                                        -text->document()->documentMargin(), -text->document()->documentMargin());
    texts.append({text->toPlainText(), text->mapToScene(glyphs).boundingRect()});
  }
  return texts;
}

// Pairs of chart texts that overlap, as "a | b" lines.
QStringList overlappingTexts(QChartView* view) {
  const auto texts = chartTexts(view);
  QStringList overlaps;
  for (int i = 0; i < texts.size(); ++i) {
    for (int j = i + 1; j < texts.size(); ++j) {
      if (texts[i].second.intersects(texts[j].second)) overlaps << texts[i].first + QStringLiteral(" | ") + texts[j].first;
    }
  }
  return overlaps;
}

// Distance between two colours in RGB (0..441).
double colorDistance(const QColor& a, const QColor& b) {
  return std::hypot(a.red() - b.red(), a.green() - b.green(), a.blue() - b.blue());
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
      // A standard box plot: box p25..p75, line at the median, whiskers to min and max.
      QCOMPARE(box->at(QBoxSet::LowerExtreme), create.value(QStringLiteral("min")).toDouble());
      QCOMPARE(box->at(QBoxSet::LowerQuartile), create.value(QStringLiteral("p25")).toDouble());
      QCOMPARE(box->at(QBoxSet::Median), create.value(QStringLiteral("median")).toDouble());
      QCOMPARE(box->at(QBoxSet::UpperQuartile), create.value(QStringLiteral("p75")).toDouble());
      QCOMPARE(box->at(QBoxSet::UpperExtreme), create.value(QStringLiteral("max")).toDouble());
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

  // Reports saved before kiln bench gave p25, p75 and max still load: their rows are a median line with whiskers
  // from min to p90, the title says so, and a current report beside them is a full box plot.
  void oldReportWithoutQuartilesStillDraws() {
    QTemporaryDir dir;
    const QString oldPath = dir.filePath(QStringLiteral("old.json"));
    const QString newPath = dir.filePath(QStringLiteral("new.json"));
    writeReport(oldPath, {{QStringLiteral("cold"), 80, 900}, {QStringLiteral("epctx-file"), 70, 500}}, false);
    writeReport(newPath, {{QStringLiteral("cold"), 75, 850}, {QStringLiteral("epctx-file"), 72, 480}}, true);
    BenchPanel panel;
    panel.resize(1400, 950);
    QVERIFY2(panel.loadReport(oldPath), qPrintable(panel.lastError()));
    const kiln::bridge::BenchRow& oldRow = panel.currentReport()->rows.first();
    QVERIFY(!oldRow.sessionCreate.hasBoxPlot());
    QVERIFY(!oldRow.sessionCreate.p25 && !oldRow.sessionCreate.p75 && !oldRow.sessionCreate.max);
    auto* creationView = panel.findChild<QChartView*>(QStringLiteral("creationChart"));
    auto* boxes = seriesNamed<QBoxPlotSeries>(creationView, QStringLiteral("current"));
    QVERIFY(boxes);
    QBoxSet* box = boxes->boxSets().first();
    QCOMPARE(box->at(QBoxSet::LowerExtreme), 900 - 225.0);
    QCOMPARE(box->at(QBoxSet::LowerQuartile), 900.0);
    QCOMPARE(box->at(QBoxSet::Median), 900.0);
    QCOMPARE(box->at(QBoxSet::UpperQuartile), 900.0);
    QCOMPARE(box->at(QBoxSet::UpperExtreme), 900 + 0.8 * 225);  // p90: the report has no max
    QVERIFY2(creationView->chart()->title().contains(QStringLiteral("p90 for older reports")),
             qPrintable(creationView->chart()->title()));
    QVERIFY(box->property("toolTip").toString().contains(QStringLiteral("No quartiles")));
    // The other charts and the table draw what the old report has.
    QCOMPARE(seriesNamed<QBarSeries>(panel.findChild<QChartView*>(QStringLiteral("latencyChart")),
                                     QStringLiteral("latency"))->barSets().first()->at(0), 80.0);
    QCOMPARE(panel.findChild<QTableWidget*>(QStringLiteral("ratiosTable"))->rowCount(), 2);

    // A new report loaded first, the old one as its comparison: the new rows are full box plots.
    BenchPanel both;
    both.resize(1400, 950);
    QVERIFY(both.loadReport(newPath));
    QVERIFY(both.loadReport(oldPath));
    auto* bothView = both.findChild<QChartView*>(QStringLiteral("creationChart"));
    QBoxSet* now = seriesNamed<QBoxPlotSeries>(bothView, QStringLiteral("current"))->boxSets().first();
    QVERIFY(both.currentReport()->rows.first().sessionCreate.hasBoxPlot());
    QCOMPARE(now->at(QBoxSet::LowerQuartile), 900 - 0.4 * 225);
    QCOMPARE(now->at(QBoxSet::UpperQuartile), 900 + 0.5 * 225);
    QCOMPARE(now->at(QBoxSet::UpperExtreme), 900 + 225.0);
    QBoxSet* before = seriesNamed<QBoxPlotSeries>(bothView, QStringLiteral("comparison"))->boxSets().first();
    QCOMPARE(before->at(QBoxSet::UpperExtreme), 900 + 0.8 * 225);
    both.show();
    QVERIFY(QTest::qWaitForWindowExposed(&both));
    QTest::qWait(200);
    saveScreenshot(&both, QStringLiteral("bench_old_report_compared.png"));
  }

  // Two runs that measured different modes (issue 33: a mode one run lacks was drawn as a 0 ms bar with a "0" label):
  // the missing bar has no label, its tooltip says it was not measured, its axis label says which run has it.
  void modesOneRunLacksAreNotDrawnAsZero() {
    QTemporaryDir dir;
    const QString nowPath = dir.filePath(QStringLiteral("now.json"));
    const QString earlierPath = dir.filePath(QStringLiteral("earlier.json"));
    writeReport(nowPath, {{QStringLiteral("cold"), 75, 850}, {QStringLiteral("epctx-file"), 72, 480}}, true);
    writeReport(earlierPath, {{QStringLiteral("cold"), 80, 900}, {QStringLiteral("epctx-embed"), 70, 500}}, true);
    BenchPanel panel;
    panel.resize(1400, 950);
    QVERIFY2(panel.loadReport(nowPath), qPrintable(panel.lastError()));
    QVERIFY2(panel.loadReport(earlierPath), qPrintable(panel.lastError()));
    auto* latencyView = panel.findChild<QChartView*>(QStringLiteral("latencyChart"));
    auto* latency = seriesNamed<QBarSeries>(latencyView, QStringLiteral("latency"));
    QVERIFY(latency);
    const auto keys = kiln::studio::benchRowKeys(panel.currentReport(), panel.comparisonReport());
    QCOMPARE(keys.size(), 3);  // cold, epctx-file (this run), epctx-embed (earlier run)
    QBarSet* now = nullptr;
    QBarSet* earlier = nullptr;
    for (QBarSet* set : latency->barSets()) {
      if (set->objectName() == QLatin1String("firstInference")) now = set;
      if (set->objectName() == QLatin1String("firstInferenceEarlier")) earlier = set;
    }
    QVERIFY(now && earlier);
    QCOMPARE(now->property("missing").toList(), QVariantList{2});
    QCOMPARE(earlier->property("missing").toList(), QVariantList{1});
    QCOMPARE(now->labelColor().alpha(), 0);  // no "0" written over the empty place
    QVERIFY2(kiln::studio::latencyTip(keys[2], now, 2).contains(QStringLiteral("not measured in the current run")),
             qPrintable(kiln::studio::latencyTip(keys[2], now, 2)));
    QVERIFY(kiln::studio::latencyTip(keys[1], earlier, 1).contains(QStringLiteral("not measured in the earlier run")));
    QVERIFY(kiln::studio::latencyTip(keys[0], now, 0).contains(QStringLiteral("75")));
    auto* axis = qobject_cast<QBarCategoryAxis*>(latencyView->chart()->axes(Qt::Horizontal).first());
    QVERIFY(axis);
    QVERIFY2(axis->at(1).contains(QStringLiteral("this run only")), qPrintable(axis->at(1)));
    QVERIFY2(axis->at(2).contains(QStringLiteral("earlier run only")), qPrintable(axis->at(2)));
    QVERIFY(!axis->at(0).contains(QStringLiteral("only")));
    panel.show();
    QVERIFY(QTest::qWaitForWindowExposed(&panel));
    QTest::qWait(200);
    saveScreenshot(&panel, QStringLiteral("bench_modes_one_run_lacks.png"));
  }

  // Close values on neighbouring bars (17.15 and 17.16 ms, 0.79 and 0.8) and a run compared with an earlier one:
  // no two texts of the latency chart overlap, at a wide and at a narrow size, in the light and the dark theme.
  // The compared run's bars are visibly paler than the current run's, and the legend's colours are far apart.
  void closeValuesNeverOverlapAndComparedRunIsPaler() {
    QTemporaryDir dir;
    const QString nowPath = dir.filePath(QStringLiteral("now.json"));
    const QString earlierPath = dir.filePath(QStringLiteral("earlier.json"));
    const QList<std::tuple<QString, double, double>> rows = {{QStringLiteral("cold"), 17.15, 17.16},
                                                             {QStringLiteral("pipeline-cache"), 0.79, 0.8},
                                                             {QStringLiteral("epctx-file"), 17.16, 17.15},
                                                             {QStringLiteral("in-process"), 5440, 6460}};
    writeReport(nowPath, rows, true);
    writeReport(earlierPath, rows, true, 1.3);
    for (const kiln::studio::ThemeChoice theme : {kiln::studio::ThemeChoice::Light, kiln::studio::ThemeChoice::Dark}) {
      kiln::studio::applyTheme(theme);
      const QString themeName = kiln::studio::themeChoiceName(theme);
      BenchPanel panel;
      QVERIFY(panel.loadReport(nowPath));
      auto* latencyView = panel.findChild<QChartView*>(QStringLiteral("latencyChart"));
      auto* creationView = panel.findChild<QChartView*>(QStringLiteral("creationChart"));
      for (const QSize size : {QSize(1500, 950), QSize(900, 700)}) {
        for (bool compared : {false, true}) {
          if (compared) QVERIFY(panel.loadReport(earlierPath));
          else panel.clearComparison();
          panel.resize(size);
          panel.show();
          QVERIFY(QTest::qWaitForWindowExposed(&panel));
          QTest::qWait(150);  // the queued label fitting after the layout
          const QString where = QStringLiteral("%1 %2x%3%4").arg(themeName).arg(size.width()).arg(size.height())
                                    .arg(compared ? QStringLiteral(" compared") : QString());
          const QStringList overlaps = overlappingTexts(latencyView);
          QVERIFY2(overlaps.isEmpty(), qPrintable(where + QStringLiteral(": ") + overlaps.join(QStringLiteral("; "))));
          auto* latency = seriesNamed<QBarSeries>(latencyView, QStringLiteral("latency"));
          if (size.width() == 1500) QVERIFY2(latency->isLabelsVisible(), qPrintable(where));  // room for them here
          if (latency->isLabelsVisible()) {
            // Every value label lies inside the plot: the tallest one is not cut at the top.
            const QRectF plot = latencyView->chart()->plotArea();
            for (const auto& [text, rect] : chartTexts(latencyView)) {
              bool number = false;
              text.toDouble(&number);
              if (number && rect.center().x() > plot.left()) {
                QVERIFY2(rect.top() >= plot.top() - 1, qPrintable(where + QStringLiteral(": ") + text));
              }
            }
          }
          saveScreenshot(&panel, QStringLiteral("bench_close_values_%1_%2%3.png")
                                     .arg(themeName).arg(size.width()).arg(compared ? QStringLiteral("_compared") : QString()));
          if (!compared) continue;

          const QColor background = latencyView->chart()->backgroundBrush().color();
          QBarSet* first = latency->barSets()[0];
          QBarSet* result = latency->barSets()[1];
          QBarSet* firstEarlier = latency->barSets()[2];
          QBarSet* resultEarlier = latency->barSets()[3];
          QCOMPARE(firstEarlier->objectName(), QStringLiteral("firstInferenceEarlier"));
          // Paler: much closer to the background than the current run's colour, and far from it.
          for (auto [now, before] : {std::pair{first, firstEarlier}, std::pair{result, resultEarlier}}) {
            QVERIFY2(colorDistance(before->color(), background) < 0.6 * colorDistance(now->color(), background),
                     qPrintable(where + QStringLiteral(": ") + now->label()));
            QVERIFY2(colorDistance(before->color(), now->color()) > 80, qPrintable(where + QStringLiteral(": ") + now->label()));
          }
          // The legend's two quantities in clearly different colours (Okabe-Ito blue and orange).
          QVERIFY(colorDistance(first->color(), result->color()) > 200);
          auto* boxes = seriesNamed<QBoxPlotSeries>(creationView, QStringLiteral("current"));
          auto* earlierBoxes = seriesNamed<QBoxPlotSeries>(creationView, QStringLiteral("comparison"));
          QVERIFY(colorDistance(earlierBoxes->brush().color(), background) <
                  0.6 * colorDistance(boxes->brush().color(), background));
          // The chart follows the theme: dark background in the dark theme, light in the light one.
          QCOMPARE(background.lightness() < 128, theme == kiln::studio::ThemeChoice::Dark);
          // The stage chart: earlier bars in pale twins of the stage colours, left out of the legend.
          auto* stages = seriesNamed<QHorizontalStackedBarSeries>(panel.findChild<QChartView*>(QStringLiteral("stageChart")),
                                                                 QStringLiteral("stages"));
          QCOMPARE(stages->count(), 6);  // load, glslang, pipeline create; and their earlier twins
          for (int s = 0; s < 3; ++s) {
            QCOMPARE(stages->barSets()[s + 3]->objectName(), QStringLiteral("earlier:") + stages->barSets()[s]->objectName());
            QVERIFY(colorDistance(stages->barSets()[s + 3]->color(), background) <
                    colorDistance(stages->barSets()[s]->color(), background));
          }
          int legendEntries = 0;
          for (QLegendMarker* marker : panel.findChild<QChartView*>(QStringLiteral("stageChart"))->chart()->legend()->markers()) {
            legendEntries += marker->isVisible() ? 1 : 0;
          }
          QCOMPARE(legendEntries, 3);
        }
      }
    }
    kiln::studio::applyTheme(kiln::studio::ThemeChoice::Light);
  }

  // View > Theme while a report is shown: the charts are redrawn in the new palette at once.
  void chartsFollowThemeChange() {
    QTemporaryDir dir;
    const QString path = dir.filePath(QStringLiteral("now.json"));
    writeReport(path, {{QStringLiteral("cold"), 17, 18}, {QStringLiteral("epctx-file"), 3, 4}}, true);
    kiln::studio::applyTheme(kiln::studio::ThemeChoice::Light);
    BenchPanel panel;
    QVERIFY(panel.loadReport(path));
    auto* creationView = panel.findChild<QChartView*>(QStringLiteral("creationChart"));
    QVERIFY(creationView->chart()->backgroundBrush().color().lightness() > 128);
    kiln::studio::applyTheme(kiln::studio::ThemeChoice::Dark);
    QTRY_VERIFY(creationView->chart()->backgroundBrush().color().lightness() < 128);
    QVERIFY(creationView->chart()->titleBrush().color().lightness() > 128);  // light text on it
    kiln::studio::applyTheme(kiln::studio::ThemeChoice::Light);
    QTRY_VERIFY(creationView->chart()->backgroundBrush().color().lightness() > 128);
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
