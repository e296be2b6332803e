#include "bench_runner.h"

#include <QCoreApplication>
#include <QDateTime>
#include <QDir>
#include <QFile>
#include <QRegularExpression>

#include <csignal>

#include <sys/types.h>
#include <unistd.h>

#include "child_process.h"
#include "kiln_cli.h"

namespace kiln::bridge {
namespace {


constexpr int kKeptStderrLines = 400;
constexpr int kReapPollMs = 50;
constexpr int kReapPolls = 100;  // 5 s: SIGKILLed processes are normally gone within a poll or two

}  // namespace

BenchRunner::BenchRunner(QObject* parent) : QObject(parent) {
  reapTimer_.setInterval(kReapPollMs);
  connect(&reapTimer_, &QTimer::timeout, this, &BenchRunner::waitForGroupGone);
}

BenchRunner::~BenchRunner() {
  reapTimer_.stop();
  if (process_) {
    process_->disconnect(this);
    if (process_->state() != QProcess::NotRunning) {
      killGroup();
      process_->waitForFinished(2000);
    }
    // The workers may take a moment to die after SIGKILL; the work folder goes only once they have.
    for (int poll = 0; poll < kReapPolls && !app::processGroupMembers(static_cast<int>(pgid_)).empty(); ++poll) {
      killGroup();
      usleep(kReapPollMs * 1000);
    }
    delete process_;
  }
  workDir_.reset();
}

QString BenchRunner::workDir() const { return workDir_ ? workDir_->path() : QString(); }

bool BenchRunner::parseProgressLine(const QString& line, QString* stage, qint64* done, qint64* total) {
  static const QRegularExpression percent(QStringLiteral("^kiln: (.+) (\\d+)%$"));
  static const QRegularExpression counted(QStringLiteral("^kiln: (.+) \\((\\d+)\\)$"));
  static const QRegularExpression plain(QStringLiteral("^kiln: (.+)$"));
  // Log and error lines share the "kiln: " prefix: "kiln: error: ...", "kiln: warning: ...".
  static const QRegularExpression logLine(QStringLiteral("^kiln: (trace|debug|info|warning|error): "));
  if (logLine.match(line).hasMatch()) return false;
  if (const auto m = percent.match(line); m.hasMatch()) {
    *stage = m.captured(1);
    *done = m.captured(2).toLongLong();
    *total = 100;
    return true;
  }
  if (const auto m = counted.match(line); m.hasMatch()) {
    *stage = m.captured(1);
    *done = 0;
    *total = m.captured(2).toLongLong();
    return true;
  }
  if (const auto m = plain.match(line); m.hasMatch()) {
    *stage = m.captured(1);
    *done = 0;
    *total = 0;
    return true;
  }
  return false;
}

bool BenchRunner::start(const BenchOptions& options) {
  if (state_ != State::Idle) {
    emit failed(tr("a benchmark is already running"));
    return false;
  }
  const KilnCliLocation cli = locateKilnCli();
  if (!cli.found()) {
    emit failed(cli.error);
    return false;
  }
  workDir_ = std::make_unique<QTemporaryDir>(QDir::temp().filePath(QStringLiteral("kiln-studio-bench-XXXXXX")));
  if (!workDir_->isValid()) {
    const QString message = tr("cannot create a temporary folder for the benchmark: %1").arg(workDir_->errorString());
    workDir_.reset();
    emit failed(message);
    return false;
  }
  QStringList arguments = {QStringLiteral("bench"),
                           options.model,
                           QStringLiteral("--json"),
                           QStringLiteral("--modes"),
                           options.modes.join(QLatin1Char(',')),
                           QStringLiteral("--driver-cache"),
                           options.driverCaches.join(QLatin1Char(',')),
                           QStringLiteral("--runs"),
                           QString::number(options.runs),
                           QStringLiteral("--inferences"),
                           QString::number(options.inferences),
                           // Compiled models, pipeline caches and driver caches go here and are removed with it,
                           // even when the bench is killed and cannot clean up after itself.
                           QStringLiteral("--work-dir"),
                           workDir_->filePath(QStringLiteral("work")),
                           // The CLI's own CSV, kept with the report so a saved CSV is exactly what the CLI writes.
                           QStringLiteral("--csv"),
                           workDir_->filePath(QStringLiteral("report.csv"))};
  arguments += options.extraArguments;
  commandLine_ = QStringList{cli.path} + arguments;

  process_ = new QProcess(this);
  process_->setProgram(cli.path);
  process_->setArguments(arguments);
  process_->setStandardInputFile(QProcess::nullDevice());
  // A process group of its own: the bench's workers inherit it, so one kill(-pgid) ends the whole tree, and a
  // Ctrl+C in the studio's terminal does not reach the bench.
  process_->setChildProcessModifier(app::becomeGroupLeader);
  connect(process_, &QProcess::readyReadStandardError, this, &BenchRunner::onStderr);
  connect(process_, &QProcess::finished, this, &BenchRunner::onFinished);
  connect(process_, &QProcess::errorOccurred, this, &BenchRunner::onErrorOccurred);
  stderrPending_.clear();
  stderrLines_.clear();
  lastStage_.clear();
  lastTotal_ = 0;
  state_ = State::Running;
  process_->start();
  pgid_ = process_->processId();
  return state_ == State::Running;
}

void BenchRunner::cancel() {
  if (state_ != State::Running) return;
  state_ = State::Canceling;
  killGroup();
  if (!process_ || process_->state() == QProcess::NotRunning) waitForGroupGone();
  // Otherwise onFinished() follows when the killed bench is reaped, and waits for its workers from there.
}

void BenchRunner::killGroup() {
  if (pgid_ <= 0) return;
  // The group, and the bench itself in case it was killed before its setpgid ran.
  app::killProcessGroup(static_cast<int>(pgid_), process_ && process_->state() != QProcess::NotRunning);
}

void BenchRunner::waitForGroupGone() {
  if (!reapTimer_.isActive()) reapPolls_ = 0;
  if (!app::processGroupMembers(static_cast<int>(pgid_)).empty() && reapPolls_++ < kReapPolls) {
    killGroup();  // a worker forked while the first signal was on its way
    reapTimer_.start();
    return;
  }
  reapTimer_.stop();
  finishCancel();
}

void BenchRunner::finishCancel() {
  cleanUp();
  emit canceled();
}

void BenchRunner::cleanUp() {
  if (process_) {
    process_->disconnect(this);
    process_->deleteLater();  // we may be inside one of its signals
    process_ = nullptr;
  }
  workDir_.reset();  // removes the work folder and everything the bench left in it
  pgid_ = 0;
  state_ = State::Idle;
}

void BenchRunner::onStderr() {
  if (!process_) return;
  stderrPending_ += process_->readAllStandardError();
  qsizetype end;
  while ((end = stderrPending_.indexOf('\n')) >= 0) {
    const QString line = QString::fromUtf8(stderrPending_.left(end)).trimmed();
    stderrPending_.remove(0, end + 1);
    if (line.isEmpty()) continue;
    stderrLines_.append(line);
    if (stderrLines_.size() > kKeptStderrLines) stderrLines_.removeFirst();
    QString stage;
    qint64 done = 0, total = 0;
    if (state_ != State::Running || !parseProgressLine(line, &stage, &done, &total)) continue;
    if (total == 100 && stage == lastStage_ && lastTotal_ > 0) {
      // "runs 50%" after "runs (8)": report it in the stage's own steps.
      done = done * lastTotal_ / 100;
      total = lastTotal_;
    } else if (stage != lastStage_) {
      lastStage_ = stage;
      lastTotal_ = total;
    }
    emit progress(stage, done, total);
  }
}

QString BenchRunner::stderrTail(int lines) const {
  QStringList tail;
  for (qsizetype i = stderrLines_.size() - 1; i >= 0 && tail.size() < lines; --i) {
    QString stage;
    qint64 done = 0, total = 0;
    if (!parseProgressLine(stderrLines_[i], &stage, &done, &total)) tail.prepend(stderrLines_[i]);
  }
  return tail.join(QLatin1Char('\n'));
}

void BenchRunner::onFinished(int exitCode, QProcess::ExitStatus status) {
  if (state_ == State::Canceling) {
    waitForGroupGone();
    return;
  }
  if (!process_) return;
  onStderr();
  if (!stderrPending_.isEmpty()) stderrLines_.append(QString::fromUtf8(stderrPending_).trimmed());
  const QByteArray out = process_->readAllStandardOutput();

  QString message;
  if (status == QProcess::CrashExit) {
    // Nothing should be left of the tree, but a crashed bench cannot have waited for its workers.
    killGroup();
    message = tr("kiln bench crashed (%1)").arg(process_->errorString());
    const QString tail = stderrTail(15);
    if (!tail.isEmpty()) message += QStringLiteral("\n\n") + tail;
  } else if (exitCode != 0) {
    // The CLI's error is its "kiln: error: " line and everything after it (a worker's stderr tail follows it).
    qsizetype errorLine = -1;
    for (qsizetype i = stderrLines_.size() - 1; i >= 0 && errorLine < 0; --i) {
      if (stderrLines_[i].startsWith(QLatin1String("kiln: error: "))) errorLine = i;
    }
    QString error;
    if (errorLine >= 0) {
      error = stderrLines_.mid(errorLine).join(QLatin1Char('\n')).mid(int(sizeof("kiln: error: ")) - 1);
    } else {
      error = stderrTail(15);
    }
    message = tr("kiln bench failed (exit code %1): %2").arg(exitCode).arg(error);
  } else {
    QString parseError;
    std::optional<BenchReport> report = parseBenchReport(out, &parseError);
    if (report) {
      report->when = QDateTime::currentDateTime();
      QFile csv(workDir_->filePath(QStringLiteral("report.csv")));
      if (csv.open(QIODevice::ReadOnly)) report->csvFromCli = QString::fromUtf8(csv.readAll());
      cleanUp();
      emit finished(*report);
      return;
    }
    message = tr("kiln bench printed no report: %1").arg(parseError);
  }
  cleanUp();
  emit failed(message);
}

void BenchRunner::onErrorOccurred(QProcess::ProcessError error) {
  // Only a failed start ends without finished(); crashes and kills arrive there.
  if (error != QProcess::FailedToStart || !process_) return;
  const QString message = tr("cannot start '%1': %2").arg(process_->program(), process_->errorString());
  const bool wasCanceling = state_ == State::Canceling;
  cleanUp();
  if (wasCanceling) {
    emit canceled();
  } else {
    emit failed(message);
  }
}

}  // namespace kiln::bridge
