// kiln run --concurrency N: the throughput a server with N workers gets from one model, and each run's latency
// under that load. Runs of one session take turns (kiln/session.h), so N workers need N sessions: the command's
// session plus N-1 more created the same way (cheap once the first compiled: pipeline cache, shared devices), each
// run from its own thread, all started together.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "kiln/session.h"
#include "kiln/status.h"
#include "kiln/value.h"

namespace kiln::cli {

struct ConcurrentRuns {
  int sessions = 0;
  std::vector<double> latencyMs;  // every run of every worker
  double wallSeconds = 0;         // from the common start to the last worker's end
  double inferencesPerSecond() const { return wallSeconds > 0 ? static_cast<double>(latencyMs.size()) / wallSeconds : 0; }
};

// `concurrency` workers (`first` and concurrency-1 sessions of `model` created with `options`) each running
// `inputs` `runsEach` times, or for `durationSeconds` (at least once) when that is > 0. The first failure of any
// session creation or run is returned (the others stop at their next run).
Result<ConcurrentRuns> runConcurrently(Session& first, const std::string& model, const SessionOptions& options,
                                       const std::vector<NamedValue>& inputs, int concurrency, int runsEach,
                                       double durationSeconds);

}  // namespace kiln::cli
