#include "log_hub.h"

#include <QCoreApplication>

#include <cstdio>

namespace kiln::bridge {

LogHub::LogHub() {
  // A hub first asked for on a worker thread must still deliver on the GUI thread.
  if (QCoreApplication* app = QCoreApplication::instance(); app && thread() != app->thread()) {
    moveToThread(app->thread());
  }
  // The engine sink is installed once, at Debug, and filtered here: replacing the engine's sink later (to change the
  // level) would race with engine threads logging through it. Debug lines are few (device choice, cache
  // decisions); Trace is never asked for.
  setLogSink(LogLevel::Debug, [this](LogLevel level, std::string_view message) { receive(level, message); });
}

LogHub* LogHub::instance() {
  // Deliberately leaked: a static object would be destroyed at exit while a detached engine thread could log.
  static LogHub* hub = new LogHub;
  return hub;
}

void LogHub::setMinimumLevel(LogLevel level) { minimumLevel_.store(level, std::memory_order_relaxed); }

QString LogHub::levelName(int level) {
  switch (static_cast<LogLevel>(level)) {
    case LogLevel::Trace: return QStringLiteral("trace");
    case LogLevel::Debug: return QStringLiteral("debug");
    case LogLevel::Info: return QStringLiteral("info");
    case LogLevel::Warn: return QStringLiteral("warning");
    case LogLevel::Error: return QStringLiteral("error");
    case LogLevel::Off: break;
  }
  return QStringLiteral("log");
}

void LogHub::receive(LogLevel level, std::string_view message) {
  if (level >= LogLevel::Warn && echoToStderr_.load(std::memory_order_relaxed)) {
    // One fprintf per line: stdio locks the stream, so lines from parallel engine threads do not interleave.
    std::fprintf(stderr, "kiln: %s: %.*s\n", qPrintable(levelName(static_cast<int>(level))),
                 static_cast<int>(message.size()), message.data());
  }
  if (level < minimumLevel_.load(std::memory_order_relaxed)) return;
  const QString text = QString::fromUtf8(message.data(), static_cast<qsizetype>(message.size()));
  const int levelValue = static_cast<int>(level);
  // Queued even when the engine logs on the GUI thread: a receiver then never re-enters widgets from inside an
  // engine call.
  QMetaObject::invokeMethod(
      this, [this, levelValue, text] { emit line(levelValue, text); }, Qt::QueuedConnection);
}

}  // namespace kiln::bridge
