// kiln batch JOBS.json: runs a list of kiln command lines (compile, check, bench, merge, run, ...) as independent
// processes, so a crash in one cannot take the rest down, and reports every job's result in one JSON document.
// Each job is `kiln <command> <args...> --json` re-executed in the jobs file's folder: the same line a cluster
// scheduler would run (README, "Batch mode").
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <thread>

#include "batch_jobs.h"
#include "child_process.h"
#include "cli_output.h"
#include "commands.h"
#include "util_read_file.h"

namespace kiln::cli {

using app::BatchJob;
using app::ChildSpec;
using app::parseBatchJobs;
using app::runChild;
using app::selfExecutable;
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

constexpr size_t kStderrTailBytes = 2048;

struct BatchArgs {
  std::string jobsFile;
  int parallel = 1;
  bool failFast = false;
  std::string reportFile;
  std::string kiln;
  double timeoutSeconds = 0;
  CommonFlags flags;
};

enum class JobStatus { Ok, Failed, Crashed, TimedOut, Skipped };

const char* statusName(JobStatus status) {
  switch (status) {
    case JobStatus::Ok: return "ok";
    case JobStatus::Failed: return "failed";
    case JobStatus::Crashed: return "crashed";
    case JobStatus::TimedOut: return "timed_out";
    case JobStatus::Skipped: return "skipped";
  }
  return "?";
}

struct JobOutcome {
  JobStatus status = JobStatus::Skipped;
  std::vector<std::string> argv;
  bool started = false;
  int exitCode = -1;  // when it exited
  int signal = 0;     // when a signal ended it
  double wallMs = 0;
  double timeoutSeconds = 0;
  json result;        // the child's stdout parsed, or null
  std::string stdoutTail;  // when stdout was not JSON
  std::string stderrTail;
  std::string error;  // why it could not start
};

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

// The line that best says why a job failed: its last, skipping CLI11's "Run with --help ..." after a usage error.
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

std::vector<std::string> childArgv(const std::string& kiln, const BatchJob& job) {
  std::vector<std::string> argv = {kiln, job.command};
  argv.insert(argv.end(), job.args.begin(), job.args.end());
  if (std::find(job.args.begin(), job.args.end(), "--json") == job.args.end()) argv.push_back("--json");
  return argv;
}

JobOutcome runJob(const BatchJob& job, const BatchArgs& args, const std::string& folder) {
  JobOutcome outcome;
  outcome.started = true;
  outcome.argv = childArgv(args.kiln, job);
  outcome.timeoutSeconds = job.timeoutSeconds > 0 ? job.timeoutSeconds : args.timeoutSeconds;
  ChildSpec spec;
  spec.argv = outcome.argv;
  spec.environment = job.environment;
  spec.timeoutSeconds = outcome.timeoutSeconds;
  spec.workingDirectory = folder;
  auto child = runChild(spec);
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

// "ok", "failed (exit 1)", "crashed (signal 11, Segmentation fault)", "timed_out (after 30 s)".
std::string describe(const JobOutcome& outcome) {
  std::string text = statusName(outcome.status);
  switch (outcome.status) {
    case JobStatus::Failed:
      text += outcome.error.empty() ? " (exit " + std::to_string(outcome.exitCode) + ")" : " (" + outcome.error + ")";
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
    default: break;
  }
  return text;
}

json jobJson(const BatchJob& job, const JobOutcome& outcome) {
  json node = {{"name", job.name}, {"command", job.command}, {"argv", outcome.argv}, {"status", statusName(outcome.status)}};
  if (outcome.started && outcome.error.empty()) {
    if (outcome.signal != 0) {
      node["signal"] = outcome.signal;
      node["signal_name"] = strsignal(outcome.signal);
    } else {
      node["exit_code"] = outcome.exitCode;
    }
  }
  if (!outcome.error.empty()) node["error"] = outcome.error;
  if (outcome.timeoutSeconds > 0) node["timeout_s"] = outcome.timeoutSeconds;
  node["wall_ms"] = outcome.wallMs;
  node["result"] = outcome.result;
  if (!outcome.stdoutTail.empty()) node["stdout_tail"] = outcome.stdoutTail;
  node["stderr_tail"] = outcome.stderrTail;
  return node;
}

json summaryJson(const std::vector<JobOutcome>& outcomes) {
  json summary = {{"total", outcomes.size()}};
  for (JobStatus s : {JobStatus::Ok, JobStatus::Failed, JobStatus::Crashed, JobStatus::TimedOut, JobStatus::Skipped}) {
    const auto count = std::count_if(outcomes.begin(), outcomes.end(), [s](const JobOutcome& o) { return o.status == s; });
    summary[s == JobStatus::Ok ? "succeeded" : statusName(s)] = count;
  }
  return summary;
}

void printTable(const std::vector<BatchJob>& jobs, const std::vector<JobOutcome>& outcomes, const json& summary) {
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
    if (o.started && o.error.empty()) end = o.signal != 0 ? "signal " + std::to_string(o.signal) : std::to_string(o.exitCode);
    const std::string time = o.started ? std::to_string(static_cast<long long>(o.wallMs)) + " ms" : "-";
    std::printf("%-*s  %-*s  %-9s  %-10s  %s\n", nw, jobs[i].name.c_str(), cw, jobs[i].command.c_str(),
                statusName(o.status), end.c_str(), time.c_str());
    // Why a job failed, in one line: its error, else the last line it wrote on stderr.
    const std::string why = !o.error.empty() ? o.error : lastLine(o.stderrTail);
    if (o.status != JobStatus::Ok && o.status != JobStatus::Skipped && !why.empty()) std::printf("    %s\n", why.c_str());
  }
  std::printf("%d jobs: %d ok, %d failed, %d crashed, %d timed out, %d skipped\n", summary["total"].get<int>(),
              summary["succeeded"].get<int>(), summary["failed"].get<int>(), summary["crashed"].get<int>(),
              summary["timed_out"].get<int>(), summary["skipped"].get<int>());
}

// Written to a temporary file beside the target and renamed, so a reader never sees half a report.
Status writeReport(const std::string& path, const std::string& text) {
  const std::string temporary = path + ".tmp" + std::to_string(getpid());
  {
    std::ofstream out(temporary, std::ios::binary | std::ios::trunc);
    out << text;
    out.flush();
    if (!out) {
      std::error_code ignored;
      fs::remove(temporary, ignored);
      return Status(StatusCode::FAIL, "cannot write the report '" + path + "'");
    }
  }
  std::error_code error;
  fs::rename(temporary, path, error);
  if (error) {
    fs::remove(temporary, error);
    return Status(StatusCode::FAIL, "cannot write the report '" + path + "'");
  }
  return Status::ok();
}

int runBatch(BatchArgs& args) {
  configureLogging(args.flags);
  const auto usage = [&args](const std::string& message) {
    return reportError(Status(StatusCode::INVALID_ARGUMENT, message), args.flags);
  };
  auto text = readTextFile(args.jobsFile);
  if (!text.isOk()) return usage("cannot open the jobs file '" + args.jobsFile + "'");
  auto parsed = parseBatchJobs(*text);
  if (!parsed.isOk()) return usage(args.jobsFile + ": " + parsed.status().message());
  const std::vector<BatchJob>& jobs = *parsed;
  std::error_code error;
  const std::string folder = fs::absolute(args.jobsFile, error).parent_path().string();
  if (args.kiln.empty()) {
    args.kiln = selfExecutable();
  } else {
    args.kiln = fs::absolute(args.kiln, error).string();
    if (access(args.kiln.c_str(), X_OK) != 0) return usage("--kiln '" + args.kiln + "' is not an executable file");
  }
  if (!args.reportFile.empty()) {
    const fs::path parent = fs::absolute(args.reportFile, error).parent_path();
    if (!fs::is_directory(parent, error)) return usage("--report: no folder '" + parent.string() + "'");
  }

  app::killChildrenOnInterrupt();  // the jobs run in process groups of their own: Ctrl+C must still end them
  std::vector<JobOutcome> outcomes(jobs.size());
  for (size_t i = 0; i < jobs.size(); ++i) outcomes[i].argv = childArgv(args.kiln, jobs[i]);
  std::atomic<size_t> next{0};
  std::atomic<bool> stop{false};
  std::mutex mutex;  // guards `finished` and stderr
  size_t finished = 0;
  const auto announce = [&](size_t i) {
    std::lock_guard lock(mutex);
    ++finished;
    if (args.flags.quiet) return;
    const JobOutcome& o = outcomes[i];
    std::fprintf(stderr, "kiln: [%zu/%zu] %s %s %s", finished, jobs.size(), jobs[i].command.c_str(),
                 jobs[i].name.c_str(), describe(o).c_str());
    if (o.started) std::fprintf(stderr, " %lld ms", static_cast<long long>(o.wallMs));
    std::fprintf(stderr, "\n");
    if (args.flags.verbose && o.status != JobStatus::Ok && !o.stderrTail.empty()) {
      std::fprintf(stderr, "%s%s", o.stderrTail.c_str(), o.stderrTail.back() == '\n' ? "" : "\n");
    }
  };
  const auto worker = [&] {
    for (size_t i = next++; i < jobs.size(); i = next++) {
      if (!stop) outcomes[i] = runJob(jobs[i], args, folder);  // else stays "skipped"
      if (args.failFast && outcomes[i].status != JobStatus::Ok) stop = true;
      announce(i);
    }
  };
  const size_t threads = std::min<size_t>(static_cast<size_t>(args.parallel), jobs.size());
  std::vector<std::thread> pool;
  for (size_t t = 1; t < threads; ++t) pool.emplace_back(worker);
  worker();
  for (auto& thread : pool) thread.join();

  const json summary = summaryJson(outcomes);
  json list = json::array();
  for (size_t i = 0; i < jobs.size(); ++i) list.push_back(jobJson(jobs[i], outcomes[i]));
  const json report = {{"jobs_file", args.jobsFile}, {"summary", summary}, {"jobs", list}};
  // A child may write anything on stderr: invalid UTF-8 becomes U+FFFD instead of an exception.
  const std::string reportText = report.dump(2, ' ', false, json::error_handler_t::replace) + "\n";
  if (!args.reportFile.empty()) {
    Status written = writeReport(args.reportFile, reportText);
    if (!written.isOk()) return reportError(written, args.flags);
  }
  if (args.flags.json) {
    std::fputs(reportText.c_str(), stdout);
  } else if (!args.flags.quiet) {
    printTable(jobs, outcomes, summary);
  }
  return summary["succeeded"].get<size_t>() == jobs.size() ? kExitOk : kExitFailure;
}

}  // namespace

