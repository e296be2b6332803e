// `kiln batch --scheduler slurm`, the parts that need no cluster: which jobs go into which job array (a job
// with "after" goes into a later array that waits for its dependency with --dependency=afterok), the
// sbatch/squeue/scancel command lines, the script each array task runs, and the parsing of what Slurm prints.
// The CLI runs them (app/cli/batch_slurm.cpp); unit tests check them without Slurm.
#pragma once

#include <string>
#include <vector>

#include "batch_jobs.h"
#include "child_process.h"
#include "kiln/status.h"

namespace kiln::app {

// One sbatch call: a job array whose task ids are job indices in the jobs file.
struct SlurmSubmission {
  std::vector<int> jobs;  // indices into the jobs file, ascending
  int dependency = -1;    // the job index every task of this array waits for (afterok), else -1
  double timeoutSeconds =
      0;  // the largest job timeout in the array (0: none): the array's time limit is above it
};

struct SlurmOptions {
  std::string partition, account;      // empty: the cluster's default
  std::vector<std::string> extraArgs;  // passed to sbatch as they are (--sbatch-arg)
};

// Groups the jobs into arrays: every job without "after" in the first, then one array per dependency (jobs
// that wait for the same job share it), in file order, so an array is always submitted after the one it waits
// for. `defaultTimeout` is the batch's --timeout (a job's timeout_s wins).
std::vector<SlurmSubmission> planSlurmSubmissions(const std::vector<BatchJob>& jobs, double defaultTimeout);

// The array's --time in whole minutes: the timeout plus a margin for start-up and the status file, rounded
// up; 0 (no --time: the partition's limit) when there is no timeout.
int slurmTimeLimitMinutes(double timeoutSeconds);

// sbatch --parsable --array=<indices> --chdir=<workdir> --output=<runDir>/slurm-%A_%a.out [--time]
// [--partition]
// [--account] [--dependency=afterok:<dependencyTask> --kill-on-invalid-dep=yes] <extra args> <script>.
// `dependencyTask` is "<array id>_<task id>" or empty.
std::vector<std::string> sbatchArgv(const std::string& sbatch, const SlurmOptions& options,
                                    const SlurmSubmission& submission, const std::string& dependencyTask,
                                    const std::string& workingDirectory, const std::string& runDirectory,
                                    const std::string& script);

// The array id from `sbatch --parsable` output ("123" or "123;cluster"); INVALID_ARGUMENT when there is none.
Result<std::string> parseSbatchJobId(const std::string& out);

// One array task as `squeue -h -r -o "%i %T"` lists it ("12_3 RUNNING").
struct SlurmTaskState {
  std::string arrayId;
  int task = -1;
  std::string state;  // PENDING, RUNNING, COMPLETING, ...
};
// The lines of that squeue output; lines that are not "<id>_<task> <STATE>" are ignored.
std::vector<SlurmTaskState> parseSqueueTasks(const std::string& out);

// The shell script every task of a batch's arrays runs: `kiln batch-task` on the jobs file's copy, for the
// job whose index is $SLURM_ARRAY_TASK_ID, writing its status file into `runDirectory`.
std::string slurmTaskScript(const std::string& kiln, const std::string& jobsCopy,
                            const std::string& runDirectory, const std::string& jobsKiln,
                            double defaultTimeout);

// `text` quoted for sh ('...' with embedded quotes escaped).
std::string shellQuote(const std::string& text);

// True when a Slurm client's error says it could not reach the controller (down, wrong host or port).
bool slurmControllerUnreachable(const std::string& err);

}  // namespace kiln::app
