#include "batch_slurm.h"

#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <set>
#include <thread>

#include "batch_run.h"
#include "child_process.h"
#include "util_read_file.h"

namespace kiln::cli {

using app::BatchJob;
using nlohmann::json;
namespace fs = std::filesystem;

namespace {

constexpr int kExitInterrupted = 130;
constexpr double kSlurmCommandTimeoutSeconds = 60;
// How long to wait for a finished task's status file to show up (a shared filesystem may lag behind squeue).
constexpr double kStatusFileGraceSeconds = 10;
// How long squeue may keep failing (controller restarting, network) before the wait gives up.
constexpr double kControllerPatienceSeconds = 120;

volatile std::sig_atomic_t interrupted = 0;
void onInterrupt(int) { interrupted = 1; }

// SIGINT and SIGTERM set `interrupted` (no SA_RESTART: a sleep ends early) instead of ending kiln, so the
// wait loop can cancel the arrays first.
void catchInterrupts() {
  struct sigaction action = {};
  action.sa_handler = onInterrupt;
  sigemptyset(&action.sa_mask);
  sigaction(SIGINT, &action, nullptr);
  sigaction(SIGTERM, &action, nullptr);
}

struct SlurmPrograms {
  std::string sbatch, squeue, scancel;
};

// The Slurm client programs, or FAIL naming the first one missing.
Result<SlurmPrograms> findSlurm() {
  SlurmPrograms programs;
  for (auto [name, path] : {std::pair{"sbatch", &programs.sbatch},
                            {"squeue", &programs.squeue},
                            {"scancel", &programs.scancel}}) {
    *path = app::findOnPath(name);
    if (path->empty()) {
      return Status(StatusCode::FAIL,
                    std::string("--scheduler slurm: '") + name +
                        "' is not on PATH (install the Slurm client, Debian package slurm-client)");
    }
  }
  return programs;
}

std::string lastLineOf(const std::string& text) {
  const size_t end = text.find_last_not_of("\r\n ");
  if (end == std::string::npos) return "";
  const size_t start = text.rfind('\n', end);
  return text.substr(start == std::string::npos ? 0 : start + 1,
                     end + 1 - (start == std::string::npos ? 0 : start + 1));
}

// Runs a Slurm client; FAIL with its error (saying so when the controller cannot be reached) unless it exits
// 0.
Result<std::string> runSlurmCommand(const std::vector<std::string>& argv) {
  app::ChildSpec spec;
  spec.argv = argv;
  spec.timeoutSeconds = kSlurmCommandTimeoutSeconds;
  auto child = app::runChild(spec);
  if (!child.isOk()) return child.status();
  const std::string program = fs::path(argv[0]).filename().string();
  if (child->timedOut || app::slurmControllerUnreachable(child->err)) {
    return Status(StatusCode::FAIL, "cannot reach the Slurm controller (" + program + ": " +
                                        (child->timedOut ? "no answer in 60 s" : lastLineOf(child->err)) +
                                        "); is slurmctld running, and SLURM_CONF right?");
  }
  if (!child->exited() || child->exitCode != 0) {
    return Status(StatusCode::FAIL,
                  program + " failed (" + child->describeEnd() + "): " + lastLineOf(child->err));
  }
  return child->out;
}

std::string statusFile(const std::string& runDirectory, size_t job) {
  return runDirectory + "/status-" + std::to_string(job) + ".json";
}

std::string manifestPath(const std::string& folder, const std::string& arrayId) {
  return folder + "/.kiln-batch/slurm-" + arrayId + ".json";
}

struct SlurmArray {
  std::string id;
  std::vector<int> jobs;
};

void cancel(const SlurmPrograms& programs, const std::vector<SlurmArray>& arrays) {
  std::vector<std::string> argv = {programs.scancel};
  for (const auto& array : arrays) argv.push_back(array.id);
  if (argv.size() > 1) (void)runSlurmCommand(argv);
}

// Waits until none of the arrays' tasks is queued or running, announcing each job as its status file appears,
// then reports every job like a local batch.
int waitAndReport(const SlurmBatchRequest& request, const std::vector<BatchJob>& jobs,
                  const std::string& runDirectory, const std::vector<SlurmArray>& arrays,
                  const SlurmPrograms& programs) {
  catchInterrupts();
  std::vector<JobOutcome> outcomes(jobs.size());
  std::vector<bool> have(jobs.size(), false);
  size_t finished = 0;
  const auto pickUp = [&] {
    for (size_t i = 0; i < jobs.size(); ++i) {
      if (have[i]) continue;
      auto text = readTextFile(statusFile(runDirectory, i));
      if (!text.isOk()) continue;
      const json node = json::parse(*text, nullptr, false);
      if (!outcomeFromJson(node, outcomes[i])) continue;
      have[i] = true;
      announceJob(++finished, jobs, i, outcomes[i], request.flags);
    }
  };
  std::vector<std::string> squeue = {programs.squeue, "-h", "-r", "-o", "%i %T", "-j", ""};
  for (const auto& array : arrays) squeue.back() += (squeue.back().empty() ? "" : ",") + array.id;
  std::string lastProgress;
  std::optional<std::chrono::steady_clock::time_point> failingSince;  // squeue's first failure in a row
  while (true) {
    if (interrupted) {
      cancel(programs, arrays);
      std::fprintf(stderr, "kiln: interrupted: cancelled Slurm job %s\n", squeue.back().c_str());
      return kExitInterrupted;
    }
    auto listed = runSlurmCommand(squeue);
    size_t pending = 0, running = 0;
    if (listed.isOk()) {
      for (const auto& task : app::parseSqueueTasks(*listed)) (task.state == "PENDING" ? pending : running)++;
      failingSince.reset();
    } else if (listed.status().message().find("Invalid job id") == std::string::npos) {
      // Else every array has left the queue. A controller that restarts or is briefly unreachable is waited
      // for.
      if (interrupted) continue;
      const auto now = std::chrono::steady_clock::now();
      if (!failingSince) failingSince = now;
      if (now - *failingSince > std::chrono::duration<double>(kControllerPatienceSeconds)) {
        std::fprintf(stderr,
                     "kiln: the arrays are still queued; gather them later with kiln batch --collect %s %s\n",
                     arrays.front().id.c_str(), request.jobsFile.c_str());
        return reportError(listed.status(), request.flags);
      }
      std::this_thread::sleep_for(std::chrono::seconds(1));
      continue;
    }
    pickUp();
    if (pending + running == 0) break;
    const std::string progress = "kiln: slurm: " + std::to_string(pending) + " pending, " +
                                 std::to_string(running) + " running, " + std::to_string(finished) + "/" +
                                 std::to_string(jobs.size()) + " done";
    if (progress != lastProgress && !request.flags.quiet) std::fprintf(stderr, "%s\n", progress.c_str());
    lastProgress = progress;
    std::this_thread::sleep_for(std::chrono::seconds(1));  // ends early on Ctrl+C
  }
  // The queue is empty: status files still missing belong to jobs that never ran (a failed dependency, a
  // cancel) or whose file a shared filesystem has not shown yet.
  const auto expected = [&](size_t i) {
    return jobs[i].after < 0 || outcomes[jobs[i].after].status == JobStatus::Ok;
  };
  for (auto deadline =
           std::chrono::steady_clock::now() + std::chrono::duration<double>(kStatusFileGraceSeconds);
       ;) {
    pickUp();
    bool waiting = false;
    for (size_t i = 0; i < jobs.size(); ++i) waiting = waiting || (!have[i] && expected(i));
    if (!waiting || std::chrono::steady_clock::now() > deadline || interrupted) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
  for (size_t i = 0; i < jobs.size(); ++i) {
    if (have[i]) continue;
    if (jobs[i].after >= 0 && outcomes[jobs[i].after].status != JobStatus::Ok) {
      outcomes[i] = skippedAfter(jobs[i], jobs[jobs[i].after].name, outcomes[jobs[i].after], request.kiln);
    } else {
      outcomes[i] = JobOutcome{};
      outcomes[i].status = JobStatus::Failed;
      outcomes[i].started = true;
      outcomes[i].argv = childArgv(request.kiln, jobs[i]);
      outcomes[i].error = "its Slurm task left no status file (cancelled, or lost with its node; see " +
                          runDirectory + "/slurm-*_" + std::to_string(i) + ".out)";
    }
    announceJob(++finished, jobs, i, outcomes[i], request.flags);
  }
  return finishBatch(request.jobsFile, jobs, outcomes, request.reportFile, request.flags);
}

// A run folder of its own for each submission: .kiln-batch/run-<UTC time>-<pid> under the jobs file's folder.
Result<std::string> makeRunDirectory(const std::string& folder) {
  char stamp[32];
  const std::time_t now = std::time(nullptr);
  std::tm utc{};
  gmtime_r(&now, &utc);
  std::strftime(stamp, sizeof stamp, "%Y%m%d-%H%M%S", &utc);
  const std::string path = folder + "/.kiln-batch/run-" + stamp + "-" + std::to_string(getpid());
  std::error_code error;
  fs::create_directories(path, error);
  if (error)
    return Status(StatusCode::FAIL, "cannot create the run folder '" + path + "': " + error.message());
  return path;
}

json manifestJson(const SlurmBatchRequest& request, const std::string& runDirectory,
                  const std::vector<SlurmArray>& arrays) {
  json list = json::array();
  for (const auto& array : arrays) list.push_back({{"id", array.id}, {"jobs", array.jobs}});
  return {
      {"jobs_file", request.jobsFile}, {"kiln", request.kiln}, {"run_dir", runDirectory}, {"arrays", list}};
}

}  // namespace

int runSlurmBatch(const SlurmBatchRequest& request) {
  auto programs = findSlurm();
  if (!programs.isOk()) return reportError(programs.status(), request.flags);
  auto runDirectory = makeRunDirectory(request.folder);
  if (!runDirectory.isOk()) return reportError(runDirectory.status(), request.flags);
  const std::string jobsCopy = *runDirectory + "/jobs.json";
  const std::string script = *runDirectory + "/task.sh";
  Status written = writeFileAtomically(jobsCopy, request.jobsText);
  if (written.isOk()) {
    written = writeFileAtomically(script, app::slurmTaskScript(app::selfExecutable(), jobsCopy, *runDirectory,
                                                               request.kiln, request.defaultTimeout));
  }
  if (!written.isOk()) return reportError(written, request.flags);
  chmod(script.c_str(), 0755);

  catchInterrupts();  // from the first sbatch on, Ctrl+C cancels what was submitted
  std::vector<SlurmArray> arrays;
  std::map<int, std::string> arrayOfJob;
  for (const auto& submission : app::planSlurmSubmissions(request.jobs, request.defaultTimeout)) {
    if (interrupted) {
      cancel(*programs, arrays);
      std::fprintf(stderr, "kiln: interrupted while submitting: cancelled what was submitted\n");
      return kExitInterrupted;
    }
    const std::string dependency = submission.dependency < 0 ? ""
                                                             : arrayOfJob.at(submission.dependency) + "_" +
                                                                   std::to_string(submission.dependency);
    auto out = runSlurmCommand(app::sbatchArgv(programs->sbatch, request.options, submission, dependency,
                                               request.folder, *runDirectory, script));
    Result<std::string> id = out.isOk() ? app::parseSbatchJobId(*out) : Result<std::string>(out.status());
    if (!id.isOk()) {
      cancel(*programs, arrays);  // no half-submitted batch left behind
      return reportError(Status(StatusCode::FAIL, id.status().message()), request.flags);
    }
    arrays.push_back({*id, submission.jobs});
    for (int job : submission.jobs) arrayOfJob[job] = *id;
  }
  if (arrays.empty())
    return finishBatch(request.jobsFile, request.jobs, {}, request.reportFile, request.flags);
  const json manifest = manifestJson(request, *runDirectory, arrays);
  written = writeFileAtomically(manifestPath(request.folder, arrays.front().id), manifest.dump(2) + "\n");
  if (!written.isOk()) {
    cancel(*programs, arrays);
    return reportError(written, request.flags);
  }
  if (!request.flags.quiet) {
    std::fprintf(stderr, "kiln: submitted %zu jobs to Slurm as job array%s", request.jobs.size(),
                 arrays.size() > 1 ? "s" : "");
    for (const auto& array : arrays) std::fprintf(stderr, " %s", array.id.c_str());
    std::fprintf(stderr, " (run folder %s)\n", runDirectory->c_str());
  }
  if (request.noWait) {
    if (request.flags.json) {
      printJson(
          {{"array_id", arrays.front().id}, {"run_dir", *runDirectory}, {"arrays", manifest["arrays"]}});
    } else {
      std::printf("%s\n", arrays.front().id.c_str());
      if (!request.flags.quiet) {
        std::fprintf(stderr, "kiln: collect with: kiln batch --collect %s %s\n", arrays.front().id.c_str(),
                     request.jobsFile.c_str());
      }
    }
    return kExitOk;
  }
  return waitAndReport(request, request.jobs, *runDirectory, arrays, *programs);
}

int collectSlurmBatch(const SlurmBatchRequest& request, const std::string& arrayId) {
  const auto usage = [&request](const std::string& message) {
    return reportError(Status(StatusCode::INVALID_ARGUMENT, message), request.flags);
  };
  auto text = readTextFile(manifestPath(request.folder, arrayId));
  if (!text.isOk())
    return usage("--collect: no Slurm batch " + arrayId + " was submitted from " + request.folder);
  const json manifest = json::parse(*text, nullptr, false);
  if (!manifest.is_object() || !manifest.contains("run_dir") || !manifest.contains("arrays")) {
    return usage("--collect: malformed " + manifestPath(request.folder, arrayId));
  }
  SlurmBatchRequest collected = request;
  std::vector<SlurmArray> arrays;
  try {
    collected.kiln = manifest.at("kiln").get<std::string>();
    for (const auto& array : manifest.at("arrays")) arrays.push_back({array.at("id"), array.at("jobs")});
  } catch (const json::exception&) {
    return usage("--collect: malformed " + manifestPath(request.folder, arrayId));
  }
  const std::string runDirectory = manifest["run_dir"].get<std::string>();
  auto copy = readTextFile(runDirectory + "/jobs.json");
  if (!copy.isOk()) return usage("--collect: the run folder '" + runDirectory + "' has no jobs.json");
  auto jobs = app::parseBatchJobs(*copy);
  if (!jobs.isOk()) return usage(runDirectory + "/jobs.json: " + jobs.status().message());
  auto programs = findSlurm();
  if (!programs.isOk()) return reportError(programs.status(), request.flags);
  return waitAndReport(collected, *jobs, runDirectory, arrays, *programs);
}

void registerBatchTask(CLI::App& app, Commands& commands) {
  struct TaskArgs {
    std::string jobsFile, runDirectory, kiln;
    size_t index = 0;
    double timeoutSeconds = 0;
  };
  auto args = std::make_shared<TaskArgs>();
  CLI::App* cmd =
      app.add_subcommand("batch-task", "One Slurm array task of kiln batch --scheduler slurm (internal)");
  cmd->group("");  // hidden from kiln --help
  cmd->add_option("jobs", args->jobsFile, "Jobs file")->required();
  cmd->add_option("--index", args->index, "The job's index in the file")->required();
  cmd->add_option("--run-dir", args->runDirectory, "Where the status file goes")->required();
  cmd->add_option("--kiln", args->kiln, "The kiln the job runs")->required();
  cmd->add_option("--timeout", args->timeoutSeconds, "Seconds for jobs without timeout_s (0: none)");
  cmd->callback([args, &commands] {
    commands.run = [args]() -> int {
      const CommonFlags flags;
      auto text = readTextFile(args->jobsFile);
      if (!text.isOk())
        return reportError(Status(StatusCode::INVALID_ARGUMENT, "cannot open '" + args->jobsFile + "'"),
                           flags);
      auto jobs = app::parseBatchJobs(*text);
      if (!jobs.isOk()) return reportError(jobs.status(), flags);
      if (args->index >= jobs->size()) {
        return reportError(Status(StatusCode::INVALID_ARGUMENT, "--index " + std::to_string(args->index) +
                                                                    ": the file has " +
                                                                    std::to_string(jobs->size()) + " jobs"),
                           flags);
      }
      const BatchJob& job = (*jobs)[args->index];
      std::error_code error;
      const JobOutcome outcome =
          runJob(job, args->kiln, args->timeoutSeconds, fs::current_path(error).string());
      const std::string statusText =
          jobJson(job, outcome).dump(2, ' ', false, json::error_handler_t::replace) + "\n";
      Status written = writeFileAtomically(statusFile(args->runDirectory, args->index), statusText);
      if (!written.isOk()) return reportError(written, flags);
      return outcome.status == JobStatus::Ok ? kExitOk : kExitFailure;
    };
  });
}

}  // namespace kiln::cli
