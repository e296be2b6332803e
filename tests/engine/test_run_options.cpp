// RunOptions: output selection, terminate (before and during a run), the run tag, and the fix for a cancelled
// SessionOptions token that used to cancel every later run of the session.
#include <gtest/gtest.h>

#include <chrono>
#include <thread>

#include "kiln/log.h"
#include "kiln/session.h"
#include "model_builder.h"

namespace kiln {
namespace {

using testing::ModelBuilder;

std::unique_ptr<Session> createSession(const ModelBuilder& builder, SessionOptions options = {}) {
  std::string bytes;
  builder.build().SerializeToString(&bytes);
  EXPECT_TRUE(options.addConfigEntry("kiln.execution_providers", "cpu").isOk());
  auto session = Session::create(std::span(reinterpret_cast<const std::byte*>(bytes.data()), bytes.size()), options);
  EXPECT_TRUE(session.isOk()) << session.status().toString();
  return session.isOk() ? std::move(session).value() : nullptr;
}

// Y = X + 1, Z = X * 2, W = Relu(X), declared in that order.
ModelBuilder threeOutputs() {
  ModelBuilder b;
  b.input("X", {4});
  b.initializer("one", {4}, {1, 1, 1, 1});
  b.initializer("two", {4}, {2, 2, 2, 2});
  b.node("Add", {"X", "one"}, {"Y"});
  b.node("Mul", {"X", "two"}, {"Z"});
  b.node("Relu", {"X"}, {"W"});
  b.output("Y", {4});
  b.output("Z", {4});
  b.output("W", {4});
  return b;
}

// V = X + `iterations` (a Loop adding 1 per iteration): a run long enough to terminate from another thread.
ModelBuilder longLoop(int64_t iterations) {
  ModelBuilder b;
  b.input("X", {1});
  b.initializer("one", {1}, {1});
  onnx::TensorProto count;
  count.set_name("M");
  count.set_data_type(onnx::TensorProto::INT64);
  count.add_int64_data(iterations);
  *b.proto().add_initializer() = count;
  testing::GraphBuilder body("body");
  body.input("i", {}, onnx::TensorProto::INT64);
  body.input("cond", {}, onnx::TensorProto::BOOL);
  body.input("v", {1});
  body.node("Identity", {"cond"}, {"cond_out"});
  body.node("Add", {"v", "one"}, {"v_out"});
  body.output("cond_out", {}, onnx::TensorProto::BOOL);
  body.output("v_out", {1});
  testing::attrGraph(b.node("Loop", {"M", "", "X"}, {"V"}), "body", body.proto());
  b.output("V", {1});
  return b;
}

const std::vector<NamedTensor> kInputs = {{"X", Tensor::fromVector<float>({4}, {-1, 0, 1, 2})}};

TEST(RunOptions, ReturnsOnlyTheNamedOutputsInTheirOrder) {
  auto session = createSession(threeOutputs());
  ASSERT_TRUE(session);
  RunOptions options;
  options.setOutputNames({"W", "Y"});
  auto outputs = session->run(kInputs, options);
  ASSERT_TRUE(outputs.isOk()) << outputs.status().toString();
  ASSERT_EQ(outputs->size(), 2u);
  EXPECT_EQ((*outputs)[0].name, "W");
  EXPECT_EQ((*outputs)[0].tensor.data<float>()[0], 0.f);
  EXPECT_EQ((*outputs)[1].name, "Y");
  EXPECT_EQ((*outputs)[1].tensor.data<float>()[3], 3.f);
  auto values = session->runValues({{"X", Value(kInputs[0].tensor)}}, options);
  ASSERT_TRUE(values.isOk()) << values.status().toString();
  ASSERT_EQ(values->size(), 2u);
  EXPECT_EQ((*values)[0].name, "W");
  // No names: every output, in declaration order, as run() without options.
  auto all = session->run(kInputs, RunOptions());
  ASSERT_TRUE(all.isOk());
  ASSERT_EQ(all->size(), 3u);
  EXPECT_EQ((*all)[1].name, "Z");
}

TEST(RunOptions, UnknownOutputNameIsInvalidArgumentNamingIt) {
  auto session = createSession(threeOutputs());
  ASSERT_TRUE(session);
  RunOptions options;
  options.setOutputNames({"Y", "no_such_output"});
  auto outputs = session->run(kInputs, options);
  ASSERT_EQ(outputs.status().code(), StatusCode::INVALID_ARGUMENT);
  EXPECT_NE(outputs.status().message().find("'no_such_output'"), std::string::npos) << outputs.status().message();
  EXPECT_TRUE(session->run(kInputs).isOk());
}

TEST(RunOptions, TerminateCancelsOnlyRunsWithThoseOptions) {
  auto session = createSession(threeOutputs());
  ASSERT_TRUE(session);
  RunOptions stopped;
  stopped.setTerminate();
  EXPECT_TRUE(stopped.terminateRequested());
  EXPECT_EQ(session->run(kInputs, stopped).status().code(), StatusCode::CANCELLED);
  EXPECT_EQ(session->runValues({{"X", Value(kInputs[0].tensor)}}, stopped).status().code(), StatusCode::CANCELLED);
  // The session stays usable: other options, and the same options once the flag is cleared.
  EXPECT_TRUE(session->run(kInputs).isOk());
  EXPECT_TRUE(session->run(kInputs, RunOptions()).isOk());
  stopped.unsetTerminate();
  auto again = session->run(kInputs, stopped);
  ASSERT_TRUE(again.isOk()) << again.status().toString();
  EXPECT_EQ((*again)[0].tensor.data<float>()[0], 0.f);
}

TEST(RunOptions, TerminateFromAnotherThreadStopsARunningInference) {
  constexpr int64_t kIterations = 20'000'000;  // seconds of work: the run must end long before
  auto session = createSession(longLoop(kIterations));
  ASSERT_TRUE(session);
  const std::vector<NamedTensor> inputs = {{"X", Tensor::fromVector<float>({1}, {0})}};
  RunOptions options;
  std::thread terminator([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    options.setTerminate();
  });
  const auto start = std::chrono::steady_clock::now();
  auto outputs = session->run(inputs, options);
  terminator.join();
  EXPECT_EQ(outputs.status().code(), StatusCode::CANCELLED) << outputs.status().toString();
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5));
  // The next run is whole (a short loop, to keep the test quick).
  auto shortSession = createSession(longLoop(3));
  ASSERT_TRUE(shortSession);
  auto done = shortSession->run(inputs);
  ASSERT_TRUE(done.isOk()) << done.status().toString();
  EXPECT_EQ((*done)[0].tensor.data<float>()[0], 3.f);
}

