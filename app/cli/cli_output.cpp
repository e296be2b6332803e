#include "cli_output.h"

#include <algorithm>
#include <cstdio>
#include <iostream>

#include "kiln/log.h"
#include "kiln/model_info.h"

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
  std::fprintf(stderr, "kiln: error: %s\n", status.toString().c_str());
  if (flags.json) {
    printJson({{"error", {{"code", statusCodeName(status.code())}, {"message", status.message()}}}});
  }
  return status.code() == StatusCode::INVALID_ARGUMENT ? kExitUsage : kExitFailure;
}

Status applyConfigEntries(const std::vector<std::string>& entries, SessionOptions& options) {
  for (const auto& entry : entries) {
    const size_t eq = entry.find('=');
    if (eq == std::string::npos || eq == 0) {
      return Status(StatusCode::INVALID_ARGUMENT, "--config '" + entry + "' must look like KEY=VALUE");
    }
    KILN_RETURN_IF_ERROR(options.addConfigEntry(entry.substr(0, eq), entry.substr(eq + 1)));
  }
  return Status::ok();
}

// Strings from files (a jobs file, a model's names) may hold invalid UTF-8: replaced, never thrown on.
void printJson(const nlohmann::json& document) {
  std::cout << document.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << std::endl;
}

nlohmann::json timingsToJson(const SessionTimings& timings) {
  nlohmann::json out = nlohmann::json::object();
  forEachTiming(timings, [&](std::string_view key, double value) { out[std::string(key)] = value; });
  return out;
}

nlohmann::json countersToJson(const WorkCounters& counters) {
  nlohmann::json out = nlohmann::json::object();
  forEachCounter(counters, [&](std::string_view key, int64_t value) { out[std::string(key)] = value; });
  return out;
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

Result<std::pair<std::string, std::string>> splitAssignment(const std::string& text, const char* what) {
  const size_t eq = text.find('=');
  if (eq == std::string::npos || eq == 0) {
    return Status(StatusCode::INVALID_ARGUMENT, std::string(what) + " '" + text + "' must look like NAME=VALUE");
  }
  return std::make_pair(text.substr(0, eq), text.substr(eq + 1));
}

Result<Shape> parseShape(const std::string& text) {
  Shape shape;
  size_t pos = 0;
  while (pos <= text.size() && !text.empty()) {
    const size_t x = text.find('x', pos);
    const std::string part = text.substr(pos, x == std::string::npos ? std::string::npos : x - pos);
    if (part.empty() || part.find_first_not_of("0123456789") != std::string::npos) {
      return Status(StatusCode::INVALID_ARGUMENT, "shape '" + text + "' must look like 1x3x640x640");
    }
    shape.push_back(std::stoll(part));
    if (x == std::string::npos) break;
    pos = x + 1;
  }
  return shape;
}

Result<std::map<std::string, Shape>> applyShapeArguments(const std::string& model, const std::vector<std::string>& shapeArgs,
                                                         SessionOptions& options) {
  std::map<std::string, Shape> shapes;
  for (const auto& entry : shapeArgs) {
    KILN_ASSIGN_OR_RETURN(const auto kv, splitAssignment(entry, "--shape"));
    KILN_ASSIGN_OR_RETURN(shapes[kv.first], parseShape(kv.second));
  }
  KILN_RETURN_IF_ERROR(addShapeOverrides(model, {shapes.begin(), shapes.end()}, options));
  return shapes;
}

}  // namespace kiln::cli
