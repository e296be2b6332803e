#include "child_process.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

extern char** environ;

namespace kiln::app {
namespace {

using Clock = std::chrono::steady_clock;

// The child's environment: ours, minus `unset`, with `overrides` applied.
std::vector<std::string> childEnvironment(const ChildSpec& spec) {
  std::vector<std::string> result;
  for (char** entry = environ; *entry; ++entry) {
    const std::string text = *entry;
    const std::string name = text.substr(0, text.find('='));
    bool drop = spec.environment.count(name) > 0;
    for (const auto& unset : spec.unsetEnvironment) drop = drop || unset == name;
    if (!drop) result.push_back(text);
  }
  for (const auto& [name, value] : spec.environment) result.push_back(name + "=" + value);
  return result;
}

std::vector<char*> pointers(std::vector<std::string>& strings) {
  std::vector<char*> result;
  for (auto& s : strings) result.push_back(s.data());
  result.push_back(nullptr);
  return result;
}

// The process groups of the children running now, for killChildrenOnInterrupt's handler: fixed slots of atomics, the
// only kind of shared state a signal handler may read. A slot holds 0 when free.
constexpr size_t kChildSlots = 256;
std::atomic<pid_t> liveGroups[kChildSlots];

// Remembers `pgid` while it lives; a batch with more parallel children than slots just loses the interrupt kill
// for the extra ones (their timeouts still work).
class LiveGroup {
 public:
  explicit LiveGroup(pid_t pgid) {
    if (pgid <= 0) return;
    for (auto& slot : liveGroups) {
      pid_t expected = 0;
      if (slot.compare_exchange_strong(expected, pgid)) {
        slot_ = &slot;
        return;
      }
    }
  }
  ~LiveGroup() {
    if (slot_) slot_->store(0);
  }
  LiveGroup(const LiveGroup&) = delete;
  LiveGroup& operator=(const LiveGroup&) = delete;

