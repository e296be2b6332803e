// CompileJob: kiln::compileModel (ONNX Runtime's Compile API) on its own thread, with progress, cancel and a result
// summary as Qt signals. The options map onto the engine's exactly as `kiln compile`'s do (app/common/compile_settings.h).
#pragma once

#include <QList>
#include <QObject>
#include <QPair>
#include <QString>
#include <QStringList>

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "compile_settings.h"
#include "engine_worker_thread.h"
#include "kiln/compiler.h"
#include "kiln/progress.h"

namespace kiln::bridge {

// One written file with its size at the time the compile reported it.
struct CompiledFile {
  QString path;
  qint64 bytes = 0;
};

// The parts of kiln::CompileResult the studio shows, in display-ready form.
struct CompileSummary {
  QString outputModelPath;
  QString binaryPath;                 // empty with embed mode or when nothing compiled
  QString externalInitializersPath;
  int epContextNodes = 0;             // 0: nothing compiled; a plain optimized model was written
  QList<CompiledFile> files;
  QList<QPair<QString, double>> timingsMs;  // the Contracts' timing keys, non-zero ones, in the Contracts' order
  QList<QPair<QString, qint64>> counters;   // every work counter
  double wallMs = 0;                        // wall time of compileModel as the job measured it
};

// Splits the text of a shapes field ("x=1x3x64x64 mask=1x10", also comma- or semicolon-separated) into the
// entries `kiln compile --shape` takes (kiln::app::parseNamedShapeList). INVALID_ARGUMENT names a bad entry.
Result<QStringList> parseShapeList(const QString& text);

class CompileJob : public QObject {
  Q_OBJECT

 public:
  explicit CompileJob(QObject* parent = nullptr);
  // Cancels a running compile and waits for the engine to stop (it checks between steps; the engine then removes
  // its temporary files). Nothing is emitted after this.
  ~CompileJob() override;

  // Starts compiling on a new thread and returns at once; false (and nothing started) while one still runs.
  bool start(const app::CompileSettings& settings);
  // Asks the running compile to stop; it ends with failed("CANCELLED", ...). Thread-safe; a no-op when idle.
  void cancel();
  // True from start() until finished or failed has been emitted.
  bool isRunning() const { return worker_.isRunning(); }
  bool isCancelling() const { return worker_.isCancelling(); }

 signals:
  // Emitted on the compiling thread, once per engine progress event, in order. Receivers on other threads (the
  // panel) get it queued; a receiver connected with Qt::DirectConnection runs on the compiling thread and may only
  // call thread-safe things such as cancel(). `stage` is the engine's stage name ("load", "optimize",
  // "partition", "compile", "<partition>: glslang", "<partition>: pipelines", "write"); total 0 = unknown.
  // `step`: the event's kiln::ProgressStep, as an int (what the panel switches on; `stage` is display text).
  void progress(const QString& stage, qint64 done, qint64 total, int step);
  // Emitted on this object's thread after every progress signal of the run.
  void finished(const kiln::bridge::CompileSummary& summary);
  // `code` is the status code's name ("CANCELLED", "FAIL", "INVALID_ARGUMENT", ...), `message` the engine's text.
  void failed(const QString& code, const QString& message);

 private:
  EngineWorkerThread<CompileSummary> worker_;
};

}  // namespace kiln::bridge

Q_DECLARE_METATYPE(kiln::bridge::CompileSummary)