TEST(RunOptions, SessionStaysUsableAfterATerminatedRun) {
  auto session = createSession(longLoop(4));
  ASSERT_TRUE(session);
  const std::vector<NamedTensor> inputs = {{"X", Tensor::fromVector<float>({1}, {1})}};
  RunOptions stopped;
  stopped.setTerminate();
  EXPECT_EQ(session->run(inputs, stopped).status().code(), StatusCode::CANCELLED);
  auto outputs = session->run(inputs);
  ASSERT_TRUE(outputs.isOk()) << outputs.status().toString();
  EXPECT_EQ((*outputs)[0].tensor.data<float>()[0], 5.f);
}

TEST(RunOptions, SharedCancellationTokenTerminates) {
  auto session = createSession(threeOutputs());
  ASSERT_TRUE(session);
  auto token = std::make_shared<CancellationToken>();
  RunOptions options;
  options.setCancellationToken(token);
  EXPECT_TRUE(session->run(kInputs, options).isOk());
  token->cancel();
  EXPECT_TRUE(options.terminateRequested());
  EXPECT_EQ(session->run(kInputs, options).status().code(), StatusCode::CANCELLED);
  options.setCancellationToken(nullptr);  // a fresh flag of its own
  EXPECT_TRUE(session->run(kInputs, options).isOk());
}

TEST(RunOptions, TagNamesTheRunInLogLinesAndErrors) {
  auto session = createSession(threeOutputs());
  ASSERT_TRUE(session);
  std::vector<std::string> lines;
  setLogSink(LogLevel::Debug, [&](LogLevel, std::string_view line) { lines.emplace_back(line); });
  RunOptions options;
  options.setTag("frame-42");
  EXPECT_TRUE(session->run(kInputs, options).isOk());
  options.setTerminate();
  auto cancelled = session->run(kInputs, options);
  setLogSink(LogLevel::Warn, nullptr);
  EXPECT_EQ(cancelled.status().code(), StatusCode::CANCELLED);
  EXPECT_NE(cancelled.status().message().find("run 'frame-42'"), std::string::npos) << cancelled.status().message();
  bool tagged = false;
  for (const auto& line : lines) tagged |= line.find("run 'frame-42'") != std::string::npos;
  EXPECT_TRUE(tagged) << "no log line names the run tag";
}

// The bug: a SessionOptions token cancelled after creation cancelled every later run of the session.
TEST(RunOptions, TokenCancelledAfterCreationDoesNotCancelRuns) {
  SessionOptions options;
  options.progress.cancellation = std::make_shared<CancellationToken>();
  auto session = createSession(threeOutputs(), options);
  ASSERT_TRUE(session);
  options.progress.cancellation->cancel();
  auto outputs = session->run(kInputs);
  ASSERT_TRUE(outputs.isOk()) << outputs.status().toString();
  EXPECT_EQ((*outputs)[0].tensor.data<float>()[0], 0.f);
}

// The same, with the token cancelled during creation, after its last cancellation check (the final progress event).
TEST(RunOptions, TokenCancelledDuringCreationDoesNotCancelRuns) {
  SessionOptions options;
  auto token = std::make_shared<CancellationToken>();
  options.progress.cancellation = token;
  options.progress.onProgress = [token](const ProgressEvent& event) {
    if (event.stage == "compile" && event.done == event.total) token->cancel();
  };
  auto session = createSession(threeOutputs(), options);
  ASSERT_TRUE(session);
  ASSERT_TRUE(token->isCancelled()) << "the final compile event never came";
  auto outputs = session->runValues({{"X", Value(kInputs[0].tensor)}});
  ASSERT_TRUE(outputs.isOk()) << outputs.status().toString();
}

}  // namespace
}  // namespace kiln
