// Isolated conformance runs: the harness re-executes kiln (`kiln conformance --worker CASE...`) for a batch of cases,
// and the worker reports each case on its stdout, so a crash or a hang fails one case, not the run (no fork without
// exec: the worker is a fresh process image).
//
// Protocol, one line per finished case on the worker's stdout:
//   kiln-conformance-case <P|F|S> <milliseconds> <case folder>\t<detail>
// (P passed, F failed, S skipped; the folder and detail with '\\', '\t' and '\n' escaped as \\ \t \n). Other lines
// are ignored. A worker that ends before reporting a case failed that case; the cases after it go to a new worker.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "conformance.h"

namespace kiln::conformance {

// Runs each case folder in this process, one after the other, and writes its result line on stdout (flushed) as it
// finishes. Each case gets `kCaseTimeoutSeconds` (SIGALRM ends the process past it). Returns 0.
int runWorker(const std::vector<std::string>& caseDirectories, const Options& options);

inline constexpr unsigned kCaseTimeoutSeconds = 120;

// The argv that runs `caseDirectories` in a worker: options.workerProgram conformance --ep EP --worker CASE...
std::vector<std::string> workerCommand(const std::vector<std::string>& caseDirectories, const Options& options);

// Runs `caseDirectories` in worker processes, options.workerBatchSize cases per worker, calling `onResult` with each
// case's index, result and milliseconds in order. FAIL when a worker cannot be started.
Status runInWorkers(const std::vector<std::string>& caseDirectories, const Options& options,
                    const std::function<void(size_t, const CaseRun&, double)>& onResult);

// The protocol's line for one case (without the newline), and its parse; false for a line that is not one.
std::string formatWorkerLine(const std::string& caseDirectory, const CaseRun& run, double milliseconds);
bool parseWorkerLine(const std::string& line, std::string& caseDirectory, CaseRun& run, double& milliseconds);

}  // namespace kiln::conformance
