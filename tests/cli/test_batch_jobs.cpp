// The jobs file of `kiln batch` (app/common/batch_jobs.h): every job checked before anything runs.
#include <gtest/gtest.h>

#include "batch_jobs.h"

namespace kiln::app {
namespace {

// The message of a rejected jobs file, or "" when it parsed.
std::string rejection(const std::string& text) {
  const auto jobs = parseBatchJobs(text);
  if (jobs.isOk()) return "";
  EXPECT_EQ(jobs.status().code(), StatusCode::INVALID_ARGUMENT);
  return jobs.status().message();
}

TEST(BatchJobs, ParsesBothForms) {
  auto list = parseBatchJobs(R"([{"command": "run", "args": ["m.onnx"], "env": {"A": "1"}, "timeout_s": 2.5},
                                       {"name": "c", "command": "compile"}])");
  ASSERT_TRUE(list.isOk()) << list.status().toString();
  ASSERT_EQ(list->size(), 2u);
  EXPECT_EQ((*list)[0].name, "run-0");
  EXPECT_EQ((*list)[0].args, std::vector<std::string>{"m.onnx"});
  EXPECT_EQ((*list)[0].environment.at("A"), "1");
  EXPECT_EQ((*list)[0].timeoutSeconds, 2.5);
  EXPECT_EQ((*list)[1].name, "c");
  const auto wrapped = parseBatchJobs(R"({"jobs": [{"command": "check"}]})");
  ASSERT_TRUE(wrapped.isOk());
  EXPECT_EQ(wrapped->front().command, "check");
  EXPECT_TRUE(parseBatchJobs("[]").value().empty());
}

TEST(BatchJobs, RejectsMalformedFilesNamingTheField) {
  EXPECT_NE(rejection("[").find("not valid JSON"), std::string::npos);
  EXPECT_NE(rejection("3").find("top level"), std::string::npos);
  EXPECT_NE(rejection(R"({"jobs": [], "x": 1})").find("unknown field \"x\""), std::string::npos);
  EXPECT_NE(rejection(R"({"job": []})").find("unknown field \"job\""), std::string::npos);
  EXPECT_NE(rejection(R"([1])").find("jobs[0]: must be an object, not number"), std::string::npos);
  EXPECT_NE(rejection(R"([{}])").find("missing field \"command\""), std::string::npos);
  EXPECT_NE(rejection(R"([{"command": "batch"}])").find("a batch cannot run another batch"), std::string::npos);
  EXPECT_NE(rejection(R"([{"command": "fly"}])").find("unknown command \"fly\""), std::string::npos);
  EXPECT_NE(rejection(R"([{"command": "run", "args": ["a", 1]}])").find("jobs[0].args[1]: must be a string, not number"),
            std::string::npos);
  EXPECT_NE(rejection(R"([{"command": "run", "args": "a"}])").find("jobs[0].args"), std::string::npos);
  EXPECT_NE(rejection(R"([{"command": "run", "env": {"A=B": "1"}}])").find("bad variable name"), std::string::npos);
  EXPECT_NE(rejection(R"([{"command": "run", "env": {"A": 1}}])").find("jobs[0].env.A"), std::string::npos);
  EXPECT_NE(rejection(R"([{"command": "run", "timeout_s": 0}])").find("jobs[0].timeout_s"), std::string::npos);
  EXPECT_NE(rejection(R"([{"command": "run", "timeout_s": "1"}])").find("jobs[0].timeout_s"), std::string::npos);
  EXPECT_NE(rejection(R"([{"command": "run", "name": ""}])").find("jobs[0].name"), std::string::npos);
  EXPECT_NE(rejection(R"([{"command": "run", "bogus": 1}])").find("unknown field \"bogus\""), std::string::npos);
  EXPECT_NE(rejection(R"([{"command": "run", "name": "a"}, {"command": "run", "name": "a"}])")
                .find("jobs[1].name: \"a\" is already the name of jobs[0]"),
            std::string::npos);
}

TEST(BatchJobs, AfterNamesAnEarlierJob) {
  auto list = parseBatchJobs(R"([{"name": "c", "command": "compile"}, {"command": "check", "after": "c"}])");
  ASSERT_TRUE(list.isOk()) << list.status().toString();
  EXPECT_EQ((*list)[0].after, -1);
  EXPECT_EQ((*list)[1].after, 0);
  EXPECT_NE(rejection(R"([{"command": "check", "after": "c"}, {"name": "c", "command": "compile"}])")
                .find("jobs[0].after: no earlier job is named \"c\""),
            std::string::npos);
  EXPECT_NE(rejection(R"([{"name": "c", "command": "check", "after": "c"}])").find("jobs[0].after"), std::string::npos);
  EXPECT_NE(rejection(R"([{"name": "c", "command": "compile"}, {"command": "check", "after": 0}])")
                .find("jobs[1].after: must be the name of an earlier job, not number"),
            std::string::npos);
}

}  // namespace
}  // namespace kiln::app
