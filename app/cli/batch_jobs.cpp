#include "batch_jobs.h"

#include <nlohmann/json.hpp>

#include <algorithm>

namespace kiln::app {
namespace {

using nlohmann::json;

Status invalid(const std::string& where, const std::string& what) {
  return Status(StatusCode::INVALID_ARGUMENT, where + ": " + what);
}

std::string joined(const std::vector<std::string>& words) {
  std::string text;
  for (const auto& w : words) text += (text.empty() ? "" : ", ") + w;
  return text;
}

Result<BatchJob> parseJob(const json& node, size_t index) {
  const std::string where = "jobs[" + std::to_string(index) + "]";
  if (!node.is_object()) return invalid(where, std::string("must be an object, not ") + node.type_name());
  static const std::vector<std::string> kFields = {"name", "command", "args", "env", "timeout_s", "after"};
  for (const auto& item : node.items()) {
    if (std::find(kFields.begin(), kFields.end(), item.key()) == kFields.end()) {
      return invalid(where, "unknown field \"" + item.key() + "\" (fields: " + joined(kFields) + ")");
    }
  }
  BatchJob job;
  const auto command = node.find("command");
  if (command == node.end()) return invalid(where, "missing field \"command\"");
  if (!command->is_string()) return invalid(where + ".command", std::string("must be a string, not ") + command->type_name());
  job.command = command->get<std::string>();
  if (job.command == "batch") return invalid(where + ".command", "a batch cannot run another batch");
  const auto& known = batchCommands();
  if (std::find(known.begin(), known.end(), job.command) == known.end()) {
    return invalid(where + ".command", "unknown command \"" + job.command + "\" (one of " + joined(known) + ")");
  }
  job.name = job.command + "-" + std::to_string(index);
  if (const auto name = node.find("name"); name != node.end()) {
    if (!name->is_string() || name->get<std::string>().empty()) return invalid(where + ".name", "must be a non-empty string");
    job.name = name->get<std::string>();
  }
  if (const auto args = node.find("args"); args != node.end()) {
    if (!args->is_array()) return invalid(where + ".args", std::string("must be an array of strings, not ") + args->type_name());
    for (size_t i = 0; i < args->size(); ++i) {
      const json& arg = (*args)[i];
      if (!arg.is_string()) {
        return invalid(where + ".args[" + std::to_string(i) + "]", std::string("must be a string, not ") + arg.type_name());
      }
      job.args.push_back(arg.get<std::string>());
    }
  }
  if (const auto env = node.find("env"); env != node.end()) {
    if (!env->is_object()) return invalid(where + ".env", std::string("must be an object of strings, not ") + env->type_name());
    for (const auto& [key, value] : env->items()) {
      if (key.empty() || key.find('=') != std::string::npos) return invalid(where + ".env", "bad variable name \"" + key + "\"");
      if (!value.is_string()) {
        return invalid(where + ".env." + key, std::string("must be a string, not ") + value.type_name());
      }
      job.environment[key] = value.get<std::string>();
    }
  }
  if (const auto timeout = node.find("timeout_s"); timeout != node.end()) {
    // Bounded so that every later conversion (milliseconds, integers in messages) stays defined.
    constexpr double kMaxTimeoutSeconds = 30 * 24 * 3600.0;
    if (!timeout->is_number() || !(timeout->get<double>() > 0) || timeout->get<double>() > kMaxTimeoutSeconds) {
      return invalid(where + ".timeout_s", "must be a number of seconds above 0 and at most 2592000 (30 days)");
    }
    job.timeoutSeconds = timeout->get<double>();
  }
  return job;
}

}  // namespace

const std::vector<std::string>& batchCommands() {
  static const std::vector<std::string> kCommands = {"compile", "check",     "bench",     "merge",
                                                     "run",     "inspect",   "partition", "conformance"};
  return kCommands;
}

Result<std::vector<BatchJob>> parseBatchJobs(const std::string& text) {
  json document;
  try {
    document = json::parse(text);
  } catch (const json::exception& e) {
    return Status(StatusCode::INVALID_ARGUMENT, std::string("not valid JSON: ") + e.what());
  }
  const json* list = &document;
  if (document.is_object()) {
    for (const auto& item : document.items()) {
      if (item.key() != "jobs") return invalid("top level", "unknown field \"" + item.key() + "\" (only \"jobs\")");
    }
    const auto jobs = document.find("jobs");
    if (jobs == document.end()) return invalid("top level", "missing field \"jobs\"");
    list = &*jobs;
  }
  if (!list->is_array()) {
    return invalid("top level", std::string("must be an array of jobs or {\"jobs\": [...]}, not ") + list->type_name());
  }
  std::vector<BatchJob> jobs;
  std::map<std::string, size_t> explicitNames;
  for (size_t i = 0; i < list->size(); ++i) {
    auto job = parseJob((*list)[i], i);
    if (!job.isOk()) return job.status();
    if (const auto after = (*list)[i].find("after"); after != (*list)[i].end()) {
      const std::string where = "jobs[" + std::to_string(i) + "].after";
      if (!after->is_string()) return invalid(where, std::string("must be the name of an earlier job, not ") + after->type_name());
      const auto earlier = explicitNames.find(after->get<std::string>());
      if (earlier == explicitNames.end()) {
        return invalid(where, "no earlier job is named \"" + after->get<std::string>() + "\" (a job waits only for one above it)");
      }
      job->after = static_cast<int>(earlier->second);
    }
    if ((*list)[i].contains("name")) {
      const auto [it, added] = explicitNames.emplace(job->name, i);
      if (!added) {
        return invalid("jobs[" + std::to_string(i) + "].name",
                       "\"" + job->name + "\" is already the name of jobs[" + std::to_string(it->second) + "]");
      }
    }
    jobs.push_back(std::move(job).value());
  }
  return jobs;
}

}  // namespace kiln::app
