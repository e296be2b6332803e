#include "compile_job.h"

#include <QElapsedTimer>
#include <QFileInfo>
#include <QRegularExpression>

#include <algorithm>
#include <exception>

#include "kiln/model_info.h"
#include "kiln/timings.h"

namespace kiln::bridge {

namespace {

// `kiln compile --shape`'s value syntax: digits separated by 'x' ("1x3x640x640").
Result<Shape> parseDims(const QString& text) {
  static const QRegularExpression dims(QStringLiteral("^[0-9]+(x[0-9]+)*$"));
  if (!dims.match(text).hasMatch()) {
    return Status(StatusCode::INVALID_ARGUMENT, "shape '" + text.toStdString() + "' must look like 1x3x640x640");
  }
  Shape shape;
  for (const QString& part : text.split(QLatin1Char('x'))) {
    bool ok = false;
    const qlonglong value = part.toLongLong(&ok);
    if (!ok) return Status(StatusCode::INVALID_ARGUMENT, "dimension '" + part.toStdString() + "' is too large");
    shape.push_back(value);
  }
  return shape;
}

// The form's NAME=DIMS entries, checked and turned into free-dimension overrides by kiln::addShapeOverrides, the
// same call `kiln compile --shape` makes.
Status applyShapes(const std::string& model, const QStringList& entries, SessionOptions& session) {
  std::vector<std::pair<std::string, Shape>> shapes;
  for (const QString& entry : entries) {
    const qsizetype eq = entry.indexOf(QLatin1Char('='));
    if (eq <= 0) {
      return Status(StatusCode::INVALID_ARGUMENT, "--shape '" + entry.toStdString() + "' must look like NAME=VALUE");
    }
    KILN_ASSIGN_OR_RETURN(Shape shape, parseDims(entry.mid(eq + 1)));
    shapes.emplace_back(entry.left(eq).toStdString(), std::move(shape));
  }
  return addShapeOverrides(model, shapes, session);
}

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
  static const QRegularExpression separators(QStringLiteral("[\\s,;]+"));
  QStringList entries;
  for (const QString& entry : text.split(separators, Qt::SkipEmptyParts)) {
    const qsizetype eq = entry.indexOf(QLatin1Char('='));
    if (eq <= 0) {
      return Status(StatusCode::INVALID_ARGUMENT, "shape '" + entry.toStdString() + "' must look like NAME=1x3x640x640");
    }
    KILN_RETURN_IF_ERROR(parseDims(entry.mid(eq + 1)).status());
    entries.push_back(entry);
  }
  return entries;
}

Result<ModelCompilationOptions> compilationOptionsFor(const CompileSettings& settings) {
  if (settings.sourcePath.isEmpty()) return Status(StatusCode::INVALID_ARGUMENT, "no source model to compile");
  const std::string source = settings.sourcePath.toStdString();
  SessionOptions session;
  if (!settings.device.isEmpty()) {
    KILN_RETURN_IF_ERROR(session.addConfigEntry("kiln.vulkan.device", settings.device.toStdString()));
  }
  if (settings.autotune) KILN_RETURN_IF_ERROR(session.addConfigEntry("kiln.vulkan.autotune", "1"));
  KILN_RETURN_IF_ERROR(applyShapes(source, settings.shapes, session));
  ModelCompilationOptions options(std::move(session));
  options.setEpContextEmbedMode(settings.embedMode);
  if (!settings.targetProfile.isEmpty()) options.setTargetProfile(settings.targetProfile.toStdString());
  if (!settings.optimizationLevel.isEmpty()) {
    KILN_ASSIGN_OR_RETURN(const GraphOptimizationLevel level,
                          parseGraphOptimizationLevel(settings.optimizationLevel.toStdString()));
    options.setGraphOptimizationLevel(level);
  }
  if (!settings.externalInitializersFile.isEmpty()) {
    if (settings.externalThreshold < 0) {
      return Status(StatusCode::INVALID_ARGUMENT, "the external initializer threshold must not be negative");
    }
    options.setOutputModelExternalInitializersFile(settings.externalInitializersFile.toStdString(),
                                                   static_cast<size_t>(settings.externalThreshold));
  }
  options.setFlags(flagIf(settings.errorIfOutputExists, CompileFlags::ERROR_IF_OUTPUT_FILE_EXISTS) |
                   flagIf(settings.errorIfNoNodesCompiled, CompileFlags::ERROR_IF_NO_NODES_COMPILED));
  options.setInputModelPath(source);
  if (!settings.outputPath.isEmpty()) options.setOutputModelPath(settings.outputPath.toStdString());
  if (!settings.nodeNamePrefix.isEmpty()) options.setNodeNamePrefix(settings.nodeNamePrefix.toStdString());
  return options;
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
