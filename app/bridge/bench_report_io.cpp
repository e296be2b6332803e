#include "bench_report_io.h"

#include <QCoreApplication>
#include <QFile>
#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <QSaveFile>

#include "bench_report.h"
#include "kiln/timings.h"

namespace kiln::bridge {
namespace {

QString tr(const char* text) { return QCoreApplication::translate("kiln::bridge", text); }

// The engine's stage order (kiln/timings.h, forEachTiming). Stages a newer CLI adds follow in the JSON's order.
const QStringList& stageOrder() {
  static const QStringList order = [] {
    QStringList keys;
    forEachTiming(SessionTimings{}, [&](std::string_view key, double) {
      keys.append(QString::fromUtf8(key.data(), static_cast<qsizetype>(key.size())));
    });
    return keys;
  }();
  return order;
}
// Totals over the stages (and the first inference, charted on its own): stacking them would count time twice.
bool isAggregate(const QString& key) {
  return key == QLatin1String("session_total_ms") || key == QLatin1String("first_run_ms");
}

std::optional<double> optionalNumber(const QJsonValue& value) {
  if (!value.isDouble()) return std::nullopt;
  return value.toDouble();
}

BenchStat statFrom(const QJsonValue& value) {
  const QJsonObject object = value.toObject();
  BenchStat stat;
  stat.min = object.value(QLatin1String("min")).toDouble();
  stat.median = object.value(QLatin1String("median")).toDouble();
  stat.p90 = optionalNumber(object.value(QLatin1String("p90")));  // null with fewer than 10 runs
  // Older reports have no quartiles or maximum: left unset, so charts draw what the report has.
  stat.p25 = optionalNumber(object.value(QLatin1String("p25")));
  stat.p75 = optionalNumber(object.value(QLatin1String("p75")));
  stat.max = optionalNumber(object.value(QLatin1String("max")));
  return stat;
}

QList<QPair<QString, double>> stagesFrom(const QJsonObject& stages) {
  QList<QPair<QString, double>> out;
  for (const QString& name : stageOrder()) {
    if (!isAggregate(name) && stages.contains(name)) out.append({name, stages.value(name).toDouble()});
  }
  for (auto it = stages.begin(); it != stages.end(); ++it) {
    const bool known = stageOrder().contains(it.key());
    if (!known && !isAggregate(it.key()) && it.value().isDouble()) out.append({it.key(), it.value().toDouble()});
  }
  return out;
}

bool writeFile(const QString& path, const QByteArray& bytes, QString* error) {
  // QSaveFile writes beside the target and renames: a failed save never leaves half a report.
  QSaveFile file(path);
  if (!file.open(QIODevice::WriteOnly) || file.write(bytes) != bytes.size() || !file.commit()) {
    if (error) *error = tr("cannot write '%1': %2").arg(path, file.errorString());
    return false;
  }
  return true;
}

}  // namespace

QString BenchRow::label() const { return mode + QStringLiteral(" / ") + driverCache; }

QString BenchReport::caption() const {
  const QString stamp = when.isValid() ? when.toString(QStringLiteral("yyyy-MM-dd HH:mm")) : QString();
  if (!source.isEmpty()) {
    return stamp.isEmpty() ? QFileInfo(source).fileName()
                           : QStringLiteral("%1 (%2)").arg(QFileInfo(source).fileName(), stamp);
  }
  return stamp.isEmpty() ? tr("this run") : tr("run of %1").arg(stamp);
}

const BenchRow* BenchReport::findRow(const QString& mode, const QString& driverCache) const {
  for (const BenchRow& row : rows) {
    if (row.mode == mode && row.driverCache == driverCache) return &row;
  }
  return nullptr;
}

std::optional<BenchReport> parseBenchReport(const QByteArray& json, QString* error) {
  QJsonParseError parseError{};
  const QJsonDocument document = QJsonDocument::fromJson(json, &parseError);
  auto fail = [&](const QString& message) -> std::optional<BenchReport> {
    if (error) *error = message;
    return std::nullopt;
  };
  if (parseError.error != QJsonParseError::NoError) {
    return fail(tr("not JSON (%1 at offset %2)").arg(parseError.errorString()).arg(parseError.offset));
  }
  const QJsonObject root = document.object();
  if (root.contains(QLatin1String("error"))) {
    const QJsonObject e = root.value(QLatin1String("error")).toObject();
    return fail(e.value(QLatin1String("code")).toString() + QStringLiteral(": ") +
                e.value(QLatin1String("message")).toString());
  }
  if (!root.value(QLatin1String("modes")).isArray() || !root.contains(QLatin1String("model"))) {
    return fail(tr("not a kiln bench report (no \"model\" and \"modes\")"));
  }
  BenchReport report;
  report.raw = root;
  report.model = root.value(QLatin1String("model")).toString();
  report.device = root.value(QLatin1String("device")).toString();
  report.runs = root.value(QLatin1String("runs")).toInt();
  report.inferences = root.value(QLatin1String("inferences_per_run")).toInt();
  report.autotune = root.value(QLatin1String("autotune")).toBool();
  for (const QJsonValue& value : root.value(QLatin1String("modes")).toArray()) {
    const QJsonObject mode = value.toObject();
    BenchRow row;
    row.mode = mode.value(QLatin1String("name")).toString();
    row.driverCache = mode.value(QLatin1String("driver_cache")).toString();
    if (row.mode.isEmpty()) return fail(tr("a row of the report has no mode name"));
    row.runs = mode.value(QLatin1String("runs")).toInt();
    row.sessionCreate = statFrom(mode.value(QLatin1String("session_create_ms")));
    row.firstInference = statFrom(mode.value(QLatin1String("first_inference_ms")));
    row.timeToFirstResult = statFrom(mode.value(QLatin1String("time_to_first_result_ms")));
    row.steadyInference = statFrom(mode.value(QLatin1String("inference_ms")));
    row.stages = stagesFrom(mode.value(QLatin1String("stages_ms")).toObject());
    const QJsonObject counters = mode.value(QLatin1String("counters")).toObject();
    for (auto it = counters.begin(); it != counters.end(); ++it) {
      row.counters.append({it.key(), static_cast<qint64>(it.value().toDouble())});
    }
    row.speedupVsCold = optionalNumber(mode.value(QLatin1String("speedup_vs_cold")));
    row.timeToFirstResultSpeedupVsCold = optionalNumber(mode.value(QLatin1String("time_to_first_result_speedup_vs_cold")));
    report.rows.append(row);
  }
  const QJsonObject summary = root.value(QLatin1String("summary")).toObject();
  report.epctxSpeedupDriverCold = optionalNumber(summary.value(QLatin1String("epctx_session_create_speedup_driver_cold")));
  report.epctxSpeedupDriverWarm = optionalNumber(summary.value(QLatin1String("epctx_session_create_speedup_driver_warm")));
  report.timeToFirstResultFullyCachedVsFullyCold =
      optionalNumber(summary.value(QLatin1String("time_to_first_result_fully_cached_vs_fully_cold")));
  report.onnxRuntimeVsEpctx = optionalNumber(summary.value(QLatin1String("onnxruntime_session_create_vs_epctx")));
  return report;
}

std::optional<BenchReport> loadBenchReport(const QString& path, QString* error) {
  QFile file(path);
  if (!file.open(QIODevice::ReadOnly)) {
    if (error) *error = tr("cannot open '%1': %2").arg(path, file.errorString());
    return std::nullopt;
  }
  QString parseError;
  std::optional<BenchReport> report = parseBenchReport(file.readAll(), &parseError);
  if (!report) {
    if (error) *error = tr("'%1': %2").arg(path, parseError);
    return std::nullopt;
  }
  report->source = QFileInfo(path).absoluteFilePath();
  report->when = QFileInfo(path).lastModified();
  return report;
}

bool saveBenchReportJson(const BenchReport& report, const QString& path, QString* error) {
  return writeFile(path, QJsonDocument(report.raw).toJson(QJsonDocument::Indented), error);
}

QString benchReportCsv(const BenchReport& report) {
  const QByteArray json = QJsonDocument(report.raw).toJson(QJsonDocument::Compact);
  const nlohmann::json document = nlohmann::json::parse(json.constData(), json.constData() + json.size(), nullptr, false);
  return QString::fromStdString(app::benchCsv(document));
}

bool saveBenchReportCsv(const BenchReport& report, const QString& path, QString* error) {
  return writeFile(path, benchReportCsv(report).toUtf8(), error);
}

QString formatRatio(const std::optional<double>& ratio) {
  return ratio ? QString::asprintf("%.2fx", *ratio) : QStringLiteral("-");
}

QString formatMs(double ms) {
  if (ms < 10) return QString::asprintf("%.2f ms", ms);
  if (ms < 1000) return QString::asprintf("%.1f ms", ms);
  return QString::asprintf("%.0f ms", ms);
}

QString stageDisplayName(const QString& key) {
  QString name = key;
  if (name.endsWith(QLatin1String("_ms"))) name.chop(3);
  return name.replace(QLatin1Char('_'), QLatin1Char(' '));
}

}  // namespace kiln::bridge
