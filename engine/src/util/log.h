// Internal logging: spdlog behind a logger that forwards to the public sink (kiln/log.h).
#pragma once

#include <spdlog/spdlog.h>

namespace kiln::log {

// The engine's logger; use spdlog's API: kiln::log::get()->warn("...{}", x).
spdlog::logger* get();

template <class... Args>
void info(spdlog::format_string_t<Args...> fmt, Args&&... args) { get()->info(fmt, std::forward<Args>(args)...); }
template <class... Args>
void warn(spdlog::format_string_t<Args...> fmt, Args&&... args) { get()->warn(fmt, std::forward<Args>(args)...); }
template <class... Args>
void debug(spdlog::format_string_t<Args...> fmt, Args&&... args) { get()->debug(fmt, std::forward<Args>(args)...); }
template <class... Args>
void error(spdlog::format_string_t<Args...> fmt, Args&&... args) { get()->error(fmt, std::forward<Args>(args)...); }

}  // namespace kiln::log
