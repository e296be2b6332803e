// Child processes (app/common/child_process.h): output capture, exit codes, and timeouts that end the whole tree.
#include <gtest/gtest.h>

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <string>
#include <thread>

#include "child_process.h"

namespace kiln::app {
namespace {

// True while `pid` runs (a zombie waiting for its reaper counts as gone).
bool running(pid_t pid) {
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string text((std::istreambuf_iterator<char>(stat)), std::istreambuf_iterator<char>());
  const size_t close = text.rfind(')');
  if (close == std::string::npos || close + 2 >= text.size()) return false;
  return text[close + 2] != 'Z' && text[close + 2] != 'X';
}

bool goneWithin(pid_t pid, std::chrono::milliseconds limit) {
  const auto end = std::chrono::steady_clock::now() + limit;
  while (running(pid)) {
    if (std::chrono::steady_clock::now() > end) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return true;
}

TEST(ChildProcess, CapturesOutputAndExitCode) {
  ChildSpec spec;
  spec.argv = {"/bin/sh", "-c", "echo out; echo err >&2; exit 3"};
  spec.environment = {{"KILN_TEST_VALUE", "x"}};
  const auto result = runChild(spec);
  ASSERT_TRUE(result.isOk()) << result.status().toString();
  EXPECT_EQ(result->out, "out\n");
  EXPECT_EQ(result->err, "err\n");
  EXPECT_EQ(result->exitCode, 3);
  EXPECT_TRUE(result->exited());
  EXPECT_EQ(result->describeEnd(), "exit 3");
}

TEST(ChildProcess, MissingProgramIsNoSuchFile) {
  ChildSpec spec;
  spec.argv = {"/no/such/program"};
  EXPECT_EQ(runChild(spec).status().code(), StatusCode::NO_SUCHFILE);
  spec.argv = {};
  EXPECT_EQ(runChild(spec).status().code(), StatusCode::INVALID_ARGUMENT);
}

// A job that starts a sleeping grandchild and outlives its timeout: both die, and runChild returns promptly.
TEST(ChildProcess, TimeoutKillsTheChildAndItsGrandchildren) {
  ChildSpec spec;
  spec.argv = {"/bin/sh", "-c", "sleep 60 & echo $!; wait"};
  spec.timeoutSeconds = 0.5;
  const auto start = std::chrono::steady_clock::now();
  const auto result = runChild(spec);
  ASSERT_TRUE(result.isOk()) << result.status().toString();
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(10));
  EXPECT_TRUE(result->timedOut);
  EXPECT_EQ(result->signal, SIGKILL);
  const pid_t grandchild = static_cast<pid_t>(std::stol(result->out));
  ASSERT_GT(grandchild, 0);
  const bool gone = goneWithin(grandchild, std::chrono::seconds(5));
  if (!gone) ::kill(grandchild, SIGKILL);  // do not leave it behind when the test fails
  EXPECT_TRUE(gone) << "the grandchild " << grandchild << " outlived its parent's timeout";
}

// Without a group of its own (kiln bench's workers, which kiln-studio kills with the bench's group), a timeout
// kills the child alone.
TEST(ChildProcess, TimeoutWithoutOwnGroupKillsTheChildOnly) {
  ChildSpec spec;
  spec.argv = {"/bin/sh", "-c", "sleep 60 & echo $!; wait"};
  spec.timeoutSeconds = 0.5;
  spec.ownProcessGroup = false;
  const auto result = runChild(spec);
  ASSERT_TRUE(result.isOk()) << result.status().toString();
  EXPECT_TRUE(result->timedOut);
  const pid_t grandchild = static_cast<pid_t>(std::stol(result->out));
  EXPECT_TRUE(running(grandchild));
  ::kill(grandchild, SIGKILL);
}

// killChildrenOnInterrupt: SIGINT to a process running a child (kiln batch) kills the child's group, then the process.
TEST(ChildProcess, InterruptKillsTheRunningChildren) {
  int report[2];
  ASSERT_EQ(pipe(report), 0);
  const pid_t parent = fork();
  ASSERT_GE(parent, 0);
  if (parent == 0) {
    close(report[0]);
    dup2(report[1], 9);  // the job writes its pid here (runChild's own pipes are close-on-exec, this one is not)
    killChildrenOnInterrupt();
    ChildSpec spec;
    spec.argv = {"/bin/sh", "-c", "echo $$ >&9; exec sleep 60"};
    (void)runChild(spec);
    _exit(0);  // not reached when the interrupt works
  }
  close(report[1]);
  char text[32] = {};
  const ssize_t n = read(report[0], text, sizeof text - 1);
  close(report[0]);
  ASSERT_GT(n, 0);
  const pid_t job = static_cast<pid_t>(std::stol(text));
  ::kill(parent, SIGINT);
  int status = 0;
  ASSERT_EQ(waitpid(parent, &status, 0), parent);
  EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGINT);
  const bool gone = goneWithin(job, std::chrono::seconds(5));
  if (!gone) ::kill(job, SIGKILL);
  EXPECT_TRUE(gone) << "the job " << job << " outlived the interrupted parent";
}

TEST(ChildProcess, ProcessGroupMembersAndKill) {
  const pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    becomeGroupLeader();
    execl("/bin/sh", "sh", "-c", "sleep 60 & sleep 60", static_cast<char*>(nullptr));
    _exit(127);
  }
  // Both sleeps (and the shell) show up in the group once the shell has started them.
  for (int i = 0; i < 250 && processGroupMembers(pid).size() < 2; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  EXPECT_GE(processGroupMembers(pid).size(), 2u);
  killProcessGroup(pid, true);
  int status = 0;
  waitpid(pid, &status, 0);
  for (int i = 0; i < 250 && !processGroupMembers(pid).empty(); ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  EXPECT_TRUE(processGroupMembers(pid).empty());
  EXPECT_TRUE(processGroupMembers(0).empty());
}

}  // namespace
}  // namespace kiln::app
