// The exact QDQ drops (ops/qdq_drop.h; the optimizer's level `all` and the Vulkan EP's partition compile):
// DequantizeLinear -> data movement / MaxPool / Concat / Gather / Pad -> QuantizeLinear with equal constant
// per-tensor parameters becomes the op on the 8-bit tensor (a DequantizeLinear read elsewhere stays for its
// other readers); every rule that must not fire (other scales or zero points, per-axis, an op output read
// elsewhere or a graph output, old opsets, a negative scale around MaxPool, a non-zero pad) leaves the chain
// alone. In sessions the model's outputs keep their bytes with the pass on and off, on the
// CPU EP and on Vulkan (lavapipe), with fewer nodes in the partition report.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>

#include "gtest_requirements.h"
#include "kiln/partition_report.h"
#include "kiln/session.h"
#include "model_builder.h"
#include "onnx/model_loader.h"
#include "ops/qdq_drop.h"
#include "ep/cpu/host_evaluator.h"
#include "optimizer/optimizer.h"
#include "test_models.h"

namespace kiln {
namespace {

using testing::ModelBuilder;

// A small graph written by hand: x (uint8 unless said) -> DequantizeLinear -> op -> QuantizeLinear -> y.
struct Chain {
  ir::Graph graph;

  void value(const std::string& name, DataType type) {
    ir::ValueInfo info;
    info.name = name;
    info.dtype = type;
    graph.valueInfo[name] = info;
  }
  ir::Node& node(const std::string& type, std::vector<std::string> in, std::vector<std::string> out) {
    ir::Node n;
    n.opType = type;
    n.inputs = std::move(in);
    n.outputs = std::move(out);
    graph.nodes.push_back(std::move(n));
    return graph.nodes.back();
  }
  static void ints(ir::Node& node, const std::string& key, std::vector<int64_t> values) {
    ir::Attribute attr;
    attr.name = key;
    attr.type = ir::AttributeType::INTS;
    attr.ints = std::move(values);
    node.attributes[key] = attr;
  }
  static void text(ir::Node& node, const std::string& key, const std::string& value) {
    ir::Attribute attr;
    attr.name = key;
    attr.type = ir::AttributeType::STRING;
    attr.s = value;
    node.attributes[key] = attr;
  }

  // q -> DequantizeLinear(s, z) -> d -> `op`(d, extra...) -> m -> QuantizeLinear(s, zBack) -> y.
  explicit Chain(const std::string& op, std::vector<std::string> extra = {},
                 DataType type = DataType::UINT8) {
    value("q", type);
    value("d", DataType::FLOAT);
    value("m", DataType::FLOAT);
    value("y", type);
    graph.initializers["s"] = Tensor::fromVector<float>({}, {0.05f});
    if (type == DataType::UINT8) {
      graph.initializers["z"] = Tensor::fromVector<uint8_t>({}, {7});
      graph.initializers["zBack"] = Tensor::fromVector<uint8_t>({}, {7});
    } else {
      graph.initializers["z"] = Tensor::fromVector<int8_t>({}, {-3});
      graph.initializers["zBack"] = Tensor::fromVector<int8_t>({}, {-3});
    }
    node("DequantizeLinear", {"q", "s", "z"}, {"d"});
    std::vector<std::string> in = {"d"};
    in.insert(in.end(), extra.begin(), extra.end());
    node(op, in, {"m"});
    node("QuantizeLinear", {"m", "s", "zBack"}, {"y"});
  }

