// The generic optimizer: Constant nodes to initializers (bodies included), constant folding, dead-node removal,
// the optimization level, and what must never be folded.
#include <gtest/gtest.h>

#include <algorithm>

#include "kiln/session.h"
#include "model_builder.h"
#include "onnx/model_loader.h"
#include "ep/cpu/host_evaluator.h"
#include "optimizer/optimizer.h"
#include "test_models.h"

namespace kiln {
namespace {

using optimizer::OptimizationLevel;
using testing::ModelBuilder;
using testing::TempDir;

ir::Model toIr(const ModelBuilder& builder) {
  auto model = onnx_io::modelFromProto(builder.build());
  EXPECT_TRUE(model.isOk()) << model.status().toString();
  return std::move(model).value();
}

std::vector<std::string> opTypes(const ir::Graph& graph) {
  std::vector<std::string> ops;
  for (const auto& node : graph.nodes) ops.push_back(node.opType);
  return ops;
}

TEST(Optimizer, ConstantNodesBecomeInitializersAlsoInBodies) {
  testing::GraphBuilder body("then");
  body.output("t");
  body.constant("k", {2}, {3.f, 4.f}, "body_k");
  body.node("Mul", {"X", "k"}, {"t"}, "body_mul");
  testing::GraphBuilder other("else");
  other.output("e");
  other.node("Identity", {"X"}, {"e"}, "other_id");
  ModelBuilder model;
  model.input("X", {2}).input("cond", {}, onnx::TensorProto::BOOL).output("Y").output("Z", {2});
  model.constant("c", {2}, {1.f, 2.f}, "top_c");
  model.node("Add", {"X", "c"}, {"Z"}, "add");
  auto& ifNode = model.node("If", {"cond"}, {"Y"}, "branch");
  testing::attrGraph(ifNode, "then_branch", body.proto());
  testing::attrGraph(ifNode, "else_branch", other.proto());

  ir::Model ir = toIr(model);
  auto result = optimizer::optimizeModel(ir, OptimizationLevel::BASIC, *cpu::hostEvaluator());
  ASSERT_TRUE(result.isOk());
  EXPECT_EQ(result->passesRun, 3);
  ASSERT_EQ(ir.graph->nodes.size(), 2u);  // Add and If (the loader's topological order puts If first)
  ASSERT_TRUE(ir.graph->isInitializer("c"));
  EXPECT_EQ(ir.graph->initializers.at("c").data<float>()[1], 2.f);
  auto branch = std::find_if(ir.graph->nodes.begin(), ir.graph->nodes.end(),
                             [](const ir::Node& node) { return node.opType == "If"; });
  ASSERT_NE(branch, ir.graph->nodes.end());
  const ir::Graph* thenBranch = branch->subgraph("then_branch");
  ASSERT_NE(thenBranch, nullptr);
  EXPECT_EQ(opTypes(*thenBranch), (std::vector<std::string>{"Mul"}));
  EXPECT_TRUE(thenBranch->isInitializer("k"));
  ASSERT_EQ(result->foldedConstants.size(), 2u);
  // Bodies are visited first.
  EXPECT_EQ(result->foldedConstants[0].graphPath, "main/branch.then_branch");
  EXPECT_EQ(result->foldedConstants[0].node, "'body_k' (Constant)");
  EXPECT_EQ(result->foldedConstants[0].output, "k");
  EXPECT_EQ(result->foldedConstants[0].graph, thenBranch);
  EXPECT_EQ(result->foldedConstants[1].graphPath, "main");
}

TEST(Optimizer, FoldsConstantSubexpressions) {
  ModelBuilder model;
  model.input("X", {3}).output("Y", {3});
  model.constant("c", {3}, {1.f, 2.f, 3.f}, "c");
  model.initializer("w", {3}, {10.f, 20.f, 30.f});
  model.node("Add", {"c", "w"}, {"s"}, "add_consts");
  model.node("Neg", {"s"}, {"n"}, "neg_consts");
  model.node("Mul", {"X", "n"}, {"Y"}, "mul");
  ir::Model ir = toIr(model);
  auto result = optimizer::optimizeModel(ir, OptimizationLevel::BASIC, *cpu::hostEvaluator());
  ASSERT_TRUE(result.isOk());
  EXPECT_EQ(result->nodesFolded, 2);
  EXPECT_EQ(opTypes(*ir.graph), (std::vector<std::string>{"Mul"}));
  ASSERT_TRUE(ir.graph->isInitializer("n"));
  EXPECT_EQ(ir.graph->initializers.at("n").data<float>()[2], -33.f);
  // Initializers only the folded nodes read are gone.
  EXPECT_FALSE(ir.graph->isInitializer("w"));
  EXPECT_FALSE(ir.graph->isInitializer("s"));
}

// A body that reshapes an enclosing graph's constant (Silero VAD slices its LSTM weights inside an If branch) folds
// too; a Loop body's own input of the same name shadows the outer constant and keeps its node.
TEST(Optimizer, FoldsBodyNodesThatReadOuterConstants) {
  testing::GraphBuilder thenBody("then");
  thenBody.output("t");
  thenBody.node("Neg", {"w"}, {"neg_w"}, "then_neg");
  thenBody.node("Mul", {"X", "neg_w"}, {"t"}, "then_mul");
  testing::GraphBuilder elseBody("else");
  elseBody.output("e");
  elseBody.node("Identity", {"X"}, {"e"}, "else_id");
  testing::GraphBuilder loopBody("loop");
  loopBody.input("iter", {}, onnx::TensorProto::INT64).input("cond_in", {}, onnx::TensorProto::BOOL).input("w", {2});
  loopBody.output("cond_out", {}, onnx::TensorProto::BOOL).output("w_out", {2});
  loopBody.node("Identity", {"cond_in"}, {"cond_out"}, "loop_cond");
  loopBody.node("Neg", {"w"}, {"w_out"}, "loop_neg");  // reads its own input, not the outer constant
  ModelBuilder model;
  model.input("X", {2}).input("cond", {}, onnx::TensorProto::BOOL).output("Y").output("L", {2});
  model.initializer("w", {2}, {3.f, 4.f});
  onnx::TensorProto trips;
  trips.set_data_type(onnx::TensorProto::INT64);
  trips.add_int64_data(2);
  trips.set_name("trips");
  *model.proto().add_initializer() = trips;
  auto& ifNode = model.node("If", {"cond"}, {"Y"}, "branch");
  testing::attrGraph(ifNode, "then_branch", thenBody.proto());
  testing::attrGraph(ifNode, "else_branch", elseBody.proto());
  auto& loop = model.node("Loop", {"trips", "cond", "w"}, {"L"}, "loop");
  testing::attrGraph(loop, "body", loopBody.proto());

  ir::Model ir = toIr(model);
  auto result = optimizer::optimizeModel(ir, OptimizationLevel::BASIC, *cpu::hostEvaluator());
  ASSERT_TRUE(result.isOk());
  EXPECT_EQ(result->nodesFolded, 1);
  const ir::Node* branch = nullptr;
  const ir::Node* loopNode = nullptr;
  for (const auto& node : ir.graph->nodes) (node.opType == "If" ? branch : loopNode) = &node;
  ASSERT_TRUE(branch && loopNode);
  const ir::Graph* thenBranch = branch->subgraph("then_branch");
  ASSERT_NE(thenBranch, nullptr);
  EXPECT_EQ(opTypes(*thenBranch), (std::vector<std::string>{"Mul"}));
  ASSERT_TRUE(thenBranch->isInitializer("neg_w"));
  EXPECT_EQ(thenBranch->initializers.at("neg_w").data<float>()[1], -4.f);
  EXPECT_EQ(opTypes(*loopNode->subgraph("body")), (std::vector<std::string>{"Identity", "Neg"}));

  // The folded model still computes the same outputs.
  TempDir dir;
  auto session = Session::create(model.save(dir.file("outer.onnx")));
  ASSERT_TRUE(session.isOk()) << session.status().toString();
  auto out = (*session)->run({{"X", Tensor::fromVector<float>({2}, {1.f, 2.f})},
                              {"cond", Tensor::fromVector<bool>({}, {true})}});
  ASSERT_TRUE(out.isOk()) << out.status().toString();
  EXPECT_EQ((*out)[0].tensor.data<float>()[1], -8.f);
  EXPECT_EQ((*out)[1].tensor.data<float>()[0], 3.f);  // two negations
}

TEST(Optimizer, RemovesDeadNodesAndTheirInitializers) {
  ModelBuilder model;
  model.input("X", {2}).output("Y", {2});
  model.initializer("unused_w", {2}, {1.f, 1.f});
  model.node("Add", {"X", "unused_w"}, {"dead1"}, "dead_add");
  model.node("Relu", {"dead1"}, {"dead2"}, "dead_relu");
  model.node("Neg", {"X"}, {"Y"}, "neg");
  ir::Model ir = toIr(model);
  auto result = optimizer::optimizeModel(ir, OptimizationLevel::BASIC, *cpu::hostEvaluator());
  ASSERT_TRUE(result.isOk());
  EXPECT_EQ(result->nodesRemoved, 2);
  EXPECT_EQ(opTypes(*ir.graph), (std::vector<std::string>{"Neg"}));
  EXPECT_FALSE(ir.graph->isInitializer("unused_w"));
}

TEST(Optimizer, NeverFoldsRandomOpsOverridableInitializersOrHugeResults) {
  ModelBuilder model;
  model.input("X", {2}).input("W", {2}).output("R").output("V", {2}).output("H");
  model.initializer("W", {2}, {1.f, 2.f});  // also a graph input: the caller may feed it
  auto& random = model.node("RandomUniform", {}, {"R"}, "random");
  testing::attrInts(random, "shape", {2});
  model.node("Neg", {"W"}, {"V"}, "neg_w");
  // ConstantOfShape of 2048x1024: over the folding limit.
  onnx::TensorProto shape;
  shape.set_data_type(onnx::TensorProto::INT64);
  shape.add_dims(2);
  shape.add_int64_data(2048);
  shape.add_int64_data(1024);
  shape.set_name("big_shape");
  *model.proto().add_initializer() = shape;
  model.node("ConstantOfShape", {"big_shape"}, {"H"}, "big");
  ir::Model ir = toIr(model);
  auto result = optimizer::optimizeModel(ir, OptimizationLevel::BASIC, *cpu::hostEvaluator());
  ASSERT_TRUE(result.isOk());
  EXPECT_EQ(result->nodesFolded, 0);
  EXPECT_EQ(opTypes(*ir.graph), (std::vector<std::string>{"RandomUniform", "Neg", "ConstantOfShape"}));
}

TEST(Optimizer, LevelNoneChangesNothing) {
  ModelBuilder model;
  model.input("X", {2}).output("Y", {2});
  model.constant("c", {2}, {1.f, 2.f}, "c");
  model.node("Relu", {"X"}, {"dead"}, "dead");
  model.node("Add", {"X", "c"}, {"Y"}, "add");
  ir::Model ir = toIr(model);
  auto result = optimizer::optimizeModel(ir, OptimizationLevel::NONE, *cpu::hostEvaluator());
  ASSERT_TRUE(result.isOk());
  EXPECT_EQ(result->passesRun, 0);
  EXPECT_EQ(opTypes(*ir.graph), (std::vector<std::string>{"Constant", "Relu", "Add"}));
}

TEST(Optimizer, SessionLevelsCountersAndBadValue) {
  TempDir dir;
  ModelBuilder model;
  model.input("X", {2}).output("Y", {2});
  model.constant("c", {2}, {1.f, 2.f}, "c");
  model.node("Add", {"X", "c"}, {"Y"}, "add");
  const std::string path = model.save(dir.file("m.onnx"));
  for (const auto& [level, passes, folded] : {std::tuple{"none", 0, 0}, {"basic", 3, 1}, {"all", 5, 1}}) {
    SessionOptions options;
    ASSERT_TRUE(options.addConfigEntry("kiln.graph_optimization_level", level).isOk());
    auto session = Session::create(path, options);
    ASSERT_TRUE(session.isOk()) << session.status().toString();
    EXPECT_EQ((*session)->counters().optimizer_passes_run, passes) << level;
    EXPECT_EQ(foldedConstantCount((*session)->partitionReport()), folded) << level;
    EXPECT_EQ((*session)->partitionReport().optimizationLevel, level);
    auto outputs = (*session)->run({{"X", Tensor::fromVector<float>({2}, {1.f, 1.f})}});
    ASSERT_TRUE(outputs.isOk()) << outputs.status().toString();
    EXPECT_EQ((*outputs)[0].tensor.data<float>()[1], 3.f) << level;
  }
  SessionOptions bad;
  ASSERT_TRUE(bad.addConfigEntry("kiln.graph_optimization_level", "extreme").isOk());
  auto session = Session::create(path, bad);
  ASSERT_EQ(session.status().code(), StatusCode::INVALID_ARGUMENT);
  EXPECT_NE(session.status().message().find("kiln.graph_optimization_level"), std::string::npos);
}

TEST(Optimizer, FedInitializerOverridesOnlyThatRun) {
  TempDir dir;
  ModelBuilder model;
  model.input("X", {2}).input("W", {2}).output("Y", {2});
  model.initializer("W", {2}, {1.f, 2.f});
  model.node("Add", {"X", "W"}, {"Y"}, "add");
  auto session = Session::create(model.save(dir.file("w.onnx")));
  ASSERT_TRUE(session.isOk()) << session.status().toString();
  const Tensor x = Tensor::fromVector<float>({2}, {0.f, 0.f});
  auto fed = (*session)->run({{"X", x}, {"W", Tensor::fromVector<float>({2}, {5.f, 6.f})}});
  ASSERT_TRUE(fed.isOk()) << fed.status().toString();
  EXPECT_EQ((*fed)[0].tensor.data<float>()[1], 6.f);
  auto plain = (*session)->run({{"X", x}});
  ASSERT_TRUE(plain.isOk());
  EXPECT_EQ((*plain)[0].tensor.data<float>()[1], 2.f);
}

}  // namespace
}  // namespace kiln
