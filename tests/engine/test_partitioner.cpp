// The graph partitioner: maximal acyclic grouping, recursion into If bodies, the fallback switch, the partition
// report, and mixed graphs (a fake EP beside the CPU EP) computing exactly what the CPU EP alone computes.
#include <gtest/gtest.h>

#include <thread>

#include "fake_execution_provider.h"
#include "kiln/session.h"
#include "model_builder.h"
#include "partition/partition_grouping.h"
#include "session/inference_session.h"
#include "test_models.h"

namespace kiln {
namespace {

using testing::FakeExecutionProvider;
using testing::ModelBuilder;
using testing::TempDir;

std::vector<std::unique_ptr<ExecutionProvider>> fakeThenCpu(std::set<std::string> ops,
                                                            FakeExecutionProvider** fake = nullptr) {
  std::vector<std::unique_ptr<ExecutionProvider>> providers;
  auto ep = std::make_unique<FakeExecutionProvider>(std::move(ops));
  if (fake) *fake = ep.get();
  providers.push_back(std::move(ep));
  providers.push_back(std::make_unique<cpu::CpuExecutionProvider>());
  return providers;
}

// X → relu_a(fake) → sigmoid_b(cpu) → relu_c(fake) ─┐
// X → neg_d(fake) ────────────────────────────────── add_y(cpu) → Y
std::string saveMixedModel(const TempDir& dir) {
  ModelBuilder model;
  model.input("X", {2, 3}).output("Y", {2, 3});
  model.node("Relu", {"X"}, {"a"}, "relu_a");
  model.node("Sigmoid", {"a"}, {"b"}, "sigmoid_b");
  model.node("Relu", {"b"}, {"c"}, "relu_c");
  model.node("Neg", {"X"}, {"d"}, "neg_d");
  model.node("Add", {"c", "d"}, {"Y"}, "add_y");
  return model.save(dir.file("mixed.onnx"));
}

// If(cond) 'branch': then = Neg(Mul(Relu(X), k)) with k a Constant; else = Sigmoid(X).
std::string saveIfModel(const TempDir& dir) {
  testing::GraphBuilder thenBranch("then"), elseBranch("else");
  thenBranch.output("then_out");
  thenBranch.node("Relu", {"X"}, {"t1"}, "then_relu");
  thenBranch.constant("k", {3}, {0.5f, -1.f, 2.f}, "then_k");
  thenBranch.node("Mul", {"t1", "k"}, {"t2"}, "then_mul");
  thenBranch.node("Neg", {"t2"}, {"then_out"}, "then_neg");
  elseBranch.output("else_out");
  elseBranch.node("Sigmoid", {"X"}, {"else_out"}, "else_sig");
  ModelBuilder model;
  model.input("X", {2, 3}).input("cond", {}, onnx::TensorProto::BOOL).output("Y");
  auto& branch = model.node("If", {"cond"}, {"Y"}, "branch");
  testing::attrGraph(branch, "then_branch", thenBranch.proto());
  testing::attrGraph(branch, "else_branch", elseBranch.proto());
  return model.save(dir.file("if.onnx"));
}

const GraphPartitionReport& graphAt(const PartitionReport& report, const std::string& path) {
  for (const auto& graph : report.graphs) {
    if (graph.path == path) return graph;
  }
  static const GraphPartitionReport none;
  ADD_FAILURE() << "no graph '" << path << "' in the report";
  return none;
}

const NodePlacement& placementOf(const GraphPartitionReport& graph, const std::string& label) {
  for (const auto& node : graph.nodes) {
    if (node.node == label) return node;
  }
  static const NodePlacement none;
  ADD_FAILURE() << "no node " << label << " in graph " << graph.path;
  return none;
}

Tensor sampleInput() { return Tensor::fromVector<float>({2, 3}, {-1.5f, -0.25f, 0.f, 0.5f, 1.f, 3.f}); }

void expectSameOutputs(const std::vector<NamedTensor>& actual, const std::vector<NamedTensor>& expected) {
  ASSERT_EQ(actual.size(), expected.size());
  for (size_t i = 0; i < actual.size(); ++i) {
    ASSERT_EQ(actual[i].tensor.shape(), expected[i].tensor.shape());
    for (int64_t e = 0; e < expected[i].tensor.numel(); ++e) {
      EXPECT_EQ(actual[i].tensor.data<float>()[e], expected[i].tensor.data<float>()[e])
          << actual[i].name << "[" << e << "]";
    }
  }
}

Result<std::vector<NamedTensor>> runCpuOnly(const std::string& path, const std::vector<NamedTensor>& inputs) {
  SessionOptions options;
  (void)options.addConfigEntry("kiln.execution_providers", "cpu");
  auto session = Session::create(path, options);
  if (!session.isOk()) return session.status();
  return (*session)->run(inputs);
}

TEST(PartitionGrouping, DoesNotMergeAcrossANodeOfAnotherProvider) {
  // 0:A(f) → 1:B(cpu) → 2:C(f); 3:D(f) independent. A and C together would form a cycle through B.
  const auto groups = groupNodes({{{1}, {2}, {}, {}}, {0, 1, 0, 0}, 1});
  ASSERT_EQ(groups.size(), 2u);
  EXPECT_EQ(groups[0].nodes, (std::vector<size_t>{0, 3}));
  EXPECT_EQ(groups[1].nodes, (std::vector<size_t>{2}));
}

TEST(PartitionGrouping, MergesGroupsThatNoPathSeparates) {
  // Two device EPs (0, 1) and the CPU (2): 0:(p0), 1:(p1) → 2:(p0). Nodes 0 and 2 can share a partition.
  const auto groups = groupNodes({{{}, {2}, {}}, {0, 1, 0}, 2});
  ASSERT_EQ(groups.size(), 2u);
  EXPECT_EQ(groups[0].owner, 0u);
  EXPECT_EQ(groups[0].nodes, (std::vector<size_t>{0, 2}));
  EXPECT_EQ(groups[1].nodes, (std::vector<size_t>{1}));
}

TEST(PartitionGrouping, KeepsADiamondAcyclic) {
  // 0(f) → 1(cpu) → 3(f) and 0 → 2(f) → 3: {0, 2} then {3}; {0, 2, 3} would need node 1 inside and outside.
  const auto groups = groupNodes({{{1, 2}, {3}, {3}, {}}, {0, 1, 0, 0}, 1});
  ASSERT_EQ(groups.size(), 2u);
  EXPECT_EQ(groups[0].nodes, (std::vector<size_t>{0, 2}));
  EXPECT_EQ(groups[1].nodes, (std::vector<size_t>{3}));
}

TEST(Partitioner, FormsMaximalAcyclicPartitionsAndReportsThem) {
  TempDir dir;
  auto report = analyzePartitionsWithProviders(saveMixedModel(dir), {}, fakeThenCpu({"Relu", "Neg"}));
  ASSERT_TRUE(report.isOk()) << report.status().toString();
  EXPECT_EQ(report->executionProviders, (std::vector<std::string>{"FakeExecutionProvider", "CPUExecutionProvider"}));
  const auto& main = graphAt(*report, "main");
  ASSERT_EQ(main.partitions.size(), 4u);
  // Execution order: the independent relu_a and neg_d share fake_0; relu_c cannot join them (through sigmoid_b).
  EXPECT_EQ(main.partitions[0].name, "fake_0");
  EXPECT_TRUE(main.partitions[0].compiled);
  EXPECT_EQ(main.partitions[0].executionProvider, "FakeExecutionProvider");
  EXPECT_EQ(main.partitions[0].nodes, (std::vector<std::string>{"'relu_a' (Relu)", "'neg_d' (Neg)"}));
  EXPECT_EQ(main.partitions[0].inputs, (std::vector<std::string>{"X"}));
  EXPECT_EQ(main.partitions[0].outputs, (std::vector<std::string>{"a", "d"}));
  EXPECT_EQ(main.partitions[1].name, "cpu_0");
  EXPECT_FALSE(main.partitions[1].compiled);
  EXPECT_EQ(main.partitions[1].nodes, (std::vector<std::string>{"'sigmoid_b' (Sigmoid)"}));
  EXPECT_EQ(main.partitions[2].name, "fake_1");
  EXPECT_EQ(main.partitions[2].inputs, (std::vector<std::string>{"b"}));
  EXPECT_EQ(main.partitions[2].outputs, (std::vector<std::string>{"c"}));
  EXPECT_EQ(main.partitions[3].name, "cpu_1");
  EXPECT_EQ(main.partitions[3].outputs, (std::vector<std::string>{"Y"}));

  ASSERT_EQ(main.nodes.size(), 5u);
  const NodePlacement& relu = placementOf(main, "'relu_a' (Relu)");
  EXPECT_EQ(relu.executionProvider, "FakeExecutionProvider");
  EXPECT_TRUE(relu.rejections.empty());
  const NodePlacement& sigmoid = placementOf(main, "'sigmoid_b' (Sigmoid)");
  EXPECT_EQ(sigmoid.opType, "Sigmoid");
  EXPECT_EQ(sigmoid.executionProvider, "CPUExecutionProvider");
  EXPECT_EQ(sigmoid.rejections, (std::vector<std::string>{"FakeExecutionProvider: no fake kernel for Sigmoid"}));
  EXPECT_EQ(nodesPerExecutionProvider(*report),
            (std::map<std::string, int64_t>{{"CPUExecutionProvider", 2}, {"FakeExecutionProvider", 3}}));
  EXPECT_EQ(partitionCount(*report), 4);
  EXPECT_EQ(compiledPartitionCount(*report), 2);
}

TEST(Partitioner, IndependentNodesOfOneEpShareOnePartition) {
  TempDir dir;
  ModelBuilder model;
  model.input("X", {2, 3}).output("Y", {2, 3});
  model.node("Relu", {"X"}, {"a"}, "relu");
  model.node("Neg", {"X"}, {"b"}, "neg");
  model.node("Sigmoid", {"X"}, {"c"}, "sig");
  model.node("Sum", {"a", "b", "c"}, {"Y"}, "sum");
  auto report = analyzePartitionsWithProviders(model.save(dir.file("m.onnx")), {}, fakeThenCpu({"Relu", "Neg"}));
  ASSERT_TRUE(report.isOk()) << report.status().toString();
  EXPECT_EQ(compiledPartitionCount(*report), 1);
}

TEST(Partitioner, MixedGraphComputesWhatTheCpuEpComputes) {
  TempDir dir;
  const std::string path = saveMixedModel(dir);
  FakeExecutionProvider* fake = nullptr;
  auto session = createSessionWithProviders(path, {}, fakeThenCpu({"Relu", "Neg"}, &fake));
  ASSERT_TRUE(session.isOk()) << session.status().toString();
  EXPECT_EQ(fake->compiles, 2);
  EXPECT_EQ(fake->compiledNames, (std::vector<std::string>{"fake_0", "fake_1"}));
  const std::vector<NamedTensor> inputs = {{"X", sampleInput()}};
  auto mixed = (*session)->run(inputs);
  ASSERT_TRUE(mixed.isOk()) << mixed.status().toString();
  auto reference = runCpuOnly(path, inputs);
  ASSERT_TRUE(reference.isOk()) << reference.status().toString();
  expectSameOutputs(*mixed, *reference);
  // The session's summary lists the same partitions as its report.
  ASSERT_EQ((*session)->partitions().size(), 4u);
  EXPECT_EQ((*session)->partitions()[0].name, "fake_0");
  EXPECT_EQ((*session)->partitions()[0].nodeCount, 2);
  EXPECT_EQ((*session)->partitionReport().graphs.size(), 1u);
}

TEST(Partitioner, ConcurrentRunsOnOneSessionAreSafe) {
  TempDir dir;
  const std::string path = saveMixedModel(dir);
  auto session = createSessionWithProviders(path, {}, fakeThenCpu({"Relu", "Neg"}));
  ASSERT_TRUE(session.isOk()) << session.status().toString();
  auto reference = runCpuOnly(path, {{"X", sampleInput()}});
  ASSERT_TRUE(reference.isOk());
  std::atomic<int> mismatches{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&] {
      for (int r = 0; r < 25; ++r) {
        auto outputs = (*session)->run({{"X", sampleInput()}});
        if (!outputs.isOk() || (*outputs)[0].tensor.data<float>()[5] != (*reference)[0].tensor.data<float>()[5]) {
          ++mismatches;
        }
      }
    });
  }
  for (auto& thread : threads) thread.join();
  EXPECT_EQ(mismatches.load(), 0);
}