  ir::Node& op() { return graph.nodes[1]; }
  int64_t drop(int64_t opset = 13, bool moveBytes = true) {
    ops::QdqDropPolicy policy;
    policy.opset = opset;
    policy.moveBytes = moveBytes;
    return ops::dropExactQdqPairs(graph, policy);
  }
};

TEST(QdqDrop, EachDataMovementOpRunsOnTheQuantizedTensor) {
  const std::vector<std::pair<std::string, std::vector<std::string>>> ops = {
      {"Reshape", {"shape"}},        {"Flatten", {}},           {"Squeeze", {"axes"}},
      {"Unsqueeze", {"axes"}},       {"Identity", {}},          {"Transpose", {}},
      {"Slice", {"starts", "ends"}}, {"Expand", {"shape"}},     {"Tile", {"shape"}},
      {"DepthToSpace", {}},          {"SpaceToDepth", {}},      {"Gather", {"axes"}},
      {"GatherElements", {"axes"}},  {"Resize", {"", "scales"}}};
  for (const auto& [op, extra] : ops) {
    for (DataType type : {DataType::UINT8, DataType::INT8}) {
      Chain c(op, extra, type);
      EXPECT_EQ(c.drop(), 1) << op;
      ASSERT_EQ(c.graph.nodes.size(), 1u) << op;
      EXPECT_EQ(c.graph.nodes[0].opType, op);
      EXPECT_EQ(c.graph.nodes[0].inputs[0], "q") << op;
      EXPECT_EQ(c.graph.nodes[0].outputs, std::vector<std::string>{"y"}) << op;
      EXPECT_EQ(c.graph.valueInfo.count("d") + c.graph.valueInfo.count("m"), 0u)
          << op;  // no stale float types
    }
  }
}

TEST(QdqDrop, MaxPoolNeedsAPositiveScaleOneOrTwoSpatialAxesAndOpset12) {
  auto pool = [](size_t spatial) {
    auto c = std::make_unique<Chain>("MaxPool");
    Chain::ints(c->op(), "kernel_shape", std::vector<int64_t>(spatial, 2));
    return c;
  };
  EXPECT_EQ(pool(2)->drop(12), 1);
  EXPECT_EQ(pool(1)->drop(13), 1);
  EXPECT_EQ(pool(3)->drop(13), 0);  // the Vulkan EP's 8-bit MaxPool takes 1-D and 2-D windows
  EXPECT_EQ(pool(2)->drop(11), 0);  // MaxPool-11 takes no 8-bit data
  auto negative = pool(2);
  negative->graph.initializers["s"] = Tensor::fromVector<float>({}, {-0.05f});  // decreasing: max != max
  EXPECT_EQ(negative->drop(), 0);
  auto indices = pool(2);
  indices->op().outputs.push_back("indices");
  EXPECT_EQ(indices->drop(), 0);
}

TEST(QdqDrop, ResizeOnlyInNearestModeWithoutExtrapolation) {
  Chain linear("Resize", {"", "scales"});
  Chain::text(linear.op(), "mode", "linear");
  EXPECT_EQ(linear.drop(), 0);
  Chain crop("Resize", {"roi", "scales"});
  Chain::text(crop.op(), "coordinate_transformation_mode", "tf_crop_and_resize");
  EXPECT_EQ(crop.drop(), 0);
  Chain nearest("Resize", {"", "scales"});
  Chain::text(nearest.op(), "nearest_mode", "floor");
  EXPECT_EQ(nearest.drop(), 1);
}

TEST(QdqDrop, ConcatNeedsEveryInputDequantizedWithTheSameParameters) {
  auto concat = [](const std::string& secondScale, bool secondFromDq) {
    auto c = std::make_unique<Chain>("Concat", std::vector<std::string>{"d2"});
    c->value("q2", DataType::UINT8);
    c->value("d2", DataType::FLOAT);
    c->graph.initializers["s2"] = Tensor::fromVector<float>({}, {0.07f});
    if (secondFromDq) {
      c->graph.nodes.insert(c->graph.nodes.begin(), ir::Node{});
      c->graph.nodes[0].opType = "DequantizeLinear";
      c->graph.nodes[0].inputs = {"q2", secondScale, "z"};
      c->graph.nodes[0].outputs = {"d2"};
    }
    return c;
  };
  auto same = concat("s", true);
  EXPECT_EQ(same->drop(), 1);
  ASSERT_EQ(same->graph.nodes.size(), 1u);
  EXPECT_EQ(same->graph.nodes[0].inputs, (std::vector<std::string>{"q", "q2"}));
  Chain twice("Concat", {"d"});  // Concat(d, d): both inputs read q; the DequantizeLinear, read twice, stays
  EXPECT_EQ(twice.drop(), 1);
  ASSERT_EQ(twice.graph.nodes.size(), 2u);
  EXPECT_EQ(twice.graph.nodes[1].inputs, (std::vector<std::string>{"q", "q"}));
  EXPECT_EQ(concat("s2", true)->drop(), 0);  // the second input has another scale
  EXPECT_EQ(concat("s", false)->drop(), 0);  // the second input is a float graph value
}

TEST(QdqDrop, PadWithZeroBecomesThePadWithTheZeroPoint) {
  Chain absent("Pad", {"pads"});
  EXPECT_EQ(absent.drop(), 1);
  EXPECT_EQ(absent.graph.nodes[0].inputs, (std::vector<std::string>{"q", "pads", "z"}));
  Chain zero("Pad", {"pads", "zero"});
  zero.graph.initializers["zero"] = Tensor::fromVector<float>({}, {0.0f});
  EXPECT_EQ(zero.drop(), 1);
  EXPECT_EQ(zero.graph.nodes[0].inputs, (std::vector<std::string>{"q", "pads", "z"}));
  Chain noZeroPoint("Pad", {"pads"});  // uint8 with an omitted zero point: a uint8 0 initializer is added
  noZeroPoint.graph.nodes[0].inputs.resize(2);
  noZeroPoint.graph.nodes[2].inputs.resize(2);
  EXPECT_EQ(noZeroPoint.drop(), 1);
  const std::string added = noZeroPoint.graph.nodes[0].inputs[2];
  ASSERT_TRUE(noZeroPoint.graph.isInitializer(added));
  EXPECT_EQ(noZeroPoint.graph.initializers.at(added).dtype(), DataType::UINT8);
  EXPECT_EQ(noZeroPoint.graph.initializers.at(added).data<uint8_t>()[0], 0);
  Chain reflect("Pad", {"pads"});
  Chain::text(reflect.op(), "mode", "reflect");
  EXPECT_EQ(reflect.drop(), 1);
  EXPECT_EQ(reflect.graph.nodes[0].inputs, (std::vector<std::string>{"q", "pads"}));

  Chain other("Pad", {"pads", "one"});
  other.graph.initializers["one"] = Tensor::fromVector<float>({}, {1.0f});
  EXPECT_EQ(other.drop(), 0);  // a pad of 1.0 is no 8-bit value of this scale's grid in general
  Chain old("Pad", {"pads"});
  EXPECT_EQ(old.drop(10), 0);  // Pad-2 takes its value as a float attribute
  Chain unknownOpset("Pad", {"pads"});
  EXPECT_EQ(unknownOpset.drop(0), 0);
}

TEST(QdqDrop, ParametersMustBeEqualPerTensorConstants) {
  Chain otherZero("Transpose");
  otherZero.graph.initializers["zBack"] = Tensor::fromVector<uint8_t>({}, {8});
  EXPECT_EQ(otherZero.drop(), 0);
  Chain otherScale("Transpose");
  otherScale.graph.nodes[2].inputs[1] = "s2";
  otherScale.graph.initializers["s2"] = Tensor::fromVector<float>({}, {0.05000001f});
  EXPECT_EQ(otherScale.drop(), 0);
  Chain perAxis("Transpose");
  perAxis.graph.initializers["s"] = Tensor::fromVector<float>({3}, {0.05f, 0.05f, 0.05f});
  perAxis.graph.initializers["z"] = Tensor::fromVector<uint8_t>({3}, {7, 7, 7});
  perAxis.graph.initializers["zBack"] = Tensor::fromVector<uint8_t>({3}, {7, 7, 7});
  EXPECT_EQ(perAxis.drop(), 0);
  Chain fedScale("Transpose");  // a scale the caller feeds: not a constant
  fedScale.graph.initializers.erase("s");
  fedScale.graph.inputs.push_back({"s", ValueKind::TENSOR, DataType::FLOAT, std::nullopt});
  EXPECT_EQ(fedScale.drop(), 0);
  Chain overridable("Transpose");  // an initializer also listed as a graph input: the caller may feed another
  overridable.graph.inputs.push_back({"z", ValueKind::TENSOR, DataType::UINT8, std::nullopt});
  EXPECT_EQ(overridable.drop(), 0);
  Chain tiny("Transpose");  // a subnormal scale: quantize(dequantize(k)) may not give k back
  tiny.graph.initializers["s"] = Tensor::fromVector<float>({}, {1e-40f});
  EXPECT_EQ(tiny.drop(), 0);
  Chain int32("Transpose", {}, DataType::UINT8);  // 32-bit quantized data is not 8-bit data
  int32.value("q", DataType::INT32);
  EXPECT_EQ(int32.drop(), 0);
}

TEST(QdqDrop, SharedValuesAndGraphOutputsStay) {
  // A dequantized value read elsewhere keeps its DequantizeLinear for those readers (onnxruntime's
  // EnsureUniqueDQForNodeUnit); the op still reads the 8-bit tensor.
  Chain secondReader("Transpose");
  secondReader.node("Relu", {"d"}, {"r"});
  EXPECT_EQ(secondReader.drop(), 1);
  ASSERT_EQ(secondReader.graph.nodes.size(), 3u);
  EXPECT_EQ(secondReader.graph.nodes[0].opType, "DequantizeLinear");
  EXPECT_EQ(secondReader.graph.nodes[1].inputs, std::vector<std::string>{"q"});
  EXPECT_EQ(secondReader.graph.valueInfo.count("d"), 1u);
  Chain movedRead("Transpose");
  movedRead.node("Relu", {"m"}, {"r"});
  EXPECT_EQ(movedRead.drop(), 0);
  Chain dequantizedOut("Transpose");
  dequantizedOut.graph.outputs.push_back({"d", ValueKind::TENSOR, DataType::FLOAT, std::nullopt});
  EXPECT_EQ(dequantizedOut.drop(), 1);
  EXPECT_EQ(dequantizedOut.graph.nodes.size(), 2u);  // the DequantizeLinear stays: it writes a graph output
  Chain movedOut("Transpose");
  movedOut.graph.outputs.push_back({"m", ValueKind::TENSOR, DataType::FLOAT, std::nullopt});
  EXPECT_EQ(movedOut.drop(), 0);
  Chain kept("Transpose");
  ops::QdqDropPolicy policy;
  policy.keep = {"m"};
  EXPECT_EQ(ops::dropExactQdqPairs(kept.graph, policy), 0);
  EXPECT_EQ(kept.graph.nodes.size(), 3u);
  Chain quantizedOut("Transpose");  // the QuantizeLinear's output may be a graph output: the op now writes it
  quantizedOut.graph.outputs.push_back({"y", ValueKind::TENSOR, DataType::UINT8, std::nullopt});
  EXPECT_EQ(quantizedOut.drop(), 1);
  Chain copies("Transpose");  // without 8-bit storage only views run on the 8-bit tensor
  EXPECT_EQ(copies.drop(13, false), 0);
  Chain view("Reshape", {"shape"});
  EXPECT_EQ(view.drop(13, false), 1);
  Chain notQuantize("Transpose");
  notQuantize.graph.nodes[2].opType = "DequantizeLinear";
  EXPECT_EQ(notQuantize.drop(), 0);
}

// --- Sessions
// -------------------------------------------------------------------------------------------------

using testing::initializer;

// x -> Q -> [DQ -> op -> Q] for MaxPool, Transpose, Pad, Reshape, Gather, Concat (two DQs of one tensor),
// Unsqueeze -> DQ -> y; beside it a Flatten whose QuantizeLinear has another scale (stays float) -> y2.
std::string qdqChainModel(const std::string& path, int32_t type) {
  ModelBuilder m(13);
  m.input("x", {1, 4, 6, 6});
  initializer(m, "s", {}, onnx::TensorProto::FLOAT, {0.043});
  initializer(m, "s2", {}, onnx::TensorProto::FLOAT, {0.09});
  initializer(m, "z", {}, type, {type == onnx::TensorProto::UINT8 ? 131.0 : -5.0});
  initializer(m, "pads", {8}, onnx::TensorProto::INT64, {0, 0, 1, 1, 0, 0, 1, 1});
  initializer(m, "shape", {3}, onnx::TensorProto::INT64, {1, 4, 25});
  initializer(m, "indices", {4}, onnx::TensorProto::INT64, {0, 3, 24, -1});
  initializer(m, "axes", {1}, onnx::TensorProto::INT64, {0});
  m.node("QuantizeLinear", {"x", "s", "z"}, {"q0"});
  auto step = [&](const std::string& in, const std::string& out, auto&& op) {
    m.node("DequantizeLinear", {in, "s", "z"}, {in + "_d"});
    op(in + "_d", out + "_f");
    m.node("QuantizeLinear", {out + "_f", "s", "z"}, {out});
  };
  step("q0", "q1", [&](const std::string& i, const std::string& o) {
    auto& pool = m.node("MaxPool", {i}, {o});
    testing::attrInts(pool, "kernel_shape", {2, 2});
    testing::attrInts(pool, "strides", {2, 2});
  });
  step("q1", "q2", [&](const std::string& i, const std::string& o) {
    testing::attrInts(m.node("Transpose", {i}, {o}), "perm", {0, 1, 3, 2});
  });
  step("q2", "q3", [&](const std::string& i, const std::string& o) { m.node("Pad", {i, "pads"}, {o}); });
  step("q3", "q4", [&](const std::string& i, const std::string& o) { m.node("Reshape", {i, "shape"}, {o}); });
  step("q4", "q5", [&](const std::string& i, const std::string& o) {
    testing::attrInt(m.node("Gather", {i, "indices"}, {o}), "axis", 2);
  });
  m.node("DequantizeLinear", {"q5", "s", "z"}, {"q5_d2"});
  step("q5", "q6", [&](const std::string& i, const std::string& o) {
    testing::attrInt(m.node("Concat", {i, "q5_d2"}, {o}), "axis", 2);
  });
  step("q6", "q7", [&](const std::string& i, const std::string& o) {
    m.node("Unsqueeze", {i, "axes"}, {o});
  });
  m.node("DequantizeLinear", {"q7", "s", "z"}, {"y"});
  m.node("DequantizeLinear", {"q0", "s", "z"}, {"f_d"});
  m.node("Flatten", {"f_d"}, {"f"});
  m.node("QuantizeLinear", {"f", "s2", "z"}, {"fq"});
  m.node("DequantizeLinear", {"fq", "s2", "z"}, {"y2"});
  m.output("y").output("y2");
  return m.save(path);
}

constexpr int64_t kChainNodes = 28;    // 1 + 7 x 3 + 1 (Concat's second DequantizeLinear) + 1 + 4 (Flatten)
constexpr int64_t kDroppedNodes = 15;  // 7 QuantizeLinear and 8 DequantizeLinear nodes

Tensor inputFloats() {
  std::vector<float> values(4 * 36);
  for (size_t i = 0; i < values.size(); ++i) {
    values[i] = std::sin(static_cast<float>(i) * 0.7f) * 6.0f + (i % 5 == 0 ? 0.0215f : 0.0f);
  }
  values[17] = 1e9f, values[18] = -1e9f;  // saturating
  return Tensor::fromVector<float>({1, 4, 6, 6}, values);
}

int64_t nodeCount(const Session& session) {
  int64_t total = 0;
  for (const auto& [ep, count] : nodesPerExecutionProvider(session.partitionReport())) total += count;
  return total;
}

std::unique_ptr<Session> create(const std::string& path, SessionOptions options, const std::string& level) {
  EXPECT_TRUE(options.addConfigEntry("kiln.graph_optimization_level", level).isOk());
  auto session = Session::create(path, options);
  EXPECT_TRUE(session.isOk()) << session.status().toString();
  return session.isOk() ? std::move(*session) : nullptr;
}

std::vector<NamedTensor> run(Session& session) {
  auto outputs = session.run({{"x", inputFloats()}});
  EXPECT_TRUE(outputs.isOk()) << outputs.status().toString();
  return outputs.isOk() ? std::move(*outputs) : std::vector<NamedTensor>{};
}

void expectSameBytes(const std::vector<NamedTensor>& expected, const std::vector<NamedTensor>& actual,
                     const std::string& what) {
  ASSERT_EQ(expected.size(), actual.size()) << what;
  for (size_t o = 0; o < expected.size(); ++o) {
    const Tensor& e = expected[o].tensor;
    const Tensor& a = actual[o].tensor;
    ASSERT_EQ(e.shape(), a.shape()) << what << " " << expected[o].name;
    ASSERT_EQ(e.byteSize(), a.byteSize()) << what;
    EXPECT_EQ(std::memcmp(e.rawData(), a.rawData(), e.byteSize()), 0) << what << " " << expected[o].name;
  }
}

SessionOptions cpuOptions() {
  SessionOptions options;
  EXPECT_TRUE(options.addConfigEntry("kiln.execution_providers", "cpu").isOk());
  return options;
}

TEST(QdqDrop, CpuSessionKeepsItsBytesWithFewerNodes) {
  testing::TempDir dir;
  for (int32_t type : {onnx::TensorProto::UINT8, onnx::TensorProto::INT8}) {
    const std::string path = qdqChainModel(dir.file("chain" + std::to_string(type) + ".onnx"), type);
    auto basic = create(path, cpuOptions(), "basic");
    auto all = create(path, cpuOptions(), "all");
    ASSERT_TRUE(basic && all);
    EXPECT_EQ(nodeCount(*basic), kChainNodes);
    EXPECT_EQ(nodeCount(*all), kChainNodes - kDroppedNodes);
    const auto expected = run(*basic);
    ASSERT_EQ(expected.size(), 2u);
    EXPECT_EQ(expected[0].tensor.shape(), (Shape{1, 1, 4, 8}));
    expectSameBytes(expected, run(*all), "CPU, level all against basic");
  }
}

TEST(QdqDrop, VulkanSessionKeepsTheCpuBytesInOnePartition) {
  REQUIRE_VULKAN();
  testing::TempDir dir;
  for (int32_t type : {onnx::TensorProto::UINT8, onnx::TensorProto::INT8}) {
    const std::string path = qdqChainModel(dir.file("chain" + std::to_string(type) + ".onnx"), type);
    auto cpu = create(path, cpuOptions(), "basic");
    ASSERT_TRUE(cpu);
    const auto expected = run(*cpu);
    for (const char* level : {"basic", "all"}) {
      SessionOptions options = testing::vulkanOptions();
      ASSERT_TRUE(options.addConfigEntry("session.disable_cpu_ep_fallback", "1").isOk());
      auto vulkan = create(path, options, level);
      ASSERT_TRUE(vulkan);
      const PartitionReport& report = vulkan->partitionReport();
      EXPECT_EQ(nodesPerExecutionProvider(report).count("CPUExecutionProvider"), 0u) << level;
      EXPECT_EQ(partitionCount(report), 1) << level;
      EXPECT_EQ(nodeCount(*vulkan), std::string(level) == "all" ? kChainNodes - kDroppedNodes : kChainNodes);
      expectSameBytes(expected, run(*vulkan),
                      std::string("Vulkan at level ") + level + " against the CPU EP");
    }
  }
}

// The optimizer's pass runs at level `all` only, and inside If/Loop/Scan bodies too, where the parameters and
// the quantized tensor may come from the enclosing graph.
TEST(QdqDrop, OptimizerDropsAtLevelAllAlsoInBodies) {
  testing::GraphBuilder thenBranch("then");  // reads qx and the parameters from the main graph
  thenBranch.node("DequantizeLinear", {"qx", "s", "z"}, {"d"});
  thenBranch.node("Transpose", {"d"}, {"t"});
  thenBranch.node("QuantizeLinear", {"t", "s", "z"}, {"ty"});
  thenBranch.output("ty", {3, 2}, onnx::TensorProto::UINT8);
  testing::GraphBuilder elseBranch("else");
  elseBranch.node("Transpose", {"qx"}, {"ey"});
  elseBranch.output("ey", {3, 2}, onnx::TensorProto::UINT8);
  ModelBuilder m(13);
  m.input("x", {2, 3})
      .input("cond", {}, onnx::TensorProto::BOOL)
      .output("y", {3, 2}, onnx::TensorProto::UINT8);
  initializer(m, "s", {}, onnx::TensorProto::FLOAT, {0.25});
  initializer(m, "z", {}, onnx::TensorProto::UINT8, {9});
  m.node("QuantizeLinear", {"x", "s", "z"}, {"qx"});
  auto& branch = m.node("If", {"cond"}, {"y"});
  testing::attrGraph(branch, "then_branch", thenBranch.proto());
  testing::attrGraph(branch, "else_branch", elseBranch.proto());
  onnx::ModelProto proto = m.build();
  onnx_io::inferShapes(proto);
  for (auto level : {optimizer::OptimizationLevel::BASIC, optimizer::OptimizationLevel::ALL}) {
    auto model = onnx_io::modelFromProto(proto);
    ASSERT_TRUE(model.isOk()) << model.status().toString();
    auto result = optimizer::optimizeModel(*model, level, *cpu::hostEvaluator());
    ASSERT_TRUE(result.isOk()) << result.status().toString();
    const bool all = level == optimizer::OptimizationLevel::ALL;
    EXPECT_EQ(result->qdqPairsDropped, all ? 1 : 0);
    const ir::Node& ifNode = model->graph->nodes.back();
    ASSERT_EQ(ifNode.opType, "If");
    const ir::Graph* body = ifNode.subgraph("then_branch");
    ASSERT_NE(body, nullptr);
    EXPECT_EQ(body->nodes.size(), all ? 1u : 3u);
    if (all) {
      EXPECT_EQ(body->nodes[0].inputs, std::vector<std::string>{"qx"});
    }
  }
}

// The 8-bit kernels the drops lean on, with odd sizes (partly filled words): Gather (negative indices) and
// GatherElements on uint8/int8, Pad (constant with an 8-bit value, cropping, reflect, edge), nearest Resize:
// the CPU EP's bytes on Vulkan.
TEST(QdqDrop, VulkanGatherPadAndResizeOnEightBitsMatchCpuBytes) {
  REQUIRE_VULKAN();
  testing::TempDir dir;
  for (int32_t type : {onnx::TensorProto::UINT8, onnx::TensorProto::INT8}) {
    ModelBuilder m(13);
    m.input("x", {2, 3, 5}, type);
    initializer(m, "idx", {4}, onnx::TensorProto::INT64, {0, -1, 2, 1});
    initializer(m, "idx32", {2, 1, 5}, onnx::TensorProto::INT32, {0, 2, 1, -1, 0, 1, 1, 0, 2, -3});
    initializer(m, "pads", {6}, onnx::TensorProto::INT64, {0, 1, 2, 1, 0, 3});
    initializer(m, "crop", {6}, onnx::TensorProto::INT64, {0, -1, 1, 0, 1, -2});
    initializer(m, "value", {}, type, {type == onnx::TensorProto::UINT8 ? 201.0 : -77.0});
    testing::attrInt(m.node("Gather", {"x", "idx"}, {"g"}), "axis", 2);
    testing::attrInt(m.node("GatherElements", {"x", "idx32"}, {"ge"}), "axis", 1);
    m.node("Pad", {"x", "pads", "value"}, {"pc"});
    m.node("Pad", {"x", "crop", "value"}, {"pcrop"});
    initializer(m, "scales", {3}, onnx::TensorProto::FLOAT, {1.0, 2.0, 1.5});
    m.node("Resize", {"x", "", "scales"}, {"rz"});
    for (const char* mode : {"reflect", "edge"}) {
      auto& pad = m.node("Pad", {"x", "pads"}, {std::string("p_") + mode});
      auto* attr = pad.add_attribute();
      attr->set_name("mode");
      attr->set_type(onnx::AttributeProto::STRING);
      attr->set_s(mode);
      m.output(std::string("p_") + mode, {}, type);
    }
    m.output("g", {}, type).output("ge", {}, type).output("pc", {}, type).output("pcrop", {}, type);
    m.output("rz", {}, type);
    const std::string path = m.save(dir.file("eight" + std::to_string(type) + ".onnx"));
    auto cpu = create(path, cpuOptions(), "basic");
    SessionOptions options = testing::vulkanOptions();
    ASSERT_TRUE(options.addConfigEntry("session.disable_cpu_ep_fallback", "1").isOk());
    auto vulkan = create(path, options, "basic");
    ASSERT_TRUE(cpu && vulkan);
    EXPECT_EQ(nodesPerExecutionProvider(vulkan->partitionReport()).count("CPUExecutionProvider"), 0u);
    std::vector<uint8_t> bytes(30);
    for (size_t i = 0; i < bytes.size(); ++i) bytes[i] = static_cast<uint8_t>(i * 37 + 11);
    const Tensor x =
        type == onnx::TensorProto::UINT8
            ? Tensor::fromVector<uint8_t>({2, 3, 5}, bytes)
            : Tensor::fromVector<int8_t>({2, 3, 5}, std::vector<int8_t>(bytes.begin(), bytes.end()));
    auto expected = cpu->run({{"x", x}});
    auto actual = vulkan->run({{"x", x}});
    ASSERT_TRUE(expected.isOk()) << expected.status().toString();
    ASSERT_TRUE(actual.isOk()) << actual.status().toString();
    expectSameBytes(*expected, *actual, "8-bit Gather/Pad/Resize on Vulkan against the CPU EP");
  }
}

}  // namespace
}  // namespace kiln
