#include "compile_job.h"

#include <QElapsedTimer>
#include <QFileInfo>

#include <algorithm>

#include "compile_settings.h"
#include "kiln/timings.h"
#include "shape_syntax.h"

namespace kiln::bridge {

namespace {

CompileSummary summarize(const CompileResult& result, double wallMs) {
  CompileSummary summary;
  summary.outputModelPath = QString::fromStdString(result.outputModelPath);
  summary.binaryPath = QString::fromStdString(result.binaryPath);
  summary.externalInitializersPath = QString::fromStdString(result.externalInitializersPath);
  summary.epContextNodes = result.epContextNodes;
  for (const std::string& file : result.filesWritten) {
    const QString path = QString::fromStdString(file);
    summary.files.push_back({path, QFileInfo(path).size()});
  }
  forEachTiming(result.timings, [&](std::string_view key, double ms) {
    if (ms > 0) summary.timingsMs.push_back({QString::fromUtf8(key.data(), static_cast<qsizetype>(key.size())), ms});
  });
  forEachCounter(result.counters, [&](std::string_view key, int64_t value) {
    summary.counters.push_back({QString::fromUtf8(key.data(), static_cast<qsizetype>(key.size())), value});
  });
  summary.wallMs = wallMs;
  return summary;
}

}  // namespace

Result<QStringList> parseShapeList(const QString& text) {
  KILN_ASSIGN_OR_RETURN(const std::vector<app::NamedShape> shapes, app::parseNamedShapeList(text.toStdString()));
  QStringList entries;
  for (const app::NamedShape& shape : shapes) {
    entries.push_back(QString::fromStdString(shape.name + "=" + app::formatDims(shape.dims)));
  }
  return entries;
}

CompileJob::CompileJob(QObject* parent) : QObject(parent) {
  qRegisterMetaType<kiln::bridge::CompileSummary>();
}

// The worker's destructor cancels a running compile and waits: the engine checks the token between steps and
// then removes its temporary files, so this wait is short and the folder is left as it was. Queued signals
// still pending for this object die with it.
CompileJob::~CompileJob() = default;

bool CompileJob::start(const app::CompileSettings& settings) {
  auto compile = [settings](const ProgressSink& sink) -> Result<CompileSummary> {
    QElapsedTimer timer;
    timer.start();
    if (settings.inputModel.empty()) return Status(StatusCode::INVALID_ARGUMENT, "no source model to compile");
    auto options = app::compilationOptionsFor(settings);
    if (!options.isOk()) return options.status();
    // The engine reports parallel stages from the calling thread too, so receivers on the GUI thread see the
    // (queued) progress signals in the order the engine reported them.
    options->sessionOptions().progress = sink;
    auto result = compileModel(*options);
    const double wallMs = static_cast<double>(timer.nsecsElapsed()) / 1e6;
    if (!result.isOk()) return result.status();
    return summarize(*result, wallMs);
  };
  return worker_.start(
      this, QStringLiteral("kiln-compile"), compile,
      [this](const ProgressEvent& event) {
        emit progress(QString::fromStdString(event.stage), event.done, event.total, static_cast<int>(event.step));
      },
      [this](const CompileSummary& summary) { emit finished(summary); },
      [this](const QString& code, const QString& message) { emit failed(code, message); },
      "the compile did not run");
}

void CompileJob::cancel() { worker_.cancel(); }

}  // namespace kiln::bridge