TEST(Partitioner, RecursesIntoIfBodies) {
  TempDir dir;
  const std::string path = saveIfModel(dir);
  FakeExecutionProvider* fake = nullptr;
  auto session = createSessionWithProviders(path, {}, fakeThenCpu({"Relu", "Neg"}, &fake));
  ASSERT_TRUE(session.isOk()) << session.status().toString();
  const PartitionReport& report = (*session)->partitionReport();
  ASSERT_EQ(report.graphs.size(), 3u);
  EXPECT_EQ(report.graphs[0].path, "main");
  const auto& main = graphAt(report, "main");
  ASSERT_EQ(main.nodes.size(), 1u);
  EXPECT_EQ(main.nodes[0].executionProvider, "CPUExecutionProvider");
  ASSERT_EQ(main.nodes[0].rejections.size(), 1u);
  EXPECT_NE(main.nodes[0].rejections[0].find("control-flow node"), std::string::npos);

  const auto& thenBranch = graphAt(report, "main/branch.then_branch");
  ASSERT_EQ(thenBranch.partitions.size(), 3u);
  EXPECT_EQ(thenBranch.partitions[0].name, "fake_0");
  EXPECT_EQ(thenBranch.partitions[0].inputs, (std::vector<std::string>{"X"}));  // read from the enclosing graph
  EXPECT_EQ(thenBranch.partitions[1].nodes, (std::vector<std::string>{"'then_mul' (Mul)"}));
  EXPECT_EQ(thenBranch.partitions[1].inputs, (std::vector<std::string>{"t1"}));  // k is a folded constant
  EXPECT_EQ(thenBranch.partitions[2].name, "fake_1");
  EXPECT_EQ(thenBranch.partitions[2].outputs, (std::vector<std::string>{"then_out"}));
  // The Constant is listed as folded, and as no partition's node.
  ASSERT_EQ(thenBranch.foldedConstants.size(), 1u);
  EXPECT_EQ(thenBranch.foldedConstants[0].node, "'then_k' (Constant)");
  EXPECT_EQ(thenBranch.foldedConstants[0].output, "k");
  EXPECT_EQ(thenBranch.nodes.size(), 3u);
  EXPECT_EQ(foldedConstantCount(report), 1);
  const auto& elseBranch = graphAt(report, "main/branch.else_branch");
  ASSERT_EQ(elseBranch.partitions.size(), 1u);
  EXPECT_EQ(elseBranch.partitions[0].executionProvider, "CPUExecutionProvider");
  EXPECT_EQ(fake->compiles, 2);

  for (bool cond : {true, false}) {
    const std::vector<NamedTensor> inputs = {{"X", sampleInput()}, {"cond", Tensor::fromVector<bool>({}, {cond})}};
    auto mixed = (*session)->run(inputs);
    ASSERT_TRUE(mixed.isOk()) << mixed.status().toString();
    auto reference = runCpuOnly(path, inputs);
    ASSERT_TRUE(reference.isOk()) << reference.status().toString();
    expectSameOutputs(*mixed, *reference);
  }
}

