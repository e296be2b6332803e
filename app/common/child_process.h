// Runs another program (usually this kiln, re-executed) and captures what it prints: `kiln bench` measures fresh
// processes this way, and `kiln batch` runs each job in its own process so a crash cannot take the others down.
// A child leads a process group of its own unless asked otherwise, so a timeout (or an interrupt) ends its whole
// tree, grandchildren included, with one signal.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "kiln/status.h"

namespace kiln::app {

struct ChildSpec {
  std::vector<std::string> argv;                    // argv[0] is the program path (no PATH search)
  std::map<std::string, std::string> environment;  // added to (or replacing entries of) this process's environment
  std::vector<std::string> unsetEnvironment;       // removed from the child's environment
  double timeoutSeconds = 0;                       // 0: no limit; past it the child's process group gets SIGKILL
  std::string workingDirectory;                    // empty: this process's; else the child chdirs here before exec
  // true: the child leads a new process group, and a timeout kills the group. false: it stays in this process's
  // group (so whoever kills that group, as kiln-studio does with kiln bench, ends it too) and a timeout kills it alone.
  bool ownProcessGroup = true;
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

// SIGKILL to the process group `pgid` (a child started here, or by QProcess with becomeGroupLeader), and, when
// `leaderUnreaped` (its pid cannot have been reused yet), to the process `pgid` itself in case it is killed before
// it left its parent's group. No-op for pgid <= 0.
void killProcessGroup(int pgid, bool leaderUnreaped);
// The processes still in group `pgid` (zombies not counted), from /proc.
std::vector<int> processGroupMembers(int pgid);
// Makes the calling process the leader of a new process group (setpgid(0, 0)); async-signal-safe, for a child
// between fork and exec (QProcess::setChildProcessModifier).
void becomeGroupLeader();
// From now on, SIGINT and SIGTERM to this process first kill the groups of the children runChild is running, then
// end it as the signal would: an interrupted `kiln batch` leaves no job behind. Call once, from main's thread.
void killChildrenOnInterrupt();

// This executable's path (/proc/self/exe), for re-executing kiln.
std::string selfExecutable();
// `program`'s path in a non-empty folder of $PATH, or "" when none has it (executable files only).
std::string findOnPath(const std::string& program);

}  // namespace kiln::app
