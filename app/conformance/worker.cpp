#include "worker.h"

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>

extern char** environ;

namespace kiln::conformance {
namespace {

using Clock = std::chrono::steady_clock;
constexpr const char* kLinePrefix = "kiln-conformance-case ";

std::string escape(const std::string& text) {
  std::string out;
  for (char c : text) {
    if (c == '\\') out += "\\\\";
    else if (c == '\t') out += "\\t";
    else if (c == '\n') out += "\\n";
    else out += c;
  }
  return out;
}

std::string unescape(const std::string& text) {
  std::string out;
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] != '\\' || i + 1 == text.size()) {
      out += text[i];
      continue;
    }
    const char next = text[++i];
    out += next == 't' ? '\t' : next == 'n' ? '\n' : next;
  }
  return out;
}

double millisecondsSince(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

// Why a worker that ended before reporting a case failed it.
std::string describeEnd(int waitStatus) {
  if (WIFSIGNALED(waitStatus)) {
    const int signal = WTERMSIG(waitStatus);
    if (signal == SIGALRM) return "timed out after " + std::to_string(kCaseTimeoutSeconds) + " s";
    return "crashed with signal " + std::to_string(signal) + " (" + strsignal(signal) + ")";
  }
  if (WIFEXITED(waitStatus) && WEXITSTATUS(waitStatus) != 0) {
    return "the case's process exited with status " + std::to_string(WEXITSTATUS(waitStatus)) + " without a result";
  }
  return "the case's process exited without a result";
}

// Starts argv with its stdout on a pipe; returns the pid and the pipe's read end in `readFd`.
Result<pid_t> spawnWithStdoutPipe(const std::vector<std::string>& argv, int& readFd) {
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) return Status(StatusCode::FAIL, std::string("pipe: ") + std::strerror(errno));
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, fds[1], STDOUT_FILENO);
  std::vector<char*> args;
  for (const auto& arg : argv) args.push_back(const_cast<char*>(arg.c_str()));
  args.push_back(nullptr);
  pid_t pid = 0;
  const int error = posix_spawn(&pid, args[0], &actions, nullptr, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  close(fds[1]);
  if (error != 0) {
    close(fds[0]);
    return Status(StatusCode::FAIL, "cannot start the conformance worker '" + argv[0] + "': " + std::strerror(error));
  }
  readFd = fds[0];
  return pid;
}

}  // namespace

std::string formatWorkerLine(const std::string& caseDirectory, const CaseRun& run, double milliseconds) {
  const char letter = run.outcome == Outcome::Passed ? 'P' : run.outcome == Outcome::Skipped ? 'S' : 'F';
  char ms[32];
  std::snprintf(ms, sizeof ms, "%.3f", milliseconds);
  return std::string(kLinePrefix) + letter + " " + ms + " " + escape(caseDirectory) + "\t" + escape(run.detail);
}

bool parseWorkerLine(const std::string& line, std::string& caseDirectory, CaseRun& run, double& milliseconds) {
  // Anywhere in the line: output without a newline may precede it.
  const size_t start = line.find(kLinePrefix);
  if (start == std::string::npos) return false;
  const std::string rest = line.substr(start + std::strlen(kLinePrefix));
  const size_t msEnd = rest.find(' ', 2);
  const size_t tab = rest.find('\t');
  if (rest.size() < 2 || rest[1] != ' ' || msEnd == std::string::npos || tab == std::string::npos || tab < msEnd) {
    return false;
  }
  const char letter = rest[0];
  if (letter != 'P' && letter != 'F' && letter != 'S') return false;
  char* parsedEnd = nullptr;
  const std::string msText = rest.substr(2, msEnd - 2);
  milliseconds = std::strtod(msText.c_str(), &parsedEnd);
  if (parsedEnd != msText.c_str() + msText.size()) return false;
  run.outcome = letter == 'P' ? Outcome::Passed : letter == 'S' ? Outcome::Skipped : Outcome::Failed;
  caseDirectory = unescape(rest.substr(msEnd + 1, tab - msEnd - 1));
  run.detail = unescape(rest.substr(tab + 1));
  return true;
}

int runWorker(const std::vector<std::string>& caseDirectories, const Options& options) {
  for (const std::string& directory : caseDirectories) {
    const auto start = Clock::now();
    alarm(kCaseTimeoutSeconds);
    const CaseRun run = runCase(directory, options);
    alarm(0);
    const std::string line = formatWorkerLine(directory, run, millisecondsSince(start)) + "\n";
    std::fputs(line.c_str(), stdout);
    std::fflush(stdout);
  }
  return 0;
}

std::vector<std::string> workerCommand(const std::vector<std::string>& caseDirectories, const Options& options) {
  std::vector<std::string> argv = {options.workerProgram, "conformance", "--ep", options.executionProvider};
  for (const auto& [key, value] : options.configEntries) argv.insert(argv.end(), {"--config", key + "=" + value});
  // The tolerances travel as exact decimal text (%.17g round-trips a double).
  char tolerance[32];
  std::snprintf(tolerance, sizeof tolerance, "%.17g", options.rtol);
  argv.insert(argv.end(), {"--rtol", tolerance});
  std::snprintf(tolerance, sizeof tolerance, "%.17g", options.atol);
  argv.insert(argv.end(), {"--atol", tolerance});
  argv.push_back("--worker");
  argv.insert(argv.end(), caseDirectories.begin(), caseDirectories.end());
  return argv;
}

Status runInWorkers(const std::vector<std::string>& caseDirectories, const Options& options,
                    const std::function<void(size_t, const CaseRun&, double)>& onResult) {
  if (options.workerProgram.empty()) {
    return Status(StatusCode::INVALID_ARGUMENT, "isolated conformance runs need the kiln program (workerProgram)");
  }
  const size_t batchSize = static_cast<size_t>(std::max(1, options.workerBatchSize));
  size_t next = 0;
  while (next < caseDirectories.size()) {
    const size_t end = std::min(next + batchSize, caseDirectories.size());
    int readFd = -1;
    auto pid = spawnWithStdoutPipe(
        workerCommand({caseDirectories.begin() + static_cast<std::ptrdiff_t>(next),
                       caseDirectories.begin() + static_cast<std::ptrdiff_t>(end)}, options),
        readFd);
    if (!pid.isOk()) return pid.status();
    FILE* stream = fdopen(readFd, "r");
    auto lastResult = Clock::now();
    char* buffer = nullptr;
    size_t capacity = 0;
    while (stream && getline(&buffer, &capacity, stream) > 0) {
      std::string line(buffer);
      if (!line.empty() && line.back() == '\n') line.pop_back();
      std::string directory;
      CaseRun run;
      double milliseconds = 0;
      if (next < end && parseWorkerLine(line, directory, run, milliseconds) && directory == caseDirectories[next]) {
        onResult(next++, run, milliseconds);
        lastResult = Clock::now();
      }
    }
    std::free(buffer);
    if (stream) std::fclose(stream);
    else close(readFd);
    int waitStatus = 0;
    while (waitpid(*pid, &waitStatus, 0) < 0 && errno == EINTR) {
    }
    if (next < end) {
      // The worker ended inside this case: it fails, and the cases after it get a new worker.
      onResult(next, CaseRun{Outcome::Failed, describeEnd(waitStatus)}, millisecondsSince(lastResult));
      ++next;
    }
  }
  return Status::ok();
}

}  // namespace kiln::conformance
