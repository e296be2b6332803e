// `kiln batch --scheduler slurm`: submits a jobs file as Slurm job arrays, waits with progress from squeue,
// and gathers the same report a local batch writes from the status files the tasks leave in a run folder
// under the jobs file's folder (.kiln-batch/, which every node must see: a shared filesystem). The hidden
// `kiln batch-task` is what each array task runs.
#pragma once

#include <CLI/CLI.hpp>
#include <string>
#include <vector>

#include "batch_jobs.h"
#include "cli_output.h"
#include "commands.h"
#include "slurm_scheduler.h"

namespace kiln::cli {

struct SlurmBatchRequest {
  std::string jobsFile;  // as given (the report's "jobs_file")
  std::string jobsText;  // its content, copied into the run folder for the tasks
  std::vector<app::BatchJob> jobs;
  std::string folder;  // the jobs file's folder (absolute): every task's working directory
  std::string kiln;    // the kiln each job runs (absolute)
  double defaultTimeout = 0;
  std::string reportFile;
  CommonFlags flags;
  app::SlurmOptions options;
  bool noWait = false;
};

// Submits the batch; unless noWait, waits and reports like a local batch (exit 0 all ok, 1 otherwise, 130
// when interrupted: the arrays are cancelled). With noWait prints the array id that `--collect` takes.
int runSlurmBatch(const SlurmBatchRequest& request);
// Waits for the batch submitted as `arrayId` from request.folder and reports it (request.jobs is not used:
// the run folder's copy of the jobs file is).
int collectSlurmBatch(const SlurmBatchRequest& request, const std::string& arrayId);

// Hidden `kiln batch-task JOBS --index N --run-dir DIR --kiln K [--timeout S]`: runs job N in the current
// folder like a local batch would and writes DIR/status-N.json (its report entry). Exit 0 when the job is ok,
// else 1.
void registerBatchTask(CLI::App& app, Commands& commands);

}  // namespace kiln::cli
