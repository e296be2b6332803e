// The engine's log output. The engine logs through spdlog internally; callers receive lines through a sink.
#pragma once

#include "kiln/export.h"

#include <functional>
#include <string_view>

namespace kiln {

enum class LogLevel { Trace = 0, Debug = 1, Info = 2, Warn = 3, Error = 4, Off = 5 };

using LogSink = std::function<void(LogLevel level, std::string_view message)>;

// Routes every engine log line at or above `minLevel` to `sink` (process-wide; replaces the previous sink).
// With no sink set, warnings and errors go to stderr.
KILN_EXPORT void setLogSink(LogLevel minLevel, LogSink sink);

}  // namespace kiln
