#include "compile_job.h"

#include <QElapsedTimer>
#include <QFileInfo>

#include <algorithm>
#include <exception>

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

Result<ModelCompilationOptions> compilationOptionsFor(const CompileSettings& settings) {
  if (settings.sourcePath.isEmpty()) return Status(StatusCode::INVALID_ARGUMENT, "no source model to compile");
  app::CompileSettings common;
  common.inputModel = settings.sourcePath.toStdString();
  common.outputModel = settings.outputPath.toStdString();
  common.embedMode = settings.embedMode;
  common.nodeNamePrefix = settings.nodeNamePrefix.toStdString();
  common.externalInitializersFile = settings.externalInitializersFile.toStdString();
  common.externalThreshold = settings.externalThreshold;
  common.errorIfOutputExists = settings.errorIfOutputExists;
  common.errorIfNoNodesCompiled = settings.errorIfNoNodesCompiled;
  common.device = settings.device.toStdString();
  common.targetProfile = settings.targetProfile.toStdString();
  common.optimizationLevel = settings.optimizationLevel.toStdString();
  common.autotune = settings.autotune;
  for (const QString& entry : settings.shapes) common.shapes.push_back(entry.toStdString());
  return app::compilationOptionsFor(common);
}

CompileJob::CompileJob(QObject* parent) : QObject(parent) {
  qRegisterMetaType<kiln::bridge::CompileSummary>();
}

CompileJob::~CompileJob() {
  if (!thread_) return;
  // The engine checks the token between steps and then removes its temporary files, so this wait is short and the
  // folder is left as it was. Queued signals still pending for this object die with it.
  token_->cancel();
  thread_->wait();
  delete thread_;
}

bool CompileJob::start(const CompileSettings& settings) {
  if (running_) return false;
  running_ = true;
  token_ = std::make_shared<CancellationToken>();
  outcome_ = std::make_shared<Result<CompileSummary>>(Status(StatusCode::FAIL, "the compile did not run"));
  thread_ = QThread::create([this, settings, token = token_, outcome = outcome_] {
    QElapsedTimer timer;
    timer.start();
    try {
      auto options = compilationOptionsFor(settings);
      if (!options.isOk()) {
        *outcome = options.status();
        return;
      }
      ProgressSink& sink = options->sessionOptions().progress;
      // Runs on this thread (the engine reports parallel stages from the calling thread too): the signal is queued
      // to receivers on the GUI thread, which see the events in the order the engine reported them.
      sink.onProgress = [this](const ProgressEvent& event) {
        emit progress(QString::fromStdString(event.stage), event.done, event.total);
      };
      sink.cancellation = token;
      auto result = compileModel(*options);
      const double wallMs = static_cast<double>(timer.nsecsElapsed()) / 1e6;
      if (result.isOk()) {
        *outcome = summarize(*result, wallMs);
      } else {
        *outcome = result.status();
      }
    } catch (const std::exception& e) {
      // The engine API does not throw, but std::bad_alloc on a huge model must not terminate the app.
      *outcome = Status(StatusCode::RUNTIME_EXCEPTION, e.what());
    }
  });
  thread_->setObjectName(QStringLiteral("kiln-compile"));
  connect(thread_, &QThread::finished, this, &CompileJob::deliver);
  thread_->start();
  return true;
}

void CompileJob::cancel() {
  // token_ is only replaced by start() on this object's thread while idle; cancel() from the compiling thread (a
  // direct progress receiver) therefore always sees the running compile's token.
  if (auto token = token_) token->cancel();
}

void CompileJob::deliver() {
  if (!thread_) return;
  thread_->wait();  // finished is emitted just before the thread ends; the outcome is complete either way
  thread_->deleteLater();
  thread_ = nullptr;
  running_ = false;
  const Result<CompileSummary> outcome = std::move(*outcome_);
  outcome_.reset();
  if (outcome.isOk()) {
    emit finished(outcome.value());
  } else {
    emit failed(QString::fromLatin1(statusCodeName(outcome.status().code())),
                QString::fromStdString(outcome.status().message()));
  }
}

}  // namespace kiln::bridge
