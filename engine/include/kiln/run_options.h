// RunOptions: per-run control of Session::run / runValues, after ONNX Runtime's RunOptions: terminate one run from
// another thread, pick the outputs a run returns, tag the run's log lines, and time it node by node.
#pragma once

#include "kiln/export.h"

#include <memory>
#include <string>
#include <vector>

#include "kiln/progress.h"

namespace kiln {

class KILN_EXPORT RunOptions {
 public:
  // Options with no tag, every output, and a terminate flag of their own (not set).
  RunOptions();

  // Asks every run using these options to stop at the next node boundary (between nodes, partitions included) and
  // return CANCELLED; callable from any thread while the run goes on. The session stays usable. The flag stays set
  // (later runs with these options end at once) until unsetTerminate(). Copies of a RunOptions share the flag.
  void setTerminate();
  // Clears the terminate flag, so these options can run again.
  void unsetTerminate();
  // True while the terminate flag is set.
  bool terminateRequested() const;
  // Uses `token` (shared with the caller, e.g. a UI's cancel button) as the terminate flag; null restores a fresh one.
  RunOptions& setCancellationToken(std::shared_ptr<CancellationToken> token);
  // The terminate flag runs check (never null).
  const std::shared_ptr<CancellationToken>& cancellationToken() const { return terminate_; }

  // Names the run in the engine's log lines ("run 'tag': ..."); empty means untagged.
  RunOptions& setTag(std::string tag);
  // The run tag ("" when unset).
  const std::string& tag() const { return tag_; }

  // Makes the run return only these outputs, in this order (a name may repeat); empty (the default) returns every
  // graph output in declaration order. A name that is not a graph output makes the run INVALID_ARGUMENT.
  RunOptions& setOutputNames(std::vector<std::string> names);
  // The requested output names (empty: all outputs).
  const std::vector<std::string>& outputNames() const { return outputNames_; }

  // Times every node of runs with these options (a few clock reads per node); Session::lastRunProfile() then
  // holds the last such run's profile. Off by default.
  RunOptions& setProfiling(bool enabled);
  // True when runs with these options record a RunProfile.
  bool profiling() const { return profiling_; }

 private:
  std::shared_ptr<CancellationToken> terminate_;
  std::string tag_;
  std::vector<std::string> outputNames_;
  bool profiling_ = false;
};

}  // namespace kiln
