// Merging ctx models, at the engine level: the plan (planMerge) lists CPU-fallback nodes and initializers as well
// as EPContext nodes, and refuses conflicts and bad connections with messages that name the engine's options; a
// merged model with a connection runs, and gives what the two source models give on the CPU EP in sequence.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <set>

#include "kiln/compiler.h"
#include "kiln/epcontext.h"
#include "kiln/partition_report.h"
#include "kiln/session.h"
#include "model_builder.h"
#include "test_models.h"
#include "gtest_requirements.h"

namespace kiln::testing {
namespace {

namespace fs = std::filesystem;

constexpr int64_t kRows = 2, kCols = 4;

std::vector<float> ramp(float start, float step) {
  std::vector<float> values(kRows * kCols);
  for (size_t i = 0; i < values.size(); ++i) values[i] = start + step * static_cast<float>(i);
  return values;
}

// z = Mod(Relu(x + W), M): Add and Relu on the Vulkan EP, Mod (no Vulkan kernel) a CPU-fallback node reading the
// initializer M that stays in the ctx model.
std::string writeFirstModel(const std::string& path) {
  ModelBuilder m(13);
  m.input("x", {kRows, kCols}).output("z", {kRows, kCols});
  m.initializer("W", {kRows, kCols}, ramp(0.25f, 0.5f));
  m.initializer("M", {kRows, kCols}, ramp(1.5f, 0.125f));
  m.node("Add", {"x", "W"}, {"sum"}, "add");
  m.node("Relu", {"sum"}, {"relu"}, "relu");
  attrInt(m.node("Mod", {"relu", "M"}, {"z"}, "mod"), "fmod", 1);
  return m.save(path);
}

// y = Sigmoid(h * V).
std::string writeSecondModel(const std::string& path) {
  ModelBuilder m(13);
  m.input("h", {kRows, kCols}).output("y", {kRows, kCols});
  m.initializer("V", {kRows, kCols}, ramp(-1.0f, 0.25f));
  m.node("Mul", {"h", "V"}, {"scaled"}, "mul");
  m.node("Sigmoid", {"scaled"}, {"y"}, "sigmoid");
  return m.save(path);
}

SessionOptions cpuOptions() {
  SessionOptions options;
  EXPECT_TRUE(options.addConfigEntry("kiln.execution_providers", "cpu").isOk());
  return options;
}

Tensor runOne(const std::string& model, const SessionOptions& options, const std::string& input, const Tensor& value,
              const std::string& output) {
  auto session = Session::create(model, options);
  EXPECT_TRUE(session.isOk()) << model << ": " << session.status().toString();
  if (!session.isOk()) return Tensor();
  auto outputs = (*session)->run({{input, value}});
  EXPECT_TRUE(outputs.isOk()) << model << ": " << outputs.status().toString();
  if (!outputs.isOk()) return Tensor();
  for (auto& out : *outputs) {
    if (out.name == output) return out.tensor;
  }
  ADD_FAILURE() << model << " has no output " << output;
  return Tensor();
}

class EpContextMerge : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!vulkanAvailable()) GTEST_SKIP() << "no Vulkan device on this machine";
    fs::create_directories(dir_.path() / "a");
    fs::create_directories(dir_.path() / "b");
    firstSource_ = writeFirstModel(dir_.file("a/first.onnx"));
    secondSource_ = writeSecondModel(dir_.file("b/second.onnx"));
    firstCtx_ = compile(firstSource_);
    secondCtx_ = compile(secondSource_);
  }

  static std::string compile(const std::string& source) {
    ModelCompilationOptions options(vulkanOptions());
    options.setInputModelPath(source);
    auto compiled = compileModel(options);
    EXPECT_TRUE(compiled.isOk()) << compiled.status().toString();
    EXPECT_GE(compiled.isOk() ? compiled->epContextNodes : 0, 1);
    return compiled.isOk() ? compiled->outputModelPath : std::string();
  }

  TempDir dir_;
  std::string firstSource_, secondSource_, firstCtx_, secondCtx_;
};

TEST_F(EpContextMerge, PlanListsEveryNodeInitializerAndConnection) {
  auto plan = planMerge({{firstCtx_, "a_"}, {secondCtx_, "b_"}}, {{"a_z", "b_h"}});
  ASSERT_TRUE(plan.isOk()) << plan.status().toString();
  EXPECT_TRUE(plan->ok()) << plan->status().toString();
  ASSERT_EQ(plan->inputs.size(), 1u);  // b_h is fed by the connection
  EXPECT_EQ(plan->inputs[0].value.name, "a_x");
  ASSERT_EQ(plan->outputs.size(), 2u);
  const auto mod = std::find_if(plan->nodes.begin(), plan->nodes.end(), [](const auto& n) { return n.name == "a_mod"; });
  ASSERT_NE(mod, plan->nodes.end());  // the CPU-fallback node, prefixed
  EXPECT_FALSE(mod->epContext);
  EXPECT_EQ(mod->opType, "Mod");
  EXPECT_EQ(mod->inputs.back(), "a_M");
  EXPECT_EQ(std::count_if(plan->nodes.begin(), plan->nodes.end(), [](const auto& n) { return n.epContext; }), 2);
  EXPECT_TRUE(std::any_of(plan->initializers.begin(), plan->initializers.end(),
                          [](const auto& i) { return i.name == "a_M" && i.input == 0; }));
  ASSERT_EQ(plan->graphs.size(), 2u);
  EXPECT_EQ(plan->graphs[0].name.rfind("a_", 0), 0u);
  ASSERT_EQ(plan->connections.size(), 1u);
  EXPECT_TRUE(plan->connections[0].problem.empty());
}

