// LogHub: the engine's log lines as a Qt signal. The engine has one process-wide log sink (kiln::setLogSink); the
// hub owns it, so every panel that shows engine logs (compile, run, bench) connects here instead of fighting over it.
#pragma once

#include <QObject>
#include <QString>

#include <atomic>

#include "kiln/log.h"

namespace kiln::bridge {

class LogHub : public QObject {
  Q_OBJECT

 public:
  // The process-wide hub; the first call installs the engine's log sink. Call it first on the GUI thread (the hub
  // lives on the thread of the application object either way). It is never destroyed: engine threads may still log
  // while the application shuts down.
  static LogHub* instance();

  // Lines below `level` are dropped before they reach the queue (default Info). Thread-safe.
  void setMinimumLevel(LogLevel level);
  LogLevel minimumLevel() const { return minimumLevel_.load(std::memory_order_relaxed); }

  // Lines at Warn and above are also written to stderr, as the engine does when no sink is set (default on), so a
  // studio started from a terminal still shows its problems there.
  void setEchoToStderr(bool echo) { echoToStderr_.store(echo, std::memory_order_relaxed); }

  // Display name of a level: "debug", "info", "warning", "error".
  static QString levelName(int level);

 signals:
  // Always delivered on the hub's (GUI) thread through the event queue, whichever engine thread logged the line, so
  // receivers may touch widgets. `level` is a kiln::LogLevel value.
  void line(int level, const QString& text);

 private:
  LogHub();
  void receive(LogLevel level, std::string_view message);

  std::atomic<LogLevel> minimumLevel_{LogLevel::Info};
  std::atomic<bool> echoToStderr_{true};
};

}  // namespace kiln::bridge
