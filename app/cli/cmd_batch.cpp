// kiln batch JOBS.json: runs a list of kiln command lines (compile, check, bench, merge, run, ...) as
// independent processes, so a crash in one cannot take the rest down, and reports every job's result in one
// JSON document. Each job is `kiln <command> <args...> --json` re-executed in the jobs file's folder: the
// same line a cluster scheduler would run (README, "Batch mode"). Jobs run here (threads, below) or on Slurm
// (batch_slurm.cpp); both report through batch_run.h, so the report is the same. --matrix writes a compile
// farm's jobs file (batch_farm.h).
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstdio>
#include <filesystem>
#include <mutex>
#include <thread>

#include "batch_farm.h"
#include "batch_jobs.h"
#include "batch_run.h"
#include "batch_slurm.h"
#include "child_process.h"
#include "cli_output.h"
#include "commands.h"
#include "util_read_file.h"

namespace kiln::cli {

using app::BatchJob;
using app::parseBatchJobs;
using app::selfExecutable;
namespace {

namespace fs = std::filesystem;

struct BatchArgs {
  std::string jobsFile;
  int parallel = 1;
  bool failFast = false;
  std::string reportFile;
  std::string kiln;
  double timeoutSeconds = 0;
  std::string scheduler = "local";
  app::SlurmOptions slurm;
  bool noWait = false;
  std::string collectId;
  std::string matrixModels, matrixProfiles, matrixOutput;
  int benchRuns = 2;
  CommonFlags flags;
};

// kiln batch --matrix MODELS --profiles PROFILES [-o jobs.json]: writes a compile farm's jobs file.
int writeFarmJobs(const BatchArgs& args) {
  std::error_code error;
  const std::string folder = args.matrixOutput.empty()
                                 ? fs::current_path(error).string()
                                 : fs::absolute(args.matrixOutput, error).parent_path().string();
  auto jobs = farmJobs(args.matrixModels, args.matrixProfiles, folder, args.benchRuns);
  if (!jobs.isOk()) return reportError(jobs.status(), args.flags);
  const std::string text = jobs->dump(2) + "\n";
  if (args.matrixOutput.empty()) {
    std::fputs(text.c_str(), stdout);
    return kExitOk;
  }
  if (!fs::is_directory(folder, error))
    return reportError(Status(StatusCode::INVALID_ARGUMENT, "-o: no folder '" + folder + "'"), args.flags);
  Status written = writeFileAtomically(args.matrixOutput, text);
  if (!written.isOk()) return reportError(written, args.flags);
  if (!args.flags.quiet) {
    std::fprintf(stderr, "kiln: wrote %zu jobs to %s; run them with kiln batch %s [--scheduler slurm]\n",
                 (*jobs)["jobs"].size(), args.matrixOutput.c_str(), args.matrixOutput.c_str());
  }
  return kExitOk;
}

// The local scheduler: `parallel` threads take the jobs in file order; a job with "after" first waits for its
// dependency (always an earlier job, so already taken by some thread) and is skipped unless it succeeded.
std::vector<JobOutcome> runLocally(const std::vector<BatchJob>& jobs, const BatchArgs& args,
                                   const std::string& folder) {
  app::killChildrenOnInterrupt();  // the jobs run in process groups of their own: Ctrl+C must still end them
  std::vector<JobOutcome> outcomes(jobs.size());
  for (size_t i = 0; i < jobs.size(); ++i) outcomes[i].argv = childArgv(args.kiln, jobs[i]);
  std::vector<bool> done(jobs.size(), false);
  std::atomic<size_t> next{0};
  std::atomic<bool> stop{false};
  std::mutex mutex;  // guards `finished`, `done`, outcomes of finished jobs and stderr
  std::condition_variable jobDone;
  size_t finished = 0;
  const auto worker = [&] {
    for (size_t i = next++; i < jobs.size(); i = next++) {
      JobOutcome outcome = outcomes[i];  // "skipped" unless it runs
      const int after = jobs[i].after;
      if (after >= 0) {
        std::unique_lock lock(mutex);
        jobDone.wait(lock, [&] { return done[static_cast<size_t>(after)]; });
        if (outcomes[after].status != JobStatus::Ok)
          outcome = skippedAfter(jobs[i], jobs[after].name, outcomes[after], args.kiln);
      }
      if (!stop && outcome.skippedBecause.empty())
        outcome = runJob(jobs[i], args.kiln, args.timeoutSeconds, folder);
      if (args.failFast && outcome.status != JobStatus::Ok) stop = true;
      std::lock_guard lock(mutex);
      outcomes[i] = std::move(outcome);
      done[i] = true;
      announceJob(++finished, jobs, i, outcomes[i], args.flags);
      jobDone.notify_all();
    }
  };
  const size_t threads = std::min<size_t>(static_cast<size_t>(args.parallel), jobs.size());
  std::vector<std::thread> pool;
  for (size_t t = 1; t < threads; ++t) pool.emplace_back(worker);
  worker();
  for (auto& thread : pool) thread.join();
  return outcomes;
}

int runBatch(BatchArgs& args) {
  configureLogging(args.flags);
  const auto usage = [&args](const std::string& message) {
    return reportError(Status(StatusCode::INVALID_ARGUMENT, message), args.flags);
  };
  if (!args.matrixModels.empty() || !args.matrixProfiles.empty()) {
    if (args.matrixModels.empty() || args.matrixProfiles.empty())
      return usage("--matrix and --profiles go together");
    if (!args.jobsFile.empty())
      return usage("--matrix writes a jobs file (-o), it runs none: no jobs file argument");
    return writeFarmJobs(args);
  }
  if (!args.matrixOutput.empty()) return usage("-o goes with --matrix (the report is --report)");
  if (args.jobsFile.empty()) return usage("a jobs file is required (or --matrix MODELS --profiles PROFILES)");
  auto text = readTextFile(args.jobsFile);
  if (!text.isOk()) return usage("cannot open the jobs file '" + args.jobsFile + "'");
  auto parsed = parseBatchJobs(*text);
  if (!parsed.isOk()) return usage(args.jobsFile + ": " + parsed.status().message());
  const std::vector<BatchJob>& jobs = *parsed;
  if (!args.collectId.empty()) args.scheduler = "slurm";
  const bool slurm = args.scheduler == "slurm";
  if (!slurm && (args.noWait || !args.slurm.partition.empty() || !args.slurm.account.empty() ||
                 !args.slurm.extraArgs.empty())) {
    return usage("--no-wait, --partition, --account and --sbatch-arg need --scheduler slurm");
  }
  if (slurm && args.failFast) return usage("--fail-fast works only with the local scheduler");
  if (!args.collectId.empty() && args.noWait) return usage("--collect waits for the batch: no --no-wait");
  if (args.noWait && !args.reportFile.empty()) return usage("--no-wait writes no report: pass --report to --collect");
  std::error_code error;
  const std::string folder = fs::absolute(args.jobsFile, error).parent_path().string();
  if (args.kiln.empty()) {
    args.kiln = selfExecutable();
  } else {
    args.kiln = fs::absolute(args.kiln, error).string();
    if (access(args.kiln.c_str(), X_OK) != 0)
      return usage("--kiln '" + args.kiln + "' is not an executable file");
  }
  if (!args.reportFile.empty()) {
    const fs::path parent = fs::absolute(args.reportFile, error).parent_path();
    if (!fs::is_directory(parent, error)) return usage("--report: no folder '" + parent.string() + "'");
  }

  if (args.scheduler == "local") {
    return finishBatch(args.jobsFile, jobs, runLocally(jobs, args, folder), args.reportFile, args.flags);
  }
  SlurmBatchRequest request;
  request.jobsFile = args.jobsFile;
  request.jobsText = *text;
  request.jobs = jobs;
  request.folder = folder;
  request.kiln = args.kiln;
  request.defaultTimeout = args.timeoutSeconds;
  request.reportFile = args.reportFile;
  request.flags = args.flags;
  request.options = args.slurm;
  request.noWait = args.noWait;
  return args.collectId.empty() ? runSlurmBatch(request) : collectSlurmBatch(request, args.collectId);
}

}  // namespace

void registerBatch(CLI::App& app, Commands& commands) {
  auto args = std::make_shared<BatchArgs>();
  CLI::App* cmd = app.add_subcommand("batch",
                                     "Run a file of kiln jobs (compile, check, bench, ...) as separate "
                                     "processes and report every result in one document");
  cmd->add_option(
      "jobs", args->jobsFile,
      "Jobs file: [{\"name\", \"command\", \"args\": [...], \"env\": {...}, \"timeout_s\"}, ...] or "
      "{\"jobs\": [...]}; relative paths in args resolve against its folder; \"after\": \"NAME\" waits for "
      "an earlier "
      "job and is skipped unless it succeeded");
  cmd->add_option("-j,--jobs", args->parallel, "Jobs to run at once (default 1)")->check(CLI::Range(1, 256));
  cmd->add_flag("--fail-fast", args->failFast,
                "After a job fails, start no more (they are reported as skipped)");
  cmd->add_option("--report", args->reportFile, "Also write the JSON report to this file");
  cmd->add_option("--kiln", args->kiln, "The kiln executable each job runs (default: this one)");
  cmd->add_option("--timeout", args->timeoutSeconds,
                  "Seconds before a job is killed (0: none; a job's timeout_s wins)")
      ->check(CLI::NonNegativeNumber);
  cmd->add_option("--scheduler", args->scheduler,
                  "Where the jobs run: local (default) or slurm (one job array; the "
                  "jobs file's folder must be on a filesystem every node shares)")
      ->check(CLI::IsMember({"local", "slurm"}));
  cmd->add_option("--partition", args->slurm.partition, "Slurm partition (default: the cluster's)");
  cmd->add_option("--account", args->slurm.account, "Slurm account to charge");
  cmd->add_option("--sbatch-arg", args->slurm.extraArgs,
                  "An extra sbatch argument, as one word (repeatable), e.g. "
                  "--sbatch-arg=--mem=4G")
      ->allow_extra_args(false);
  cmd->add_flag("--no-wait", args->noWait, "Slurm: submit, print the array id and return (collect later)");
  cmd->add_option("--collect", args->collectId,
                  "Wait for a batch submitted with --no-wait and report it "
                  "(ARRAY_ID as printed, the same jobs file)");
  cmd->add_option("--matrix", args->matrixModels,
                  "Compile farm: write a jobs file that compiles every .onnx in this "
                  "folder for every profile in --profiles, checks and benchmarks them");
  cmd->add_option("--profiles", args->matrixProfiles,
                  "Compile farm: folder of device profiles (kiln devices --profile)");
  cmd->add_option("-o,--output", args->matrixOutput,
                  "Compile farm: the jobs file to write (default: stdout)");
  cmd->add_option("--bench-runs", args->benchRuns,
                  "Compile farm: kiln bench --runs for each model (default 2)")
      ->check(CLI::Range(1, 1000));
  addCommonFlags(*cmd, args->flags);
  cmd->footer(
      "\nEach job runs `kiln <command> <args...> --json` in the jobs file's folder. Exit: 0 all jobs ok, 1 "
      "any "
      "failed, crashed or timed out, 2 usage (a malformed jobs file).\n"
      "Examples:\n  kiln batch jobs.json\n  kiln batch jobs.json --jobs 2 --report report.json\n"
      "  kiln batch jobs.json --fail-fast --timeout 600 --json > report.json\n"
      "  kiln batch jobs.json --scheduler slurm --partition gpu --report report.json\n"
      "  id=$(kiln batch jobs.json --scheduler slurm --no-wait); kiln batch --collect \"$id\" jobs.json\n"
      "  kiln batch --matrix models/ --profiles profiles/ -o farm.json && kiln batch farm.json --scheduler "
      "slurm\n\n"
      "jobs.json:\n"
      "  [{\"name\": \"det\", \"command\": \"compile\", \"args\": [\"det.onnx\", \"-o\", "
      "\"out/det_ctx.onnx\"]},\n"
      "   {\"name\": \"det-check\", \"command\": \"check\", \"args\": [\"out/det_vulkan.bin\"]}]");
  cmd->callback([args, &commands] { commands.run = [args] { return runBatch(*args); }; });
  registerBatchTask(app, commands);  // what each Slurm array task runs
}

}  // namespace kiln::cli
