#include "cli_output.h"

#include <algorithm>
#include <cstdio>
#include <iostream>

#include "kiln/log.h"
#include "shape_syntax.h"

namespace kiln::cli {

void addCommonFlags(CLI::App& command, CommonFlags& flags) {
  command.add_flag("--json", flags.json, "Print the result as JSON on stdout");
  command.add_flag("-q,--quiet", flags.quiet, "Print only errors on stderr");
  command.add_flag("-v,--verbose", flags.verbose, "Print engine debug logs on stderr");
}

void configureLogging(const CommonFlags& flags) {
  const LogLevel level = flags.verbose ? LogLevel::Debug : (flags.quiet ? LogLevel::Error : LogLevel::Warn);
  setLogSink(level, [](LogLevel l, std::string_view message) {
    static const char* names[] = {"trace", "debug", "info", "warning", "error", "off"};
    std::fprintf(stderr, "kiln: %s: %.*s\n", names[static_cast<int>(l)], static_cast<int>(message.size()),
                 message.data());
  });
}

int reportError(const Status& status, const CommonFlags& flags) {
  // stderr's last line is always the `kiln: error:` line (scripts and people read the end): a message that lists
  // details on further lines prints them first.
  const std::string text = status.toString();
  const size_t lineEnd = text.find('\n');
  if (lineEnd == std::string::npos) {
    std::fprintf(stderr, "kiln: error: %s\n", text.c_str());
  } else {
    std::string head = text.substr(0, lineEnd);
    if (!head.empty() && head.back() == ':') head.pop_back();
    std::fprintf(stderr, "%s\nkiln: error: %s (listed above)\n", text.substr(lineEnd + 1).c_str(), head.c_str());
  }
  if (flags.json) {
    printJson({{"error", {{"code", statusCodeName(status.code())}, {"message", status.message()}}}});
  }
  return status.code() == StatusCode::INVALID_ARGUMENT ? kExitUsage : kExitFailure;
}

// Strings from files (a jobs file, a model's names) may hold invalid UTF-8: replaced, never thrown on.
void printJson(const nlohmann::json& document) {
  std::cout << document.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << std::endl;
}

std::string describeValue(const ValueMetadata& value) {
  std::string text = dataTypeName(value.dtype);
  if (!value.hasShape) return text + "[?]";
  text += "[";
  for (size_t i = 0; i < value.shape.size(); ++i) {
    if (i) text += ",";
    const Dimension& d = value.shape[i];
    text += d.isFixed() ? std::to_string(d.value) : (d.param.empty() ? "?" : d.param);
  }
  return text + "]";
}

Status applyShapeArguments(const std::vector<std::string>& shapeArgs, SessionOptions& options) {
  const auto shapes = app::applyShapeEntries(shapeArgs, options);
  return shapes.isOk() ? Status::ok() : shapes.status().withContext("--shape");
}

}  // namespace kiln::cli
