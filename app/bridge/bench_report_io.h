// kiln bench's JSON report as the studio reads it: parsed from `kiln bench --json` (or a file saved earlier),
// saved back as JSON (the CLI's document, unchanged) or as CSV (the CLI's --csv columns).
#pragma once

#include <QDateTime>
#include <QJsonObject>
#include <QList>
#include <QMetaType>
#include <QPair>
#include <QString>

#include <optional>

namespace kiln::bridge {

// {min, median} over a row's runs, in milliseconds, p90 when the row had enough runs for it (10: kiln bench writes
// null below that, app/common/bench_statistics.h), and the quartiles and maximum a box plot needs: reports written
// before kiln bench gave p25, p75 and max (or edited by hand) lack them.
struct BenchStat {
  double min = 0;
  double median = 0;
  std::optional<double> p90;
  std::optional<double> p25, p75, max;

  // True when the report gave p25, p75 and max: the row can be drawn as a standard box plot.
  bool hasBoxPlot() const { return p25 && p75 && max; }
};

// One row of the report: a mode at a driver-cache state ("cold", "warm", or "n/a" for onnxruntime-node).
struct BenchRow {
  QString mode;
  QString driverCache;
  int runs = 0;
  BenchStat sessionCreate;
  BenchStat firstInference;
  BenchStat timeToFirstResult;
  BenchStat steadyInference;
  // Median ms of each session-creation stage, in the engine's stage order, leaving out the aggregates
  // (session_total_ms, first_run_ms) so the stages can be stacked; keys keep their "_ms" suffix.
  QList<QPair<QString, double>> stages;
  QList<QPair<QString, qint64>> counters;
  std::optional<double> speedupVsCold;                   // median(cold) / median(row), session creation
  std::optional<double> timeToFirstResultSpeedupVsCold;  // the same for time to first result

  // "epctx-file / warm", the row's name in charts and tables.
  QString label() const;
};

struct BenchReport {
  QString model;
  QString device;
  int runs = 0;
  int inferences = 0;
  bool autotune = false;
  QList<BenchRow> rows;
  std::optional<double> epctxSpeedupDriverCold;
  std::optional<double> epctxSpeedupDriverWarm;
  std::optional<double> timeToFirstResultFullyCachedVsFullyCold;
  std::optional<double> onnxRuntimeVsEpctx;
  QJsonObject raw;    // the document as the CLI printed it; saving writes this back
  QString source;     // the file it was loaded from, or "" for a run of this session
  QDateTime when;     // when it was measured (a run) or the file's modification time (a load)
  QString csvFromCli; // what the CLI's own --csv wrote for a run of this session, else ""

  // "tiny_cnn.onnx, 2 runs, 14:03:12" or "bench.json (2024-05-01 14:03)": names a report in legends and titles.
  QString caption() const;
  const BenchRow* findRow(const QString& mode, const QString& driverCache) const;
};

// Parses a `kiln bench --json` document; nullopt with `error` set when it is not one (an {"error": ...} document
// gives the CLI's message).
std::optional<BenchReport> parseBenchReport(const QByteArray& json, QString* error);
// Reads a saved report; `source` and `when` are set from the file.
std::optional<BenchReport> loadBenchReport(const QString& path, QString* error);
// Writes the CLI's JSON document (indented); false with `error` set when the file cannot be written.
bool saveBenchReportJson(const BenchReport& report, const QString& path, QString* error);
// The CLI's --csv text for a report's JSON document (kiln::app::benchCsv, the CLI's own writer).
QString benchReportCsv(const BenchReport& report);
bool saveBenchReportCsv(const BenchReport& report, const QString& path, QString* error);

// "3.42x", or "-" when a ratio is missing (no cold row to compare with).
QString formatRatio(const std::optional<double>& ratio);
// "12.3 ms" with precision for small values: "0.84 ms".
QString formatMs(double ms);
// "pipeline_create_ms" -> "pipeline create".
QString stageDisplayName(const QString& key);

}  // namespace kiln::bridge

Q_DECLARE_METATYPE(kiln::bridge::BenchReport)
