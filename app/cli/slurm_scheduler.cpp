#include "slurm_scheduler.h"

#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <sstream>

namespace kiln::app {
namespace {

// Start-up, a slow shared filesystem and writing the status file, on top of the job's own timeout.
constexpr double kTimeLimitMarginSeconds = 60;

std::string formatSeconds(double seconds) {
  char text[32];
  std::snprintf(text, sizeof text, "%g", seconds);
  return text;
}

}  // namespace

std::vector<SlurmSubmission> planSlurmSubmissions(const std::vector<BatchJob>& jobs, double defaultTimeout) {
  std::vector<SlurmSubmission> plan(1);
  std::map<int, size_t> byDependency;  // job index waited for -> its submission
  for (size_t i = 0; i < jobs.size(); ++i) {
    size_t target = 0;
    if (jobs[i].after >= 0) {
      const auto [it, added] = byDependency.emplace(jobs[i].after, plan.size());
      if (added) {
        plan.emplace_back();
        plan.back().dependency = jobs[i].after;
      }
      target = it->second;
    }
    SlurmSubmission& submission = plan[target];
    submission.jobs.push_back(static_cast<int>(i));
    const double timeout = jobs[i].timeoutSeconds > 0 ? jobs[i].timeoutSeconds : defaultTimeout;
    // One job without any limit makes the whole array unlimited.
    if (submission.jobs.size() == 1 || submission.timeoutSeconds > 0) {
      submission.timeoutSeconds = timeout > 0 ? std::max(submission.timeoutSeconds, timeout) : 0;
    }
  }
  if (plan.front().jobs.empty()) plan.erase(plan.begin());
  return plan;
}

int slurmTimeLimitMinutes(double timeoutSeconds) {
  if (timeoutSeconds <= 0) return 0;
  return static_cast<int>(std::ceil((timeoutSeconds + kTimeLimitMarginSeconds) / 60.0));
}

std::vector<std::string> sbatchArgv(const std::string& sbatch, const SlurmOptions& options,
                                    const SlurmSubmission& submission, const std::string& dependencyTask,
                                    const std::string& workingDirectory, const std::string& runDirectory,
                                    const std::string& script) {
  std::string indices;
  for (int job : submission.jobs) indices += (indices.empty() ? "" : ",") + std::to_string(job);
  std::vector<std::string> argv = {sbatch,
                                   "--parsable",
                                   "--job-name=kiln-batch",
                                   "--array=" + indices,
                                   "--chdir=" + workingDirectory,
                                   "--output=" + runDirectory + "/slurm-%A_%a.out"};
  if (const int minutes = slurmTimeLimitMinutes(submission.timeoutSeconds); minutes > 0) {
    argv.push_back("--time=" + std::to_string(minutes));
  }
  if (!options.partition.empty()) argv.push_back("--partition=" + options.partition);
  if (!options.account.empty()) argv.push_back("--account=" + options.account);
  if (!dependencyTask.empty()) {
    argv.push_back("--dependency=afterok:" + dependencyTask);
    argv.push_back(
        "--kill-on-invalid-dep=yes");  // a failed dependency cancels the task instead of leaving it pending
  }
  argv.insert(argv.end(), options.extraArgs.begin(), options.extraArgs.end());
  argv.push_back(script);
  return argv;
}

Result<std::string> parseSbatchJobId(const std::string& out) {
  std::string id = out.substr(0, out.find_first_of(";\r\n"));
  id.erase(0, id.find_first_not_of(" \t"));
  if (id.empty() || !std::all_of(id.begin(), id.end(), [](char c) { return c >= '0' && c <= '9'; })) {
    return Status(StatusCode::INVALID_ARGUMENT, "sbatch printed no job id: '" + out + "'");
  }
  return id;
}

std::vector<SlurmTaskState> parseSqueueTasks(const std::string& out) {
  std::vector<SlurmTaskState> tasks;
  std::istringstream lines(out);
  std::string line;
  while (std::getline(lines, line)) {
    std::istringstream words(line);
    std::string id, state;
    if (!(words >> id >> state)) continue;
    const size_t underscore = id.find('_');
    if (underscore == std::string::npos || underscore == 0) continue;
    const std::string task = id.substr(underscore + 1);
    if (task.empty() || task.size() > 9 ||
        !std::all_of(task.begin(), task.end(), [](char c) { return c >= '0' && c <= '9'; })) {
      continue;  // "12_[3-5]": a pending range squeue did not expand
    }
    tasks.push_back({id.substr(0, underscore), std::stoi(task), state});
  }
  return tasks;
}

std::string shellQuote(const std::string& text) {
  std::string quoted = "'";
  for (char c : text) quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return quoted + "'";
}

std::string slurmTaskScript(const std::string& kiln, const std::string& jobsCopy,
                            const std::string& runDirectory, const std::string& jobsKiln,
                            double defaultTimeout) {
  std::string script =
      "#!/bin/sh\n# One task of a kiln batch on Slurm: runs job $SLURM_ARRAY_TASK_ID of the jobs file.\n";
  script += "exec " + shellQuote(kiln) + " batch-task " + shellQuote(jobsCopy) +
            " --index \"$SLURM_ARRAY_TASK_ID\"" + " --run-dir " + shellQuote(runDirectory) + " --kiln " +
            shellQuote(jobsKiln);
  if (defaultTimeout > 0) script += " --timeout " + formatSeconds(defaultTimeout);
  return script + "\n";
}

bool slurmControllerUnreachable(const std::string& err) {
  for (const char* sign : {"Unable to contact slurm controller", "Connection refused",
                           "Unable to establish control machine", "Zero Bytes were transmitted or received",
                           "Socket timed out", "Could not establish a configuration source"}) {
    if (err.find(sign) != std::string::npos) return true;
  }
  return false;
}

}  // namespace kiln::app