void registerBatch(CLI::App& app, Commands& commands) {
  auto args = std::make_shared<BatchArgs>();
  CLI::App* cmd = app.add_subcommand("batch", "Run a file of kiln jobs (compile, check, bench, ...) as separate "
                                              "processes and report every result in one document");
  cmd->add_option("jobs", args->jobsFile,
                  "Jobs file: [{\"name\", \"command\", \"args\": [...], \"env\": {...}, \"timeout_s\"}, ...] or "
                  "{\"jobs\": [...]}; relative paths in args resolve against its folder")
      ->required();
  cmd->add_option("-j,--jobs", args->parallel, "Jobs to run at once (default 1)")->check(CLI::Range(1, 256));
  cmd->add_flag("--fail-fast", args->failFast, "After a job fails, start no more (they are reported as skipped)");
  cmd->add_option("--report", args->reportFile, "Also write the JSON report to this file");
  cmd->add_option("--kiln", args->kiln, "The kiln executable each job runs (default: this one)");
  cmd->add_option("--timeout", args->timeoutSeconds, "Seconds before a job is killed (0: none; a job's timeout_s wins)")
      ->check(CLI::NonNegativeNumber);
  addCommonFlags(*cmd, args->flags);
  cmd->footer("\nEach job runs `kiln <command> <args...> --json` in the jobs file's folder. Exit: 0 all jobs ok, 1 any "
              "failed, crashed or timed out, 2 usage (a malformed jobs file).\n"
              "Examples:\n  kiln batch jobs.json\n  kiln batch jobs.json --jobs 2 --report report.json\n"
              "  kiln batch jobs.json --fail-fast --timeout 600 --json > report.json\n\n"
              "jobs.json:\n"
              "  [{\"name\": \"det\", \"command\": \"compile\", \"args\": [\"det.onnx\", \"-o\", \"out/det_ctx.onnx\"]},\n"
              "   {\"name\": \"det-check\", \"command\": \"check\", \"args\": [\"out/det_vulkan.bin\"]}]");
  cmd->callback([args, &commands] { commands.run = [args] { return runBatch(*args); }; });
}

}  // namespace kiln::cli
