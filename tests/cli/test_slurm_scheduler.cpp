// kiln batch --scheduler slurm without a cluster (app/common/slurm_scheduler.h): array planning, sbatch
// command lines, the task script, and what sbatch and squeue print.
#include <gtest/gtest.h>

#include "slurm_scheduler.h"

namespace kiln::app {
namespace {

std::vector<BatchJob> jobsFrom(const std::string& text) {
  auto jobs = parseBatchJobs(text);
  EXPECT_TRUE(jobs.isOk()) << jobs.status().toString();
  return jobs.isOk() ? *jobs : std::vector<BatchJob>{};
}

TEST(SlurmScheduler, IndependentJobsShareOneArray) {
  const auto plan = planSlurmSubmissions(jobsFrom(R"([{"command": "run", "timeout_s": 5}, {"command": "check",
                                                     "timeout_s": 90}, {"command": "bench"}])"),
                                         0);
  ASSERT_EQ(plan.size(), 1u);
  EXPECT_EQ(plan[0].jobs, (std::vector<int>{0, 1, 2}));
  EXPECT_EQ(plan[0].dependency, -1);
  EXPECT_EQ(plan[0].timeoutSeconds, 0) << "a job without any timeout leaves the array unlimited";
  const auto limited =
      planSlurmSubmissions(jobsFrom(R"([{"command": "run", "timeout_s": 5}, {"command": "check",
                                                        "timeout_s": 90}, {"command": "bench"}])"),
                           30);
  EXPECT_EQ(limited[0].timeoutSeconds, 90) << "the largest timeout, --timeout for jobs without one";
}

TEST(SlurmScheduler, DependentJobsGoIntoLaterArraysPerDependency) {
  const auto plan = planSlurmSubmissions(jobsFrom(R"([
      {"name": "a", "command": "compile"}, {"name": "b", "command": "compile"},
      {"name": "a-check", "command": "check", "after": "a"}, {"name": "b-check", "command": "check", "after": "b"},
      {"name": "a-bench", "command": "bench", "after": "a"}, {"name": "a-late", "command": "run", "after": "a-bench"}])"),
                                         0);
  ASSERT_EQ(plan.size(), 4u);
  EXPECT_EQ(plan[0].jobs, (std::vector<int>{0, 1}));
  EXPECT_EQ(plan[1].jobs, (std::vector<int>{2, 4}));
  EXPECT_EQ(plan[1].dependency, 0);
  EXPECT_EQ(plan[2].jobs, (std::vector<int>{3}));
  EXPECT_EQ(plan[2].dependency, 1);
  EXPECT_EQ(plan[3].jobs, (std::vector<int>{5}));
  EXPECT_EQ(plan[3].dependency, 4);
  // Only dependent jobs: no empty first array.
  EXPECT_TRUE(planSlurmSubmissions({}, 0).empty());
}

TEST(SlurmScheduler, TimeLimitIsTheTimeoutPlusAMarginInMinutes) {
  EXPECT_EQ(slurmTimeLimitMinutes(0), 0);
  EXPECT_EQ(slurmTimeLimitMinutes(1), 2);
  EXPECT_EQ(slurmTimeLimitMinutes(600), 11);
}

TEST(SlurmScheduler, SbatchCommandLine) {
  SlurmOptions options;
  options.partition = "gpu";
  options.account = "team";
  options.extraArgs = {"--mem=4G"};
  SlurmSubmission submission;
  submission.jobs = {2, 4};
  submission.dependency = 0;
  submission.timeoutSeconds = 30;
  const auto argv = sbatchArgv("/usr/bin/sbatch", options, submission, "17_0", "/data/jobs",
                               "/data/jobs/.kiln-batch/run", "/data/jobs/.kiln-batch/run/task.sh");
  const std::vector<std::string> expected = {"/usr/bin/sbatch",
                                             "--parsable",
                                             "--job-name=kiln-batch",
                                             "--array=2,4",
                                             "--chdir=/data/jobs",
                                             "--output=/data/jobs/.kiln-batch/run/slurm-%A_%a.out",
                                             "--time=2",
                                             "--partition=gpu",
                                             "--account=team",
                                             "--dependency=afterok:17_0",
                                             "--kill-on-invalid-dep=yes",
                                             "--mem=4G",
                                             "/data/jobs/.kiln-batch/run/task.sh"};
  EXPECT_EQ(argv, expected);
  const auto plain = sbatchArgv("sbatch", {}, SlurmSubmission{{0}, -1, 0}, "", "/w", "/w/r", "/w/r/t.sh");
  EXPECT_EQ(plain, (std::vector<std::string>{"sbatch", "--parsable", "--job-name=kiln-batch", "--array=0",
                                             "--chdir=/w", "--output=/w/r/slurm-%A_%a.out", "/w/r/t.sh"}));
}

TEST(SlurmScheduler, ParsesSbatchOutput) {
  EXPECT_EQ(parseSbatchJobId("123\n").value(), "123");
  EXPECT_EQ(parseSbatchJobId("456;cluster\n").value(), "456");
  EXPECT_FALSE(parseSbatchJobId("").isOk());
  EXPECT_FALSE(parseSbatchJobId("Submitted batch job 5\n").isOk());
}

TEST(SlurmScheduler, ParsesSqueueTasks) {
  const auto tasks =
      parseSqueueTasks("12_0 RUNNING\n12_3 PENDING\n\n13_[4-5] PENDING\ngarbage\n14 RUNNING\n");
  ASSERT_EQ(tasks.size(), 2u);
  EXPECT_EQ(tasks[0].arrayId, "12");
  EXPECT_EQ(tasks[0].task, 0);
  EXPECT_EQ(tasks[0].state, "RUNNING");
  EXPECT_EQ(tasks[1].task, 3);
  EXPECT_EQ(tasks[1].state, "PENDING");
}

TEST(SlurmScheduler, TaskScriptQuotesEveryPath) {
  EXPECT_EQ(shellQuote("it's"), "'it'\\''s'");
  const std::string script =
      slurmTaskScript("/opt/kiln", "/d/my jobs/run/jobs.json", "/d/my jobs/run", "/d/k's", 30);
  EXPECT_NE(
      script.find("exec '/opt/kiln' batch-task '/d/my jobs/run/jobs.json' --index \"$SLURM_ARRAY_TASK_ID\" "
                  "--run-dir '/d/my jobs/run' --kiln '/d/k'\\''s' --timeout 30\n"),
      std::string::npos)
      << script;
}

TEST(SlurmScheduler, RecognisesAnUnreachableController) {
  EXPECT_TRUE(slurmControllerUnreachable(
      "sbatch: error: Batch job submission failed: Unable to contact slurm controller "
      "(connect failure)"));
  EXPECT_FALSE(slurmControllerUnreachable("sbatch: error: invalid partition specified: gpu"));
  EXPECT_EQ(findOnPath("no-such-program-kiln"), "");
  EXPECT_NE(findOnPath("sh"), "");
}

}  // namespace
}  // namespace kiln::app