TEST(Partitioner, DisableCpuFallbackNamesEveryFallbackNodeWithReasons) {
  TempDir dir;
  SessionOptions options;
  ASSERT_TRUE(options.addConfigEntry("session.disable_cpu_ep_fallback", "1").isOk());
  auto session = createSessionWithProviders(saveMixedModel(dir), options, fakeThenCpu({"Relu", "Neg"}));
  ASSERT_EQ(session.status().code(), StatusCode::FAIL);
  const std::string& message = session.status().message();
  EXPECT_NE(message.find("session.disable_cpu_ep_fallback=1"), std::string::npos) << message;
  EXPECT_NE(message.find("main: 'sigmoid_b' (Sigmoid): FakeExecutionProvider: no fake kernel for Sigmoid"),
            std::string::npos)
      << message;
  EXPECT_NE(message.find("'add_y' (Add)"), std::string::npos) << message;

  // Nodes inside bodies count too, and so does the control-flow node itself.
  auto ifSession = createSessionWithProviders(saveIfModel(dir), options, fakeThenCpu({"Relu", "Neg"}));
  ASSERT_EQ(ifSession.status().code(), StatusCode::FAIL);
  EXPECT_NE(ifSession.status().message().find("main/branch.then_branch: 'then_mul' (Mul)"), std::string::npos)
      << ifSession.status().message();
  EXPECT_NE(ifSession.status().message().find("'branch' (If): FakeExecutionProvider: control-flow node"),
            std::string::npos);

  // Everything on the fake EP: fine.
  EXPECT_TRUE(createSessionWithProviders(saveMixedModel(dir), options,
                                         fakeThenCpu({"Relu", "Neg", "Sigmoid", "Add"}))
                  .isOk());
}