 private:
  std::atomic<pid_t>* slot_ = nullptr;
};

void killLiveGroupsAndDie(int signalNumber) {
  for (auto& slot : liveGroups) {
    const pid_t pgid = slot.load();
    if (pgid > 0) killProcessGroup(pgid, true);  // slots are cleared only after the reap
  }
  ::signal(signalNumber, SIG_DFL);
  ::raise(signalNumber);
}

void closePipe(int fds[2]) {
  for (int i = 0; i < 2; ++i) {
    if (fds[i] >= 0) close(fds[i]);
    fds[i] = -1;
  }
}

}  // namespace

std::string ChildResult::describeEnd(double timeoutSeconds) const {
  if (timedOut) return "timed out after " + std::to_string(static_cast<long long>(timeoutSeconds)) + " s";
  if (signal != 0) return "signal " + std::to_string(signal) + " (" + strsignal(signal) + ")";
  return "exit " + std::to_string(exitCode);
}

void killProcessGroup(int pgid, bool leaderUnreaped) {
  if (pgid <= 0) return;
  ::kill(-static_cast<pid_t>(pgid), SIGKILL);
  if (leaderUnreaped) ::kill(static_cast<pid_t>(pgid), SIGKILL);
}

std::vector<int> processGroupMembers(int pgid) {
  std::vector<int> members;
  if (pgid <= 0) return members;
  std::error_code error;
  for (const auto& entry : std::filesystem::directory_iterator("/proc", error)) {
    const std::string name = entry.path().filename().string();
    if (name.empty() || name.find_first_not_of("0123456789") != std::string::npos) continue;
    std::ifstream file(entry.path() / "stat");
    std::stringstream text;
    text << file.rdbuf();
    const std::string stat = text.str();
    // "pid (comm) state ppid pgrp ...": comm may hold spaces and parentheses, so fields count from the last ')'.
    const size_t close = stat.rfind(')');
    if (close == std::string::npos) continue;  // it ended meanwhile
    std::istringstream fields(stat.substr(close + 1));
    std::string state;
    long long parent = 0, group = 0;
    if (!(fields >> state >> parent >> group)) continue;
    if (group == pgid && state != "Z" && state != "X") members.push_back(std::stoi(name));
  }
  return members;
}

void becomeGroupLeader() { ::setpgid(0, 0); }

void killChildrenOnInterrupt() {
  struct sigaction action {};
  action.sa_handler = killLiveGroupsAndDie;
  sigemptyset(&action.sa_mask);
  sigaction(SIGINT, &action, nullptr);
  sigaction(SIGTERM, &action, nullptr);
}

std::string selfExecutable() {
  std::error_code error;
  auto path = std::filesystem::read_symlink("/proc/self/exe", error);
  return error ? std::string("kiln") : path.string();
}

Result<ChildResult> runChild(const ChildSpec& spec) {
  if (spec.argv.empty()) return Status(StatusCode::INVALID_ARGUMENT, "no program to run");
  if (access(spec.argv.front().c_str(), X_OK) != 0) {
    return Status(StatusCode::NO_SUCHFILE, "cannot run '" + spec.argv.front() + "': " + std::strerror(errno));
  }
  std::error_code error;
  if (!spec.workingDirectory.empty() && !std::filesystem::is_directory(spec.workingDirectory, error)) {
    return Status(StatusCode::NO_SUCHFILE, "working directory '" + spec.workingDirectory + "' is not a folder");
  }
  // Everything the child needs is prepared before fork: after it, only async-signal-safe calls.
  std::vector<std::string> argvStrings = spec.argv;
  // The program path must not change meaning when the child changes folder.
  if (!spec.workingDirectory.empty() && argvStrings.front().find('/') != std::string::npos) {
    argvStrings.front() = std::filesystem::absolute(argvStrings.front(), error).string();
  }
  const std::string workingDirectory = spec.workingDirectory;
  const bool ownGroup = spec.ownProcessGroup;
  std::vector<std::string> envStrings = childEnvironment(spec);
  std::vector<char*> argv = pointers(argvStrings);
  std::vector<char*> envp = pointers(envStrings);
  int outPipe[2] = {-1, -1}, errPipe[2] = {-1, -1};
  if (pipe2(outPipe, O_CLOEXEC) != 0 || pipe2(errPipe, O_CLOEXEC) != 0) {
    closePipe(outPipe);
    return Status(StatusCode::FAIL, std::string("pipe: ") + std::strerror(errno));
  }
  const auto start = Clock::now();
  // Interrupts wait until the child's group is registered for killChildrenOnInterrupt (on this thread).
  sigset_t interrupts, previousMask;
  sigemptyset(&interrupts);
  sigaddset(&interrupts, SIGINT);
  sigaddset(&interrupts, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &interrupts, &previousMask);
  const pid_t pid = fork();
  if (pid < 0) {
    pthread_sigmask(SIG_SETMASK, &previousMask, nullptr);
    closePipe(outPipe);
    closePipe(errPipe);
    return Status(StatusCode::FAIL, std::string("fork: ") + std::strerror(errno));
  }
  if (pid == 0) {
    pthread_sigmask(SIG_SETMASK, &previousMask, nullptr);  // a signal mask survives exec
    if (ownGroup) setpgid(0, 0);  // its own group: a timeout kills what it started, too
    // No child reads stdin (and parallel ones must not fight over a terminal).
    const int devNull = open("/dev/null", O_RDONLY);
    if (devNull > STDIN_FILENO) {
      dup2(devNull, STDIN_FILENO);
      close(devNull);
    }
    dup2(outPipe[1], STDOUT_FILENO);
    dup2(errPipe[1], STDERR_FILENO);
    if (!workingDirectory.empty() && chdir(workingDirectory.c_str()) != 0) {
      static const char kMessage[] = "kiln: error: cannot enter the job's working directory\n";
      [[maybe_unused]] ssize_t ignored = write(STDERR_FILENO, kMessage, sizeof kMessage - 1);
      _exit(127);
    }
    execve(argv[0], argv.data(), envp.data());
    _exit(127);
  }
  // Also here, so the group exists before the parent can kill it (whichever runs first wins).
  if (ownGroup) setpgid(pid, pid);
  const LiveGroup live(ownGroup ? pid : 0);
  pthread_sigmask(SIG_SETMASK, &previousMask, nullptr);
  close(outPipe[1]);
  close(errPipe[1]);

  ChildResult result;
  pollfd fds[2] = {{outPipe[0], POLLIN, 0}, {errPipe[0], POLLIN, 0}};
  std::string* sinks[2] = {&result.out, &result.err};
  int open = 2;
  char buffer[65536];
  int status = 0;
  bool reaped = false;
  while (open > 0) {
    int waitMs = -1;
    if (result.timedOut) {
      // A grandchild that left the group may still hold the pipes open: stop reading once ours is gone.
      if (waitpid(pid, &status, WNOHANG) == pid) {
        reaped = true;
        break;
      }
      waitMs = 100;
    } else if (spec.timeoutSeconds > 0) {
      const double left = spec.timeoutSeconds * 1000 -
                          std::chrono::duration<double, std::milli>(Clock::now() - start).count();
      if (left <= 0) {
        // The child and everything it started (or the child alone); the pipes close when they die.
        if (ownGroup) {
          killProcessGroup(pid, true);
        } else {
          kill(pid, SIGKILL);
        }
        result.timedOut = true;
        waitMs = 100;
      } else {
        waitMs = static_cast<int>(left) + 1;
      }
    }
    const int ready = poll(fds, 2, waitMs);
    if (ready < 0 && errno != EINTR) break;
    for (int i = 0; i < 2; ++i) {
      if (fds[i].fd < 0 || !(fds[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
      const ssize_t n = read(fds[i].fd, buffer, sizeof buffer);
      if (n > 0) {
        sinks[i]->append(buffer, static_cast<size_t>(n));
      } else if (n == 0 || errno != EINTR) {
        close(fds[i].fd);
        fds[i].fd = -1;
        --open;
      }
    }
  }
  for (auto& fd : fds) {
    if (fd.fd >= 0) close(fd.fd);
  }
  while (!reaped && waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  result.wallMs = std::chrono::duration<double, std::milli>(Clock::now() - start).count();
  if (WIFEXITED(status)) {
    result.exitCode = WEXITSTATUS(status);
  } else if (WIFSIGNALED(status)) {
    result.signal = WTERMSIG(status);
  }
  return result;
}

std::string findOnPath(const std::string& program) {
  const char* path = std::getenv("PATH");
  std::istringstream folders(path ? path : "");
  for (std::string folder; std::getline(folders, folder, ':');) {
    if (folder.empty()) continue;
    const std::string candidate = folder + "/" + program;
    if (access(candidate.c_str(), X_OK) == 0) return candidate;
  }
  return "";
}

}  // namespace kiln::app