TEST_F(EpContextMerge, ConflictsAndBadConnectionsNameEngineOptions) {
  auto same = planMerge({{firstCtx_, "p_"}, {firstCtx_, "p_"}});
  ASSERT_TRUE(same.isOk()) << same.status().toString();
  EXPECT_FALSE(same->ok());
  const auto has = [&](const std::string& fragment) {
    return std::any_of(same->conflicts.begin(), same->conflicts.end(),
                       [&](const std::string& c) { return c.find(fragment) != std::string::npos; });
  };
  EXPECT_TRUE(has("node 'p_mod' (input 2 and input 1)"));  // a CPU-fallback node
  EXPECT_TRUE(has("value 'p_M'"));                         // an initializer only the CPU-fallback node reads
  EXPECT_TRUE(has("graph 'p_"));

  auto merged = mergeEpContextModels({{firstCtx_, "p_"}, {firstCtx_, "p_"}}, dir_.file("out/pp_ctx.onnx"));
  ASSERT_FALSE(merged.isOk());
  EXPECT_EQ(merged.status().code(), StatusCode::INVALID_ARGUMENT);
  EXPECT_NE(merged.status().message().find("give each input its own prefix"), std::string::npos)
      << merged.status().toString();
  EXPECT_EQ(merged.status().message().find("--"), std::string::npos) << merged.status().toString();
  EXPECT_FALSE(fs::exists(dir_.file("out")));

  merged = mergeEpContextModels({{firstCtx_, "a_"}, {secondCtx_, "b_"}}, dir_.file("out/ab_ctx.onnx"),
                                {{"a_z", "b_h"}, {"a_z", "b_h"}, {"b_y", "b_h"}, {"a_nothing", "b_h"}});
  ASSERT_FALSE(merged.isOk());
  const std::string message = merged.status().message();
  EXPECT_NE(message.find("connection a_z -> b_h: 'b_h' is already fed by another connection"), std::string::npos) << message;
  EXPECT_NE(message.find("connection b_y -> b_h: both belong to the same input model"), std::string::npos) << message;
  EXPECT_NE(message.find("'a_nothing' is not an output of any input model"), std::string::npos) << message;
  EXPECT_EQ(message.find("--connect"), std::string::npos) << message;
  EXPECT_FALSE(fs::exists(dir_.file("out")));
}

TEST_F(EpContextMerge, ConnectedMergeRunsLikeTheSourcesInSequence) {
  const std::string mergedPath = dir_.file("merged/ab_ctx.onnx");
  auto merged = mergeEpContextModels({{firstCtx_, "a_"}, {secondCtx_, "b_"}}, mergedPath, {{"a_z", "b_h"}});
  ASSERT_TRUE(merged.isOk()) << merged.status().toString();
  EXPECT_EQ(merged->epContextNodes, 2);

  const Tensor x = Tensor::fromVector<float>({kRows, kCols}, ramp(-2.0f, 0.75f));
  const Tensor z = runOne(firstSource_, cpuOptions(), "x", x, "z");
  const Tensor expected = runOne(secondSource_, cpuOptions(), "h", z, "y");
  const Tensor actual = runOne(mergedPath, vulkanOptions(), "a_x", x, "b_y");
  ASSERT_EQ(actual.numel(), expected.numel());
  ASSERT_EQ(actual.numel(), kRows * kCols);
  for (int64_t i = 0; i < actual.numel(); ++i) {
    EXPECT_NEAR(actual.data<float>()[i], expected.data<float>()[i], 1e-5f) << i;
  }

  // The merged model's report: both EPContext nodes, the CPU-fallback Mod and the connecting Identity on the CPU EP.
  auto report = analyzePartitions(mergedPath, vulkanOptions());
  ASSERT_TRUE(report.isOk()) << report.status().toString();
  EXPECT_EQ(compiledPartitionCount(*report), 2);
  const auto perEp = nodesPerExecutionProvider(*report);
  EXPECT_EQ(perEp.at("VulkanExecutionProvider"), 2);
  EXPECT_EQ(perEp.at("CPUExecutionProvider"), 2);
}

// The merged binary's pipeline_users section names each input's nodes with that input's prefix (the merge renames
// the partitions' graphs, and the section is written from them), and every pipeline keeps its users.
TEST_F(EpContextMerge, PipelineUsersCarryThePrefixes) {
  const auto first = inspectEpContextModel(firstCtx_);
  ASSERT_TRUE(first.isOk()) << first.status().toString();
  ASSERT_EQ(first->binaries.size(), 1u);
  std::set<std::string> unprefixed;
  for (const auto& p : first->binaries.begin()->second.pipelines) {
    for (const auto& n : p.nodes) unprefixed.insert(n.node);
  }
  ASSERT_FALSE(unprefixed.empty());

  auto merged = mergeEpContextModels({{firstCtx_, "a_"}, {secondCtx_, "b_"}}, dir_.file("users/ab_ctx.onnx"));
  ASSERT_TRUE(merged.isOk()) << merged.status().toString();
  const ContextBinaryInfo& info = merged->binary;
  EXPECT_TRUE(info.pipelineUsersRecorded);
  std::set<std::string> fromFirst;
  for (const auto& p : info.pipelines) {
    EXPECT_FALSE(p.nodes.empty()) << p.key;
    for (const auto& n : p.nodes) {
      const std::string prefix = n.graph.substr(0, 2);
      EXPECT_TRUE(prefix == "a_" || prefix == "b_") << n.graph;
      EXPECT_EQ(n.node.rfind(prefix, 0), 0u) << n.graph << "/" << n.node;
      if (prefix == "a_") fromFirst.insert(n.node.substr(2));
    }
  }
  EXPECT_EQ(fromFirst, unprefixed);
}

}  // namespace
}  // namespace kiln::testing