TEST(Partitioner, DisableCpuFallbackListsTenNodesThenCountsTheRest) {
  TempDir dir;
  ModelBuilder model;
  model.input("X", {2}).output("Y", {2});
  std::string previous = "X";
  for (int i = 0; i < 12; ++i) {
    const std::string out = i == 11 ? "Y" : "s" + std::to_string(i);
    model.node("Sigmoid", {previous}, {out}, "sig" + std::to_string(i));
    previous = out;
  }
  SessionOptions options;
  ASSERT_TRUE(options.addConfigEntry("session.disable_cpu_ep_fallback", "1").isOk());
  auto report = analyzePartitionsWithProviders(model.save(dir.file("chain.onnx")), options, fakeThenCpu({"Relu"}));
  ASSERT_EQ(report.status().code(), StatusCode::FAIL);
  EXPECT_NE(report.status().message().find("'sig9' (Sigmoid)"), std::string::npos);
  EXPECT_EQ(report.status().message().find("'sig10' (Sigmoid)"), std::string::npos);
  EXPECT_NE(report.status().message().find("and 2 more"), std::string::npos) << report.status().message();
}

TEST(Partitioner, NodeNoEpTakesIsNotImplementedNamingIt) {
  TempDir dir;
  ModelBuilder model;
  model.opsetImport("com.example", 1);
  model.input("X", {2}).output("Y", {2});
  model.node("Frobnicate", {"X"}, {"Y"}, "frob").set_domain("com.example");
  auto session = createSessionWithProviders(model.save(dir.file("frob.onnx")), {}, fakeThenCpu({"Relu"}));
  ASSERT_EQ(session.status().code(), StatusCode::NOT_IMPLEMENTED);
  EXPECT_NE(session.status().message().find("main: 'frob' (Frobnicate)"), std::string::npos)
      << session.status().message();
  EXPECT_NE(session.status().message().find("FakeExecutionProvider: no fake kernel for Frobnicate"), std::string::npos);
}

TEST(Partitioner, CpuOnlySessionReportsCpuRunsInEveryGraph) {
  TempDir dir;
  SessionOptions options;
  ASSERT_TRUE(options.addConfigEntry("kiln.execution_providers", "cpu").isOk());
  auto report = analyzePartitions(saveIfModel(dir), options);
  ASSERT_TRUE(report.isOk()) << report.status().toString();
  EXPECT_EQ(report->executionProviders, (std::vector<std::string>{"CPUExecutionProvider"}));
  EXPECT_EQ(report->optimizationLevel, "basic");
  EXPECT_EQ(compiledPartitionCount(*report), 0);
  EXPECT_EQ(partitionCount(*report), 3);  // one run per graph
  EXPECT_EQ(graphAt(*report, "main").partitions[0].name, "cpu_0");
}

}  // namespace
}  // namespace kiln
