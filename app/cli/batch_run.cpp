#include "batch_run.h"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "batch_farm.h"
#include "child_process.h"

namespace kiln::cli {

using app::BatchJob;
using nlohmann::json;
namespace fs = std::filesystem;

namespace {

constexpr size_t kStderrTailBytes = 2048;
constexpr JobStatus kAllStatuses[] = {JobStatus::Ok, JobStatus::Failed, JobStatus::Crashed,
                                      JobStatus::TimedOut, JobStatus::Skipped};

// The last `bytes` of `text`, starting at a line when one starts in the tail, never inside a UTF-8 character.
std::string tail(const std::string& text, size_t bytes) {
  if (text.size() <= bytes) return text;
  size_t start = text.size() - bytes;
  const size_t newline = text.find('\n', start);
  if (newline != std::string::npos && newline + 1 < text.size()) {
    start = newline + 1;
  } else {
    while (start < text.size() && (static_cast<unsigned char>(text[start]) & 0xC0) == 0x80) ++start;
  }
  return text.substr(start);
}

// The line that best says why a job failed: its last, skipping CLI11's "Run with --help ..." after a usage
// error.
std::string lastLine(const std::string& text) {
  size_t end = text.size();
  while (true) {
    const size_t last = text.find_last_not_of("\r\n", end == 0 ? std::string::npos : end - 1);
    if (last == std::string::npos || end == 0) return "";
    const size_t newline = text.rfind('\n', last);
    const size_t start = newline == std::string::npos ? 0 : newline + 1;
    std::string line = text.substr(start, last + 1 - start);
    if (line != "Run with --help for more information." || start == 0) return line;
    end = start;
  }
}

// "ok", "failed (exit 1)", "crashed (signal 11, Segmentation fault)", "timed_out (after 30 s)".
std::string describe(const JobOutcome& outcome) {
  std::string text = statusName(outcome.status);
  switch (outcome.status) {
    case JobStatus::Failed:
      text += outcome.error.empty() ? " (exit " + std::to_string(outcome.exitCode) + ")"
                                    : " (" + outcome.error + ")";
      break;
    case JobStatus::Crashed:
      text += " (signal " + std::to_string(outcome.signal) + ", " + strsignal(outcome.signal) + ")";
      break;
    case JobStatus::TimedOut: {
      char seconds[32];
      std::snprintf(seconds, sizeof seconds, "%g", outcome.timeoutSeconds);
      text += std::string(" (after ") + seconds + " s)";
      break;
    }
    case JobStatus::Skipped:
      if (!outcome.skippedBecause.empty()) text += " (" + outcome.skippedBecause + ")";
      break;
    default:
      break;
  }
  return text;
}

json summaryJson(const std::vector<JobOutcome>& outcomes) {
  json summary = {{"total", outcomes.size()}};
  for (JobStatus s : kAllStatuses) {
    const auto count =
        std::count_if(outcomes.begin(), outcomes.end(), [s](const JobOutcome& o) { return o.status == s; });
    summary[s == JobStatus::Ok ? "succeeded" : statusName(s)] = count;
  }
  return summary;
}

void printTable(const std::vector<BatchJob>& jobs, const std::vector<JobOutcome>& outcomes,
                const json& summary) {
  size_t nameWidth = 4, commandWidth = 7;
  for (const auto& job : jobs) {
    nameWidth = std::max(nameWidth, job.name.size());
    commandWidth = std::max(commandWidth, job.command.size());
  }
  const int nw = static_cast<int>(nameWidth), cw = static_cast<int>(commandWidth);
  std::printf("%-*s  %-*s  %-9s  %-10s  %s\n", nw, "NAME", cw, "COMMAND", "STATUS", "EXIT", "TIME");
  for (size_t i = 0; i < jobs.size(); ++i) {
    const JobOutcome& o = outcomes[i];
    std::string end = "-";
    if (o.started && o.error.empty())
      end = o.signal != 0 ? "signal " + std::to_string(o.signal) : std::to_string(o.exitCode);
    const std::string time = o.started ? std::to_string(static_cast<long long>(o.wallMs)) + " ms" : "-";
    std::printf("%-*s  %-*s  %-9s  %-10s  %s\n", nw, jobs[i].name.c_str(), cw, jobs[i].command.c_str(),
                statusName(o.status), end.c_str(), time.c_str());
    // Why a job failed, in one line: its error, else the last line it wrote on stderr.
    const std::string why = !o.error.empty() ? o.error : lastLine(o.stderrTail);
    if (o.status != JobStatus::Ok && o.status != JobStatus::Skipped && !why.empty())
      std::printf("    %s\n", why.c_str());
  }
  std::printf("%d jobs: %d ok, %d failed, %d crashed, %d timed out, %d skipped\n",
              summary["total"].get<int>(), summary["succeeded"].get<int>(), summary["failed"].get<int>(),
              summary["crashed"].get<int>(), summary["timed_out"].get<int>(), summary["skipped"].get<int>());
}

}  // namespace

const char* statusName(JobStatus status) {
  switch (status) {
    case JobStatus::Ok:
      return "ok";
    case JobStatus::Failed:
      return "failed";
    case JobStatus::Crashed:
      return "crashed";
    case JobStatus::TimedOut:
      return "timed_out";
    case JobStatus::Skipped:
      return "skipped";
  }
  return "?";
}

std::vector<std::string> childArgv(const std::string& kiln, const BatchJob& job) {
  std::vector<std::string> argv = {kiln, job.command};
  argv.insert(argv.end(), job.args.begin(), job.args.end());
  if (std::find(job.args.begin(), job.args.end(), "--json") == job.args.end()) argv.push_back("--json");
  return argv;
}

JobOutcome runJob(const BatchJob& job, const std::string& kiln, double defaultTimeout,
                  const std::string& folder) {
  JobOutcome outcome;
  outcome.started = true;
  outcome.argv = childArgv(kiln, job);
  outcome.timeoutSeconds = job.timeoutSeconds > 0 ? job.timeoutSeconds : defaultTimeout;
  app::ChildSpec spec;
  spec.argv = outcome.argv;
  spec.environment = job.environment;
  spec.timeoutSeconds = outcome.timeoutSeconds;
  spec.workingDirectory = folder;
  auto child = app::runChild(spec);
  if (!child.isOk()) {
    outcome.status = JobStatus::Failed;
    outcome.error = child.status().toString();
    return outcome;
  }
  outcome.wallMs = child->wallMs;
  outcome.exitCode = child->exitCode;
  outcome.signal = child->signal;
  outcome.status = child->timedOut        ? JobStatus::TimedOut
                   : child->signal != 0   ? JobStatus::Crashed
                   : child->exitCode != 0 ? JobStatus::Failed
                                          : JobStatus::Ok;
  outcome.result = json::parse(child->out, nullptr, /*allow_exceptions=*/false);
  if (outcome.result.is_discarded()) {
    outcome.result = nullptr;
    outcome.stdoutTail = tail(child->out, kStderrTailBytes);
  }
  outcome.stderrTail = tail(child->err, kStderrTailBytes);
  return outcome;
}

JobOutcome skippedAfter(const BatchJob& job, const std::string& dependencyName, const JobOutcome& dependency,
                        const std::string& kiln) {
  JobOutcome outcome;
  outcome.argv = childArgv(kiln, job);
  outcome.skippedBecause = "after \"" + dependencyName + "\": " + statusName(dependency.status);
  return outcome;
}

json jobJson(const BatchJob& job, const JobOutcome& outcome) {
  json node = {{"name", job.name},
               {"command", job.command},
               {"argv", outcome.argv},
               {"status", statusName(outcome.status)}};
  if (outcome.started && outcome.error.empty()) {
    if (outcome.signal != 0) {
      node["signal"] = outcome.signal;
      node["signal_name"] = strsignal(outcome.signal);
    } else {
      node["exit_code"] = outcome.exitCode;
    }
  }
  if (!outcome.error.empty()) node["error"] = outcome.error;
  if (!outcome.skippedBecause.empty()) node["skipped_because"] = outcome.skippedBecause;
  if (outcome.timeoutSeconds > 0) node["timeout_s"] = outcome.timeoutSeconds;
  node["wall_ms"] = outcome.wallMs;
  node["result"] = outcome.result;
  if (!outcome.stdoutTail.empty()) node["stdout_tail"] = outcome.stdoutTail;
  node["stderr_tail"] = outcome.stderrTail;
  return node;
}

bool outcomeFromJson(const json& node, JobOutcome& outcome) {
  if (!node.is_object() || !node.contains("status") || !node["status"].is_string()) return false;
  const std::string status = node["status"].get<std::string>();
  bool known = false;
  for (JobStatus s : kAllStatuses) {
    if (status == statusName(s)) outcome.status = s, known = true;
  }
  if (!known) return false;
  const auto text = [&node](const char* key) {
    return node.contains(key) && node[key].is_string() ? node[key].get<std::string>() : std::string();
  };
  outcome.argv = node.contains("argv") && node["argv"].is_array()
                     ? node["argv"].get<std::vector<std::string>>()
                     : std::vector<std::string>();
  outcome.error = text("error");
  outcome.skippedBecause = text("skipped_because");
  outcome.started = node.contains("exit_code") || node.contains("signal") || !outcome.error.empty();
  outcome.exitCode = node.value("exit_code", -1);
  outcome.signal = node.value("signal", 0);
  outcome.wallMs = node.value("wall_ms", 0.0);
  outcome.timeoutSeconds = node.value("timeout_s", 0.0);
  outcome.result = node.contains("result") ? node["result"] : json();
  outcome.stdoutTail = text("stdout_tail");
  outcome.stderrTail = text("stderr_tail");
  return true;
}

void announceJob(size_t finished, const std::vector<BatchJob>& jobs, size_t index, const JobOutcome& o,
                 const CommonFlags& flags) {
  if (flags.quiet) return;
  std::fprintf(stderr, "kiln: [%zu/%zu] %s %s %s", finished, jobs.size(), jobs[index].command.c_str(),
               jobs[index].name.c_str(), describe(o).c_str());
  if (o.started) std::fprintf(stderr, " %lld ms", static_cast<long long>(o.wallMs));
  std::fprintf(stderr, "\n");
  if (flags.verbose && o.status != JobStatus::Ok && !o.stderrTail.empty()) {
    std::fprintf(stderr, "%s%s", o.stderrTail.c_str(), o.stderrTail.back() == '\n' ? "" : "\n");
  }
}

Status writeFileAtomically(const std::string& path, const std::string& text) {
  const std::string temporary = path + ".tmp" + std::to_string(getpid());
  {
    std::ofstream out(temporary, std::ios::binary | std::ios::trunc);
    out << text;
    out.flush();
    if (!out) {
      std::error_code ignored;
      fs::remove(temporary, ignored);
      return Status(StatusCode::FAIL, "cannot write '" + path + "'");
    }
  }
  std::error_code error;
  fs::rename(temporary, path, error);
  if (error) {
    fs::remove(temporary, error);
    return Status(StatusCode::FAIL, "cannot write '" + path + "'");
  }
  return Status::ok();
}

int finishBatch(const std::string& jobsFile, const std::vector<BatchJob>& jobs,
                const std::vector<JobOutcome>& outcomes, const std::string& reportFile,
                const CommonFlags& flags) {
  const json summary = summaryJson(outcomes);
  json list = json::array();
  for (size_t i = 0; i < jobs.size(); ++i) list.push_back(jobJson(jobs[i], outcomes[i]));
  const json report = {{"jobs_file", jobsFile}, {"summary", summary}, {"jobs", list}};
  // A child may write anything on stderr: invalid UTF-8 becomes U+FFFD instead of an exception.
  const std::string reportText = report.dump(2, ' ', false, json::error_handler_t::replace) + "\n";
  if (!reportFile.empty()) {
    Status written = writeFileAtomically(reportFile, reportText);
    if (!written.isOk())
      return reportError(Status(StatusCode::FAIL, "cannot write the report '" + reportFile + "'"), flags);
  }
  if (flags.json) {
    std::fputs(reportText.c_str(), stdout);
  } else if (!flags.quiet) {
    printTable(jobs, outcomes, summary);
    printFarmTable(jobs, outcomes);
  }
  return summary["succeeded"].get<size_t>() == jobs.size() ? kExitOk : kExitFailure;
}

}  // namespace kiln::cli
