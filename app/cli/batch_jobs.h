// The jobs file of `kiln batch`: a list of kiln command lines, each run as its own process. Parsing checks every
// job before anything runs, so a typo in job 40 never surfaces after an hour of compiles.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "kiln/status.h"

namespace kiln::app {

struct BatchJob {
  std::string name;                                 // from the file, else "<command>-<index>"
  std::string command;                              // a kiln subcommand (batchCommands())
  std::vector<std::string> args;                    // after the subcommand; relative paths resolve in the file's folder
  std::map<std::string, std::string> environment;  // added to the child's environment
  double timeoutSeconds = 0;                        // 0: the batch's --timeout
  int after = -1;                                   // index of the job this one waits for ("after": name), else -1
};

// The subcommands a job may run ("batch" itself is refused: no nesting).
const std::vector<std::string>& batchCommands();

// Parses and validates a jobs file's text: a top-level array of jobs or {"jobs": [...]}, each
// {"name"?, "command", "args"?, "env"?, "timeout_s"?, "after"?}; "after" names an earlier job (so no cycles).
// INVALID_ARGUMENT naming the job index and field
// ("jobs[2].args[1]: must be a string, not number") for anything malformed, unknown or repeated.
Result<std::vector<BatchJob>> parseBatchJobs(const std::string& text);

}  // namespace kiln::app
