// One job of `kiln batch`: running it as a child process, its outcome, and the report both schedulers write
// (local threads and Slurm tasks produce the same JobOutcome, so the JSON report and the table cannot differ
// between them).
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "batch_jobs.h"
#include "cli_output.h"

namespace kiln::cli {

enum class JobStatus { Ok, Failed, Crashed, TimedOut, Skipped };

// "ok", "failed", "crashed", "timed_out", "skipped".
const char* statusName(JobStatus status);

struct JobOutcome {
  JobStatus status = JobStatus::Skipped;
  std::vector<std::string> argv;
  bool started = false;
  int exitCode = -1;  // when it exited
  int signal = 0;     // when a signal ended it
  double wallMs = 0;
  double timeoutSeconds = 0;
  nlohmann::json result;   // the child's stdout parsed, or null
  std::string stdoutTail;  // when stdout was not JSON
  std::string stderrTail;
  std::string error;  // why it could not start
  std::string
      skippedBecause;  // why a skipped job never ran ("after \"compile\": failed"), "" for --fail-fast
};

// `kiln <command> <args...> --json` (--json added unless the job has it).
std::vector<std::string> childArgv(const std::string& kiln, const app::BatchJob& job);
// Runs the job to its end in `folder` with its env and timeout (job's timeout_s, else `defaultTimeout`; 0:
// none).
JobOutcome runJob(const app::BatchJob& job, const std::string& kiln, double defaultTimeout,
                  const std::string& folder);
// A job that never ran because the job it waits for did not succeed.
JobOutcome skippedAfter(const app::BatchJob& job, const std::string& dependencyName,
                        const JobOutcome& dependency, const std::string& kiln);

// The job's entry in the report; outcomeFromJson reads one back (a Slurm task's status file), false if
// malformed.
nlohmann::json jobJson(const app::BatchJob& job, const JobOutcome& outcome);
bool outcomeFromJson(const nlohmann::json& node, JobOutcome& outcome);

// "kiln: [3/5] compile det ok 1234 ms" on stderr (and the stderr tail of a failure under --verbose).
void announceJob(size_t finished, const std::vector<app::BatchJob>& jobs, size_t index,
                 const JobOutcome& outcome, const CommonFlags& flags);

// Writes the report (to `reportFile` when set, to stdout under --json, else the table) and returns the
// batch's exit code: 0 when every job is ok, 1 otherwise (or when the report cannot be written).
int finishBatch(const std::string& jobsFile, const std::vector<app::BatchJob>& jobs,
                const std::vector<JobOutcome>& outcomes, const std::string& reportFile,
                const CommonFlags& flags);

// Written to a temporary file beside the target and renamed, so a reader never sees half a file.
Status writeFileAtomically(const std::string& path, const std::string& text);

}  // namespace kiln::cli
