// BenchRunner: runs `kiln bench MODEL --json` in a child process and reports its progress and its report.
//
// The bench measures session creation in fresh processes (it spawns `kiln bench-worker` children and a
// `kiln compile` child), so it runs as a program, never inside the studio. It runs in a process group of its own
// so that cancel() can end the whole tree, and in a temporary work folder that is removed afterwards.
#pragma once

#include <QObject>
#include <QProcess>
#include <QString>
#include <QStringList>
#include <QTemporaryDir>
#include <QTimer>

#include <memory>

#include "bench_report_io.h"

namespace kiln::bridge {

struct BenchOptions {
  QString model;
  QStringList modes = {QStringLiteral("cold"), QStringLiteral("pipeline-cache"), QStringLiteral("epctx-embed"),
                       QStringLiteral("epctx-file"), QStringLiteral("in-process")};
  QStringList driverCaches = {QStringLiteral("cold"), QStringLiteral("warm")};
  int runs = 5;
  int inferences = 5;
  QStringList extraArguments;  // passed through: --shape, --input, --config, --device, --autotune ...
};

class BenchRunner : public QObject {
  Q_OBJECT

 public:
  explicit BenchRunner(QObject* parent = nullptr);
  // Kills a running bench (the whole process group) and removes its work folder.
  ~BenchRunner() override;

  // Starts the bench and returns at once; false (and failed() emitted) when it cannot start: no kiln program,
  // a bench already running, or no temporary folder.
  bool start(const BenchOptions& options);
  // Ends the bench and every process it started; canceled() follows once they are gone and the work folder is
  // removed. No finished() or failed() is emitted for a canceled run.
  void cancel();
  bool isRunning() const { return state_ != State::Idle; }

  // The running bench's process id (also its process group id), or 0.
  qint64 processId() const { return pgid_; }
  // The running bench's work folder (--work-dir), or "".
  QString workDir() const;
  // The last command line run, program first.
  QStringList commandLine() const { return commandLine_; }

  // A progress line the CLI prints on stderr when it is not a terminal (progress_display.cpp): "kiln: STAGE",
  // "kiln: STAGE (TOTAL)" or "kiln: STAGE NN%". True with the stage and done/total (0/0: no count) when it is one.
  static bool parseProgressLine(const QString& line, QString* stage, qint64* done, qint64* total);

 signals:
  void progress(const QString& stage, qint64 done, qint64 total);
  void finished(const kiln::bridge::BenchReport& report);
  // The CLI's error with its exit code, and the end of what it printed on stderr.
  void failed(const QString& message);
  void canceled();

 private:
  enum class State { Idle, Running, Canceling };

  void onStderr();
  void onFinished(int exitCode, QProcess::ExitStatus status);
  void onErrorOccurred(QProcess::ProcessError error);
  void killGroup();
  void waitForGroupGone();
  void finishCancel();
  void cleanUp();
  QString stderrTail(int lines) const;

  State state_ = State::Idle;
  QProcess* process_ = nullptr;
  std::unique_ptr<QTemporaryDir> workDir_;
  qint64 pgid_ = 0;
  QStringList commandLine_;
  QByteArray stderrPending_;  // a line not ended yet
  QStringList stderrLines_;   // the last lines, for error messages
  QString lastStage_;
  qint64 lastTotal_ = 0;
  QTimer reapTimer_;
  int reapPolls_ = 0;
};

}  // namespace kiln::bridge
