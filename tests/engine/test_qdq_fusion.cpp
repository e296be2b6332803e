// onnxruntime's QDQ node units fused at level `all` (optimizer/qdq_fusion.cpp): DequantizeLinear(x, w, bias)
// -> Conv -> QuantizeLinear becomes QLinearConv and DequantizeLinear(a, b) -> MatMul -> QuantizeLinear
// becomes QLinearMatMul, in the main graph and in bodies; every case onnxruntime's selectors or Kiln's
// exactness rules turn down stays (a non-constant weight, a bias scale that is not x_scale * w_scale, a Conv
// output read by anything but the QuantizeLinear or a graph output, int8 x with uint8 w, another output
// type). A shared DequantizeLinear stays for its other readers. The fused session computes the hand-computed
// integer result on the CPU EP and the same bytes on Vulkan.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>

#include "ep/cpu/kernels/quantization.h"
#include "gtest_requirements.h"
#include "kiln/session.h"
#include "model_builder.h"
#include "onnx/model_loader.h"
#include "ep/cpu/host_evaluator.h"
#include "optimizer/optimizer.h"
#include "test_models.h"

namespace kiln {
namespace {

using testing::initializer;
using testing::ModelBuilder;

// The parameters of the Conv unit below, shared with the hand computation.
constexpr float kXScale = 0.05f, kYScale = 0.01f;
constexpr int kXZero = 3, kYZero = 10;
const std::vector<float> kWScale = {0.02f, 0.03f};
const std::vector<int> kWeights = {1, -2, 3, 4, -5, 6, 7, -8};  // 2x1x2x2
const std::vector<int> kBias = {5, -7};

enum class Variant {
  FUSES,
  WEIGHT_NOT_CONSTANT,
  BIAS_SCALE_MISMATCH,
  SHARED_X_DEQUANTIZE,
  CONV_OUTPUT_READ_ELSEWHERE,
  CONV_OUTPUT_IS_GRAPH_OUTPUT,
  INT8_X_UINT8_W,
  OUTPUT_TYPE_DIFFERS,
};

// xq (uint8 1x1x3x3) -> DequantizeLinear; w (int8 2x1x2x2, per output channel) -> DequantizeLinear; bias
// (int32, scale x_scale * w_scale) -> DequantizeLinear; Conv 2x2 -> QuantizeLinear -> y (uint8 1x2x2x2).
ModelBuilder convUnit(Variant variant) {
  ModelBuilder m(13);
  const int32_t u8 = onnx::TensorProto::UINT8, i8 = onnx::TensorProto::INT8;
  const int32_t xType = variant == Variant::INT8_X_UINT8_W ? i8 : u8;
  const int32_t wType = variant == Variant::INT8_X_UINT8_W ? u8 : i8;
  m.input("xq", {1, 1, 3, 3}, xType);
  std::vector<double> weights(kWeights.begin(), kWeights.end());
  if (wType == u8)
    for (double& w : weights) w += 8;
  if (variant == Variant::WEIGHT_NOT_CONSTANT) {
    m.input("w", {2, 1, 2, 2}, wType);
  } else {
    initializer(m, "w", {2, 1, 2, 2}, wType, weights);
  }
  initializer(m, "xs", {}, onnx::TensorProto::FLOAT, {kXScale});
  initializer(m, "xz", {}, xType, {kXZero});
  initializer(m, "ws", {2}, onnx::TensorProto::FLOAT, {kWScale[0], kWScale[1]});
  initializer(m, "wz", {2}, wType, {0, 0});
  const float b1 = kXScale * kWScale[1] * (variant == Variant::BIAS_SCALE_MISMATCH ? 1.5f : 1.0f);
  initializer(m, "bs", {2}, onnx::TensorProto::FLOAT, {kXScale * kWScale[0], b1});
  initializer(m, "b", {2}, onnx::TensorProto::INT32, std::vector<double>(kBias.begin(), kBias.end()));
  initializer(m, "ys", {}, onnx::TensorProto::FLOAT, {kYScale});
  const int32_t yType = variant == Variant::OUTPUT_TYPE_DIFFERS ? i8 : xType;
  initializer(m, "yz", {}, yType, {kYZero});
  m.node("DequantizeLinear", {"xq", "xs", "xz"}, {"xd"});
  testing::attrInt(m.node("DequantizeLinear", {"w", "ws", "wz"}, {"wd"}), "axis", 0);
  testing::attrInt(m.node("DequantizeLinear", {"b", "bs"}, {"bd"}), "axis", 0);
  testing::attrInts(m.node("Conv", {"xd", "wd", "bd"}, {"c"}, "conv"), "kernel_shape", {2, 2});
  m.node("QuantizeLinear", {"c", "ys", "yz"}, {"y"});
  m.output("y", {1, 2, 2, 2}, yType);
  if (variant == Variant::SHARED_X_DEQUANTIZE) {
    m.node("Identity", {"xd"}, {"x2"});
    m.output("x2", {1, 1, 3, 3});
  }
  if (variant == Variant::CONV_OUTPUT_READ_ELSEWHERE) {
    m.node("Relu", {"c"}, {"r"});
    m.output("r", {1, 2, 2, 2});
  }
  if (variant == Variant::CONV_OUTPUT_IS_GRAPH_OUTPUT) m.output("c", {1, 2, 2, 2});
  return m;
}

// The model optimized at level `all`, with the number of units fused.
std::pair<ir::Model, int64_t> optimized(const ModelBuilder& m) {
  onnx::ModelProto proto = m.build();
  onnx_io::inferShapes(proto);
  auto model = onnx_io::modelFromProto(proto);
  EXPECT_TRUE(model.isOk()) << model.status().toString();
  auto result = optimizer::optimizeModel(*model, optimizer::OptimizationLevel::ALL, *cpu::hostEvaluator());
  EXPECT_TRUE(result.isOk()) << result.status().toString();
  return {std::move(*model), result->qdqUnitsFused};
}

std::vector<std::string> opTypes(const ir::Graph& graph) {
  std::vector<std::string> types;
  for (const auto& node : graph.nodes) types.push_back(node.opType);
  return types;
}

TEST(QdqFusion, ConvUnitBecomesQLinearConv) {
  auto [model, fused] = optimized(convUnit(Variant::FUSES));
  EXPECT_EQ(fused, 1);
  ASSERT_EQ(opTypes(*model.graph), std::vector<std::string>{"QLinearConv"});
  const ir::Node& conv = model.graph->nodes[0];
  EXPECT_EQ(conv.inputs, (std::vector<std::string>{"xq", "xs", "xz", "w", "ws", "wz", "ys", "yz", "b"}));
  EXPECT_EQ(conv.outputs, std::vector<std::string>{"y"});
  EXPECT_EQ(conv.attrInts("kernel_shape"), (std::vector<int64_t>{2, 2}));
  EXPECT_EQ(model.graph->valueInfo.count("c") + model.graph->valueInfo.count("xd"), 0u);  // no stale floats
}

TEST(QdqFusion, OmittedZeroPointsBecomeZeroInitializers) {
  ModelBuilder m = convUnit(Variant::FUSES);
  for (auto& node : *m.proto().mutable_node()) {
    if (node.op_type() == "DequantizeLinear" && node.input(0) == "w") node.mutable_input()->RemoveLast();
  }
  auto [model, fused] = optimized(m);
  ASSERT_EQ(fused, 1);
  const ir::Node& conv = model.graph->nodes[0];
  const Tensor& zero = model.graph->initializers.at(conv.inputs[5]);
  EXPECT_EQ(zero.dtype(), DataType::INT8);
  EXPECT_EQ(zero.shape(), (Shape{2}));
  EXPECT_EQ(zero.data<int8_t>()[0] | zero.data<int8_t>()[1], 0);
}

TEST(QdqFusion, RejectedUnitsStayFloat) {
  for (Variant variant :
       {Variant::WEIGHT_NOT_CONSTANT, Variant::BIAS_SCALE_MISMATCH, Variant::CONV_OUTPUT_READ_ELSEWHERE,
        Variant::CONV_OUTPUT_IS_GRAPH_OUTPUT, Variant::INT8_X_UINT8_W, Variant::OUTPUT_TYPE_DIFFERS}) {
    auto [model, fused] = optimized(convUnit(variant));
    EXPECT_EQ(fused, 0) << static_cast<int>(variant);
    const auto types = opTypes(*model.graph);
    EXPECT_EQ(std::count(types.begin(), types.end(), "Conv"), 1) << static_cast<int>(variant);
    EXPECT_EQ(std::count(types.begin(), types.end(), "QuantizeLinear"), 1) << static_cast<int>(variant);
    EXPECT_EQ(std::count(types.begin(), types.end(), "QLinearConv"), 0) << static_cast<int>(variant);
  }
}

TEST(QdqFusion, SharedDequantizeStaysForItsOtherReader) {
  auto [model, fused] = optimized(convUnit(Variant::SHARED_X_DEQUANTIZE));
  EXPECT_EQ(fused, 1);  // onnxruntime gives the unit its own copy (EnsureUniqueDQForNodeUnit)
  auto types = opTypes(*model.graph);
  std::sort(types.begin(), types.end());
  EXPECT_EQ(types, (std::vector<std::string>{"DequantizeLinear", "Identity", "QLinearConv"}));
  for (const auto& node : model.graph->nodes) {
    if (node.opType == "Identity") {
      EXPECT_EQ(node.inputs, std::vector<std::string>{"xd"});
    }
  }
}

// a (uint8 2x3) and b (int8 3x2 constant) -> DequantizeLinear -> MatMul -> QuantizeLinear -> y.
ModelBuilder matMulUnit(bool perColumnB) {
  ModelBuilder m(13);
  m.input("a", {2, 3}, onnx::TensorProto::UINT8);
  initializer(m, "as", {}, onnx::TensorProto::FLOAT, {0.1});
  initializer(m, "az", {}, onnx::TensorProto::UINT8, {128});
  initializer(m, "b", {3, 2}, onnx::TensorProto::INT8, {1, -2, 3, -4, 5, -6});
  if (perColumnB) {
    initializer(m, "bs", {2}, onnx::TensorProto::FLOAT, {0.2, 0.3});
    initializer(m, "bz", {2}, onnx::TensorProto::INT8, {0, 0});
  } else {
    initializer(m, "bs", {}, onnx::TensorProto::FLOAT, {0.2});
    initializer(m, "bz", {}, onnx::TensorProto::INT8, {0});
  }
  initializer(m, "ys", {}, onnx::TensorProto::FLOAT, {0.5});
  initializer(m, "yz", {}, onnx::TensorProto::UINT8, {100});
  m.node("DequantizeLinear", {"a", "as", "az"}, {"ad"});
  m.node("DequantizeLinear", {"b", "bs", "bz"}, {"bd"});
  m.node("MatMul", {"ad", "bd"}, {"p"});
  m.node("QuantizeLinear", {"p", "ys", "yz"}, {"y"});
  m.output("y", {2, 2}, onnx::TensorProto::UINT8);
  return m;
}

TEST(QdqFusion, MatMulUnitBecomesQLinearMatMulPerTensorOnly) {
  auto [model, fused] = optimized(matMulUnit(false));
  EXPECT_EQ(fused, 1);
  ASSERT_EQ(opTypes(*model.graph), std::vector<std::string>{"QLinearMatMul"});
  EXPECT_EQ(model.graph->nodes[0].inputs,
            (std::vector<std::string>{"a", "as", "az", "b", "bs", "bz", "ys", "yz"}));
  auto [perColumn, none] = optimized(matMulUnit(true));
  EXPECT_EQ(none, 0);
  EXPECT_EQ(opTypes(*perColumn.graph),
            (std::vector<std::string>{"DequantizeLinear", "MatMul", "QuantizeLinear"}));
}

TEST(QdqFusion, OnlyAtLevelAllAndAlsoInBodies) {
  testing::GraphBuilder thenBranch("then");  // reads xq and every parameter from the main graph
  thenBranch.node("DequantizeLinear", {"xq", "xs", "xz"}, {"txd"});
  testing::attrInt(thenBranch.node("DequantizeLinear", {"w", "ws", "wz"}, {"twd"}), "axis", 0);
  testing::attrInts(thenBranch.node("Conv", {"txd", "twd"}, {"tc"}), "kernel_shape", {2, 2});
  thenBranch.node("QuantizeLinear", {"tc", "ys", "yz"}, {"ty"});
  thenBranch.output("ty", {1, 2, 2, 2}, onnx::TensorProto::UINT8);
  testing::GraphBuilder elseBranch("else");
  elseBranch.node("Identity", {"y"}, {"ey"});
  elseBranch.output("ey", {1, 2, 2, 2}, onnx::TensorProto::UINT8);
  ModelBuilder m = convUnit(Variant::FUSES);
  m.input("cond", {}, onnx::TensorProto::BOOL);
  auto& branch = m.node("If", {"cond"}, {"z"});
  testing::attrGraph(branch, "then_branch", thenBranch.proto());
  testing::attrGraph(branch, "else_branch", elseBranch.proto());
  m.output("z", {1, 2, 2, 2}, onnx::TensorProto::UINT8);
  auto [model, fused] = optimized(m);
  EXPECT_EQ(fused, 2);
  const ir::Graph* body = model.graph->nodes.back().subgraph("then_branch");
  ASSERT_NE(body, nullptr);
  ASSERT_EQ(opTypes(*body), std::vector<std::string>{"QLinearConv"});
  EXPECT_EQ(body->nodes[0].inputs, (std::vector<std::string>{"xq", "xs", "xz", "w", "ws", "wz", "ys", "yz"}));

  onnx::ModelProto proto = convUnit(Variant::FUSES).build();
  onnx_io::inferShapes(proto);
  auto basic = onnx_io::modelFromProto(proto);
  ASSERT_TRUE(basic.isOk());
  auto result = optimizer::optimizeModel(*basic, optimizer::OptimizationLevel::BASIC, *cpu::hostEvaluator());
  ASSERT_TRUE(result.isOk());
  EXPECT_EQ(result->qdqUnitsFused, 0);
  const auto types =
      opTypes(*basic->graph);  // the weights' DequantizeLinear nodes folded to float initializers
  EXPECT_EQ(std::count(types.begin(), types.end(), "Conv"), 1);
  EXPECT_EQ(std::count(types.begin(), types.end(), "QLinearConv"), 0);
}

// --- Sessions
// -------------------------------------------------------------------------------------------------

const std::vector<uint8_t> kInput = {0, 7, 255, 40, 3, 128, 90, 200, 17};

// QLinearConv by hand: int32 accumulation of (x - x_zero) * w plus the bias, then one requantization with the
// float multiplier x_scale * w_scale / y_scale, rounding half to even, saturating to uint8.
std::vector<uint8_t> handComputedConv() {
  std::vector<uint8_t> y;
  for (int m = 0; m < 2; ++m) {
    const float multiplier = kXScale * kWScale[m] / kYScale;
    for (int r = 0; r < 2; ++r) {
      for (int c = 0; c < 2; ++c) {
        int32_t acc = kBias[m];
        for (int i = 0; i < 2; ++i) {
          for (int j = 0; j < 2; ++j) {
            acc += (kInput[(r + i) * 3 + c + j] - kXZero) * kWeights[m * 4 + i * 2 + j];
          }
        }
        const float q = std::nearbyint(static_cast<float>(acc) * multiplier) + kYZero;
        y.push_back(static_cast<uint8_t>(std::clamp(q, 0.0f, 255.0f)));
      }
    }
  }
  return y;
}

std::vector<uint8_t> runConv(const std::string& path, SessionOptions options, const std::string& level) {
  EXPECT_TRUE(options.addConfigEntry("kiln.graph_optimization_level", level).isOk());
  auto session = Session::create(path, options);
  EXPECT_TRUE(session.isOk()) << session.status().toString();
  if (!session.isOk()) return {};
  auto outputs = (*session)->run({{"xq", Tensor::fromVector<uint8_t>({1, 1, 3, 3}, kInput)}});
  EXPECT_TRUE(outputs.isOk()) << outputs.status().toString();
  if (!outputs.isOk()) return {};
  const Tensor& y = (*outputs)[0].tensor;
  EXPECT_EQ(y.dtype(), DataType::UINT8);
  return std::vector<uint8_t>(y.data<uint8_t>(), y.data<uint8_t>() + y.numel());
}

SessionOptions cpuOptions() {
  SessionOptions options;
  EXPECT_TRUE(options.addConfigEntry("kiln.execution_providers", "cpu").isOk());
  return options;
}

TEST(QdqFusion, FusedCpuSessionComputesTheIntegerConvolution) {
  testing::TempDir dir;
  const std::string path = convUnit(Variant::FUSES).save(dir.file("conv.onnx"));
  const std::vector<uint8_t> expected = handComputedConv();
  EXPECT_EQ(runConv(path, cpuOptions(), "all"), expected);
  const std::vector<uint8_t> floatPath = runConv(path, cpuOptions(), "basic");  // float Conv, then quantize
  ASSERT_EQ(floatPath.size(), expected.size());
  for (size_t i = 0; i < expected.size(); ++i) EXPECT_LE(std::abs(floatPath[i] - expected[i]), 1) << i;
}

TEST(QdqFusion, FusedVulkanSessionKeepsTheCpuBytes) {
  REQUIRE_VULKAN();
  testing::TempDir dir;
  const std::string path = convUnit(Variant::FUSES).save(dir.file("conv.onnx"));
  SessionOptions options = testing::vulkanOptions();
  ASSERT_TRUE(options.addConfigEntry("session.disable_cpu_ep_fallback", "1").isOk());
  EXPECT_EQ(runConv(path, options, "all"), handComputedConv());
}

TEST(QdqFusion, FusedMatMulSessionComputesTheIntegerProduct) {
  testing::TempDir dir;
  const std::string path = matMulUnit(false).save(dir.file("matmul.onnx"));
  const std::vector<uint8_t> a = {0, 130, 255, 128, 7, 200};  // 2x3, zero point 128
  const std::vector<int> b = {1, -2, 3, -4, 5, -6};           // 3x2
  std::vector<uint8_t> expected;
  for (int r = 0; r < 2; ++r) {
    for (int c = 0; c < 2; ++c) {
      int32_t acc = 0;
      for (int k = 0; k < 3; ++k) acc += (a[r * 3 + k] - 128) * b[k * 2 + c];
      const float q = std::nearbyint(static_cast<float>(acc) * (0.1f * 0.2f / 0.5f)) + 100;
      expected.push_back(static_cast<uint8_t>(std::clamp(q, 0.0f, 255.0f)));
    }
  }
  SessionOptions options = cpuOptions();
  ASSERT_TRUE(options.addConfigEntry("kiln.graph_optimization_level", "all").isOk());
  auto session = Session::create(path, options);
  ASSERT_TRUE(session.isOk()) << session.status().toString();
  auto outputs = (*session)->run({{"a", Tensor::fromVector<uint8_t>({2, 3}, a)}});
  ASSERT_TRUE(outputs.isOk()) << outputs.status().toString();
  const Tensor& y = (*outputs)[0].tensor;
  ASSERT_EQ(y.dtype(), DataType::UINT8);
  EXPECT_EQ(std::vector<uint8_t>(y.data<uint8_t>(), y.data<uint8_t>() + y.numel()), expected);
}

// The fused kernel's vectorized requantization is saturateQuantize bit for bit: ties (half to even), both
// signs, saturation, extreme accumulators, every zero point edge, and a non-finite multiplier.
TEST(QdqFusion, RequantizeMatchesSaturateQuantizeBitForBit) {
  std::vector<int32_t> acc = {0,      1,       -1,      2,          -2,         3,
                              -3,     5,       -5,      7,          1000,       -1000,
                              123456, -123456, 1 << 30, -(1 << 30), 2147483647, -2147483647 - 1};
  for (int32_t i = -600; i <= 600; ++i) acc.push_back(i * 37);
  const float multipliers[] = {0.5f, 0.25f, 1.5f,  0.1f, 1e-3f,    3.3e-5f,
                               7.0f, 1e30f, -0.5f, 0.0f, INFINITY, NAN};
  for (float multiplier : multipliers) {
    for (int32_t zero : {0, 10, 128, 255}) {
      std::vector<uint8_t> fast(acc.size());
      cpu::requantize(acc.data(), static_cast<int64_t>(acc.size()), multiplier, zero, fast.data());
      for (size_t i = 0; i < acc.size(); ++i) {
        ASSERT_EQ(fast[i], cpu::saturateQuantize<uint8_t>(static_cast<float>(acc[i]) * multiplier, zero))
            << acc[i] << " * " << multiplier << " + " << zero;
      }
    }
    for (int32_t zero : {-128, -3, 0, 127}) {
      std::vector<int8_t> fast(acc.size());
      cpu::requantize(acc.data(), static_cast<int64_t>(acc.size()), multiplier, zero, fast.data());
      for (size_t i = 0; i < acc.size(); ++i) {
        ASSERT_EQ(fast[i], cpu::saturateQuantize<int8_t>(static_cast<float>(acc[i]) * multiplier, zero))
            << acc[i] << " * " << multiplier << " + " << zero;
      }
    }
  }
}

}  // namespace
}  // namespace kiln
