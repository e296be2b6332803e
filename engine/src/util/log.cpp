#include "util/log.h"

#include <spdlog/sinks/base_sink.h>
#include <spdlog/sinks/stdout_sinks.h>

#include <mutex>

#include "kiln/log.h"

namespace kiln {
namespace {

// Forwards formatted lines to the user's callback.
class CallbackSink final : public spdlog::sinks::base_sink<std::mutex> {
 public:
  explicit CallbackSink(LogSink sink) : sink_(std::move(sink)) {}

 protected:
  void sink_it_(const spdlog::details::log_msg& msg) override {
    const auto level = static_cast<LogLevel>(std::min<int>(static_cast<int>(msg.level), 5));
    sink_(level, std::string_view(msg.payload.data(), msg.payload.size()));
  }
  void flush_() override {}

 private:
  LogSink sink_;
};

std::shared_ptr<spdlog::logger>& logger() {
  static std::shared_ptr<spdlog::logger> instance = [] {
    auto l = std::make_shared<spdlog::logger>("kiln", std::make_shared<spdlog::sinks::stderr_sink_mt>());
    l->set_pattern("kiln: %l: %v");
    l->set_level(spdlog::level::warn);
    return l;
  }();
  return instance;
}

}  // namespace

void setLogSink(LogLevel minLevel, LogSink sink) {
  auto& l = logger();
  l->sinks().clear();
  if (sink) {
    l->sinks().push_back(std::make_shared<CallbackSink>(std::move(sink)));
  } else {
    l->sinks().push_back(std::make_shared<spdlog::sinks::stderr_sink_mt>());
    l->set_pattern("kiln: %l: %v");
  }
  l->set_level(static_cast<spdlog::level::level_enum>(static_cast<int>(minLevel)));
}

namespace log {
spdlog::logger* get() { return logger().get(); }
}  // namespace log

}  // namespace kiln
