// Runs another program (usually this kiln, re-executed) and captures what it prints: `kiln bench` measures fresh
// processes this way, and `kiln batch` runs each job in its own process so a crash cannot take the others down.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "kiln/status.h"

namespace kiln::cli {

struct ChildSpec {
  std::vector<std::string> argv;                    // argv[0] is the program path (no PATH search)
  std::map<std::string, std::string> environment;  // added to (or replacing entries of) this process's environment
  std::vector<std::string> unsetEnvironment;       // removed from the child's environment
  double timeoutSeconds = 0;                       // 0: no limit; past it the child gets SIGKILL
  std::string workingDirectory;                    // empty: this process's; else the child chdirs here before exec
};

struct ChildResult {
  int exitCode = -1;     // the exit status when the child exited
  int signal = 0;        // the signal that ended it (SIGKILL after a timeout), else 0
  bool timedOut = false;
  std::string out, err;  // everything it wrote on stdout and stderr
  double wallMs = 0;

  bool exited() const { return signal == 0; }
  // "exit 1", "signal 11 (Segmentation fault)", "timed out after 30 s".
  std::string describeEnd(double timeoutSeconds = 0) const;
};

// Starts the child, collects both streams until it ends, and reaps it. Fails (FAIL) only when it cannot be started
// at all (no such program: NO_SUCHFILE; no such working directory: NO_SUCHFILE). A relative argv[0] is resolved
// against this process's working directory, not the child's. Safe to call from several threads at once.
Result<ChildResult> runChild(const ChildSpec& spec);

// This executable's path (/proc/self/exe), for re-executing kiln.
std::string selfExecutable();

}  // namespace kiln::cli
