// The oneDNN int8 convolution and matmul (ep/cpu/kernels/onednn_int8.h) give the reference int32 loops' results bit
// for bit: uint8 weights shifted to int8 with zero-point compensation, per-tensor and per-channel weight zero points,
// nonzero activation zero points (padding included), dilations, strides, groups (depthwise too), 1x1 and 3x3
// kernels, odd sizes, and the extreme values where a saturating 16-bit accumulation would differ.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include "ep/cpu/graph_executor.h"
#include "ep/cpu/kernels/conv_helpers.h"
#include "ep/cpu/kernels/matmul_helpers.h"
#include "ep/cpu/kernels/onednn_int8.h"
#include "ep/cpu/kernels/quantization.h"
#include "ep/cpu/thread_pool.h"
#include "model_builder.h"
#include "onnx/model_loader.h"

namespace kiln::cpu {
namespace {

// A tensor of `type` (uint8 or int8) with random values; `extreme` uses only the type's two end values.
Tensor randomInt8(DataType type, Shape shape, std::mt19937& rng, bool extreme) {
  Tensor t(type, shape);
  std::uniform_int_distribution<int> value(0, 255), coin(0, 1);
  auto* bytes = static_cast<uint8_t*>(t.rawData());
  for (int64_t i = 0; i < t.numel(); ++i) {
    const int v = extreme ? (coin(rng) ? 255 : 0) : value(rng);
    bytes[i] = static_cast<uint8_t>(type == DataType::INT8 && extreme ? (v ? 0x7f : 0x80) : v);
  }
  return t;
}

struct ConvCase {
  DataType xType, wType;
  bool perChannelZero;
  int64_t N, C, M, group, H, W, kH, kW, stride, dilation, pad;
  bool extreme;
};

std::string describe(const ConvCase& c) {
  return std::string(dataTypeName(c.xType)) + "x" + dataTypeName(c.wType) + (c.perChannelZero ? " perChannel" : "") +
         " N" + std::to_string(c.N) + " C" + std::to_string(c.C) + " M" + std::to_string(c.M) + " g" +
         std::to_string(c.group) + " " + std::to_string(c.H) + "x" + std::to_string(c.W) + " k" +
         std::to_string(c.kH) + "x" + std::to_string(c.kW) + " s" + std::to_string(c.stride) + " d" +
         std::to_string(c.dilation) + " p" + std::to_string(c.pad) + (c.extreme ? " extreme" : "");
}

// Runs one case both ways; returns false when oneDNN did not take it (the kernels then use the reference loops).
bool checkConv(const ConvCase& c, std::mt19937& rng, ThreadPool* pool, bool withBias) {
  SCOPED_TRACE(describe(c));
  const Tensor x = randomInt8(c.xType, {c.N, c.C, c.H, c.W}, rng, c.extreme);
  const Tensor w = randomInt8(c.wType, {c.M, c.C / c.group, c.kH, c.kW}, rng, c.extreme);
  const Tensor xZero = randomInt8(c.xType, {}, rng, false);
  const Tensor wZero = randomInt8(c.wType, c.perChannelZero ? Shape{c.M} : Shape{}, rng, false);
  std::vector<int32_t> bias(static_cast<size_t>(c.M));
  for (auto& b : bias) b = static_cast<int32_t>(rng() % 20001) - 10000;
  ops::WindowAttributes attrs;
  attrs.strides = {c.stride, c.stride};
  attrs.dilations = {c.dilation, c.dilation};
  attrs.pads = {c.pad, c.pad + 1, c.pad, c.pad};  // asymmetric: one more at the top
  auto shapes = resolveConvShapes(attrs, c.group, x, w, nullptr);
  EXPECT_TRUE(shapes.isOk()) << shapes.status().toString();
  if (!shapes.isOk()) return false;
  const ConvShapes& s = shapes.value();

  auto xi = widenConvOperand(x, &xZero, 1);
  auto wi = widenConvOperand(w, &wZero, c.M);
  EXPECT_TRUE(xi.isOk() && wi.isOk());
  std::vector<int32_t> expected(static_cast<size_t>(shapeSize(s.outShape)));
  convolveInt32(xi->data(), wi->data(), withBias ? bias.data() : nullptr, expected.data(), s, c.group, nullptr);

  auto packed = OneDnnInt8Conv::create(attrs, c.group, w, &wZero);
  EXPECT_NE(packed, nullptr);
  if (!packed) return false;
  std::vector<int32_t> actual(expected.size(), 0x5a5a5a5a);
  if (!packed->run(x, &xZero, withBias ? bias.data() : nullptr, s, actual.data(), pool)) return false;
  EXPECT_EQ(actual, expected) << "implementation " << packed->implementation();
  return true;
}

class OneDnnInt8Test : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!oneDnnInt8Exact()) GTEST_SKIP() << "oneDNN's ISA here (" << oneDnnIsaName() << ") has no VNNI";
  }
};

TEST_F(OneDnnInt8Test, ConvMatchesReferenceOverGrid) {
  std::mt19937 rng(21);
  ThreadPool pool(2);
  int cases = 0, taken = 0;
  for (DataType wType : {DataType::UINT8, DataType::INT8}) {
    for (bool perChannel : {false, true}) {
      for (int64_t dilation : {1, 2, 4}) {
        for (int64_t stride : {1, 2}) {
          for (int64_t k : {1, 3}) {
            for (int64_t group : {1, 2}) {
              if (k == 1 && dilation > 1) continue;
              const ConvCase c{DataType::UINT8, wType, perChannel, 2, 3 * group, 5 * group, group,
                               13, 11, k, k, stride, dilation, k == 3 ? dilation : 0, false};
              ++cases;
              taken += checkConv(c, rng, &pool, (cases % 2) == 0);
            }
          }
        }
      }
    }
  }
  EXPECT_EQ(taken, cases) << "oneDNN declined some cases";
}

TEST_F(OneDnnInt8Test, ConvDepthwiseAndWideChannels) {
  std::mt19937 rng(7);
  int taken = 0;
  // Depthwise 3x3 (stride 1 and 2), a 1x1 with many channels, a 3x3 with 64 -> 32 (a real U-Net block's size).
  const ConvCase cases[] = {
      {DataType::UINT8, DataType::UINT8, true, 1, 16, 16, 16, 17, 9, 3, 3, 1, 1, 1, false},
      {DataType::UINT8, DataType::UINT8, false, 1, 16, 16, 16, 17, 9, 3, 3, 2, 1, 1, false},
      {DataType::UINT8, DataType::INT8, true, 1, 32, 32, 32, 15, 15, 3, 3, 1, 2, 2, false},
      {DataType::UINT8, DataType::UINT8, true, 1, 96, 40, 1, 7, 9, 1, 1, 1, 1, 0, false},
      {DataType::UINT8, DataType::UINT8, false, 1, 64, 32, 1, 19, 23, 3, 3, 1, 1, 1, false},
  };
  for (const ConvCase& c : cases) taken += checkConv(c, rng, nullptr, true);
  EXPECT_EQ(taken, 5);
}

TEST_F(OneDnnInt8Test, ConvExtremeValuesAccumulateExactly) {
  // 255 * -128 products summed in pairs overflow int16: a saturating accumulation would differ here.
  std::mt19937 rng(3);
  int taken = 0;
  const ConvCase cases[] = {
      {DataType::UINT8, DataType::UINT8, false, 1, 64, 8, 1, 9, 9, 3, 3, 1, 1, 1, true},
      {DataType::UINT8, DataType::INT8, true, 1, 64, 8, 1, 9, 9, 3, 3, 1, 1, 1, true},
      {DataType::UINT8, DataType::INT8, false, 1, 128, 16, 1, 5, 5, 1, 1, 1, 1, 0, true},
  };
  for (const ConvCase& c : cases) taken += checkConv(c, rng, nullptr, false);
  EXPECT_EQ(taken, 3);
}

TEST_F(OneDnnInt8Test, ConvInt8ActivationsMatchOrFallBack) {
  // int8 activations: oneDNN may take them (exactly) or decline; either way never a wrong result.
  std::mt19937 rng(5);
  const ConvCase c{DataType::INT8, DataType::INT8, true, 1, 8, 8, 1, 10, 10, 3, 3, 1, 1, 1, false};
  checkConv(c, rng, nullptr, true);
}

// 1-D and 3-D convolutions (uint8 weights, per-channel zero points) against the reference loops.
void checkConvOfRank(Shape xShape, Shape wShape, int64_t group, const ops::WindowAttributes& attrs, std::mt19937& rng) {
  SCOPED_TRACE(shapeToString(xShape) + " * " + shapeToString(wShape));
  const Tensor x = randomInt8(DataType::UINT8, xShape, rng, false);
  const Tensor w = randomInt8(DataType::UINT8, wShape, rng, false);
  const Tensor xZero = randomInt8(DataType::UINT8, {}, rng, false);
  const Tensor wZero = randomInt8(DataType::UINT8, {wShape[0]}, rng, false);
  auto s = resolveConvShapes(attrs, group, x, w, nullptr);
  ASSERT_TRUE(s.isOk()) << s.status().toString();
  auto xi = widenConvOperand(x, &xZero, 1);
  auto wi = widenConvOperand(w, &wZero, wShape[0]);
  ASSERT_TRUE(xi.isOk() && wi.isOk());
  std::vector<int32_t> expected(static_cast<size_t>(shapeSize(s->outShape)));
  convolveInt32(xi->data(), wi->data(), nullptr, expected.data(), *s, group, nullptr);
  auto packed = OneDnnInt8Conv::create(attrs, group, w, &wZero);
  ASSERT_NE(packed, nullptr);
  std::vector<int32_t> actual(expected.size(), 0x5a5a5a5a);
  ThreadPool pool(2);
  ASSERT_TRUE(packed->run(x, &xZero, nullptr, *s, actual.data(), &pool)) << packed->implementation();
  EXPECT_EQ(actual, expected) << "implementation " << packed->implementation();
}

TEST_F(OneDnnInt8Test, Conv1dAnd3dMatchReference) {
  std::mt19937 rng(17);
  ops::WindowAttributes oneD;
  oneD.pads = {3, 1};
  oneD.dilations = {2};
  oneD.strides = {2};
  checkConvOfRank({2, 6, 37}, {8, 3, 5}, 2, oneD, rng);
  ops::WindowAttributes threeD;
  threeD.pads = {1, 1, 0, 1, 0, 1};
  checkConvOfRank({1, 4, 5, 7, 6}, {6, 4, 3, 3, 2}, 1, threeD, rng);
}

TEST_F(OneDnnInt8Test, ConvDeclinesWhatItCannotTake) {
  std::mt19937 rng(9);
  const Tensor w = randomInt8(DataType::UINT8, {4, 2, 3, 3}, rng, false);
  const Tensor wrongZero = randomInt8(DataType::INT8, {}, rng, false);
  EXPECT_EQ(OneDnnInt8Conv::create({}, 1, w, &wrongZero), nullptr);  // zero point of another type
  const Tensor threeZeros = randomInt8(DataType::UINT8, {3}, rng, false);
  EXPECT_EQ(OneDnnInt8Conv::create({}, 1, w, &threeZeros), nullptr);  // neither 1 nor M values
  const Tensor floats(DataType::FLOAT, {4, 2, 3, 3});
  EXPECT_EQ(OneDnnInt8Conv::create({}, 1, floats, nullptr), nullptr);

  auto packed = OneDnnInt8Conv::create({}, 1, w, nullptr);
  ASSERT_NE(packed, nullptr);
  const Tensor x = randomInt8(DataType::UINT8, {1, 2, 6, 6}, rng, false);
  auto s = resolveConvShapes({}, 1, x, w, nullptr);
  ASSERT_TRUE(s.isOk());
  std::vector<int32_t> y(static_cast<size_t>(shapeSize(s->outShape)));
  const Tensor perRowZero = randomInt8(DataType::UINT8, {2}, rng, false);
  EXPECT_FALSE(packed->run(x, &perRowZero, nullptr, *s, y.data(), nullptr));  // x's zero point must be per tensor
  const Tensor mismatchedZero = randomInt8(DataType::INT8, {}, rng, false);
  EXPECT_FALSE(packed->run(x, &mismatchedZero, nullptr, *s, y.data(), nullptr));
}

// MatMul: A [batch..., M, K] (uint8/int8, per-tensor zero point) x constant B [K, N].
void checkMatMul(DataType aType, DataType bType, bool perColumnZero, Shape aShape, int64_t N, bool extreme,
                 std::mt19937& rng, ThreadPool* pool) {
  const int64_t K = aShape.back();
  SCOPED_TRACE(std::string(dataTypeName(aType)) + "x" + dataTypeName(bType) + " " + shapeToString(aShape) + " N" +
               std::to_string(N) + (perColumnZero ? " perColumn" : ""));
  const Tensor a = randomInt8(aType, aShape, rng, extreme);
  const Tensor b = randomInt8(bType, {K, N}, rng, extreme);
  const Tensor aZero = randomInt8(aType, {}, rng, false);
  const Tensor bZero = randomInt8(bType, perColumnZero ? Shape{N} : Shape{}, rng, false);
  auto plan = planMatMul(a.shape(), b.shape());
  ASSERT_TRUE(plan.isOk());
  auto ai = widenMatMulOperand(a, &aZero, true);
  auto bi = widenMatMulOperand(b, &bZero, false);
  ASSERT_TRUE(ai.isOk() && bi.isOk());
  std::vector<int32_t> expected(static_cast<size_t>(shapeSize(plan->outShape)));
  runMatMul<int32_t>(*plan, ai->data(), bi->data(), expected.data());
  auto packed = OneDnnInt8MatMul::create(b, &bZero);
  ASSERT_NE(packed, nullptr);
  std::vector<int32_t> actual(expected.size(), 0x5a5a5a5a);
  ASSERT_TRUE(packed->run(a, &aZero, *plan, actual.data(), pool)) << packed->implementation();
  EXPECT_EQ(actual, expected) << "implementation " << packed->implementation();
}

TEST_F(OneDnnInt8Test, MatMulMatchesReference) {
  std::mt19937 rng(11);
  ThreadPool pool(2);
  for (DataType bType : {DataType::UINT8, DataType::INT8}) {
    for (bool perColumn : {false, true}) {
      checkMatMul(DataType::UINT8, bType, perColumn, {7, 33}, 19, false, rng, &pool);
      checkMatMul(DataType::UINT8, bType, perColumn, {2, 3, 64}, 48, false, rng, nullptr);
      checkMatMul(DataType::UINT8, bType, perColumn, {1, 256}, 5, true, rng, &pool);
    }
  }
}

TEST_F(OneDnnInt8Test, MatMulDeclinesPerRowZeroPoint) {
  std::mt19937 rng(13);
  const Tensor a = randomInt8(DataType::UINT8, {3, 8}, rng, false);
  const Tensor b = randomInt8(DataType::UINT8, {8, 4}, rng, false);
  const Tensor perRow = randomInt8(DataType::UINT8, {3}, rng, false);
  auto packed = OneDnnInt8MatMul::create(b, nullptr);
  ASSERT_NE(packed, nullptr);
  auto plan = planMatMul(a.shape(), b.shape());
  ASSERT_TRUE(plan.isOk());
  std::vector<int32_t> y(12);
  EXPECT_FALSE(packed->run(a, &perRow, *plan, y.data(), nullptr));
  const Tensor batchedB = randomInt8(DataType::UINT8, {2, 8, 4}, rng, false);
  EXPECT_EQ(OneDnnInt8MatMul::create(batchedB, nullptr), nullptr);
}

// prepare() at kernel creation makes the plan of a static input shape (weights packed once), the first run uses it
// (no second plan) and gives the reference result; shapes and types prepare() cannot take leave nothing behind.
TEST_F(OneDnnInt8Test, PreparedPlansServeTheFirstRunOfTheirShape) {
  std::mt19937 rng(17);
  ops::WindowAttributes attrs;
  attrs.pads = {1, 1, 1, 1};
  const Tensor x = randomInt8(DataType::UINT8, {1, 8, 9, 9}, rng, false);
  const Tensor w = randomInt8(DataType::UINT8, {16, 8, 3, 3}, rng, false);
  const Tensor xZero = randomInt8(DataType::UINT8, {}, rng, false);
  const Tensor wZero = randomInt8(DataType::UINT8, {16}, rng, false);
  auto conv = OneDnnInt8Conv::create(attrs, 1, w, &wZero);
  ASSERT_NE(conv, nullptr);
  conv->prepare(DataType::FLOAT, x.shape(), nullptr);      // not an 8-bit input
  conv->prepare(DataType::UINT8, {1, 3, 9, 9}, nullptr);   // channels W does not take
  conv->prepare(DataType::UINT8, {1, 8, 9}, nullptr);      // rank W does not take
  EXPECT_EQ(conv->planCount(), 0u);
  conv->prepare(DataType::UINT8, x.shape(), nullptr);
  EXPECT_EQ(conv->planCount(), 1u);
  auto s = resolveConvShapes(attrs, 1, x, w, nullptr);
  ASSERT_TRUE(s.isOk());
  auto xi = widenConvOperand(x, &xZero, 1);
  auto wi = widenConvOperand(w, &wZero, 16);
  ASSERT_TRUE(xi.isOk() && wi.isOk());
  std::vector<int32_t> expected(static_cast<size_t>(shapeSize(s->outShape)));
  convolveInt32(xi->data(), wi->data(), nullptr, expected.data(), *s, 1, nullptr);
  std::vector<int32_t> actual(expected.size(), 0x5a5a5a5a);
  ThreadPool pool(2);
  ASSERT_TRUE(conv->run(x, &xZero, nullptr, *s, actual.data(), &pool)) << conv->implementation();
  EXPECT_EQ(actual, expected);
  EXPECT_EQ(conv->planCount(), 1u);

  const Tensor a = randomInt8(DataType::UINT8, {2, 3, 32}, rng, false);
  const Tensor b = randomInt8(DataType::INT8, {32, 12}, rng, false);
  auto matmul = OneDnnInt8MatMul::create(b, nullptr);
  ASSERT_NE(matmul, nullptr);
  matmul->prepare(DataType::UINT8, {2, 3, 31}, nullptr);  // K does not match
  EXPECT_EQ(matmul->planCount(), 0u);
  matmul->prepare(DataType::UINT8, a.shape(), nullptr);
  EXPECT_EQ(matmul->planCount(), 1u);
  auto plan = planMatMul(a.shape(), b.shape());
  ASSERT_TRUE(plan.isOk());
  std::vector<int32_t> y(static_cast<size_t>(shapeSize(plan->outShape)));
  ASSERT_TRUE(matmul->run(a, nullptr, *plan, y.data(), &pool));
  EXPECT_EQ(matmul->planCount(), 1u);
}

// The kernels end to end: each op with its weights as initializers (packed for oneDNN when the kernel is created)
// gives what the same op computes with the weights fed as inputs (the reference loops), bit for bit.
void addInt8(onnx::GraphProto& g, const std::string& name, const std::vector<int64_t>& dims, int32_t type,
             const std::vector<uint8_t>& bytes) {
  onnx::TensorProto& t = *g.add_initializer();
  t.set_name(name);
  t.set_data_type(type);
  for (int64_t d : dims) t.add_dims(d);
  t.set_raw_data(std::string(bytes.begin(), bytes.end()));
}

void addFloat(onnx::GraphProto& g, const std::string& name, const std::vector<float>& v) {
  onnx::TensorProto& t = *g.add_initializer();
  t.set_name(name);
  t.set_data_type(onnx::TensorProto::FLOAT);
  for (float f : v) t.add_float_data(f);
}

std::vector<uint8_t> patternBytes(int64_t count, int64_t salt) {
  std::vector<uint8_t> v(static_cast<size_t>(count));
  for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<uint8_t>((i * 37 + static_cast<size_t>(salt) * 11) % 256);
  return v;
}

// Builds `op` with inputs `inputs`; the weight `weightName` (dims, type, bytes) is an initializer when `constant`,
// else a graph input fed with the same bytes. Returns output 0.
Tensor runInt8Op(const std::string& op, const std::vector<std::string>& inputs, const std::string& weightName,
                 const std::vector<int64_t>& weightDims, int32_t weightType, const std::vector<uint8_t>& weightBytes,
                 const std::function<void(onnx::GraphProto&, onnx::NodeProto&)>& rest, const Tensor& x, bool constant) {
  testing::ModelBuilder m;
  m.input("X", x.shape(), onnx::TensorProto::UINT8);
  std::vector<Tensor> feeds{x};
  if (constant) {
    addInt8(m.proto(), weightName, weightDims, weightType, weightBytes);
  } else {
    m.input(weightName, weightDims, weightType);
    Tensor w(weightType == onnx::TensorProto::UINT8 ? DataType::UINT8 : DataType::INT8, Shape(weightDims));
    std::copy(weightBytes.begin(), weightBytes.end(), static_cast<uint8_t*>(w.rawData()));
    feeds.push_back(w);
  }
  onnx::NodeProto& node = m.node(op, inputs, {"Y"});
  rest(m.proto(), node);
  m.output("Y", {}, op == "MatMulInteger" ? onnx::TensorProto::INT32 : onnx::TensorProto::UINT8);
  auto model = onnx_io::modelFromProto(m.build());
  EXPECT_TRUE(model.isOk()) << model.status().toString();
  if (!model.isOk()) return Tensor();
  ExecutorConfig config;
  config.opsets = model->opsetImports;
  config.intraOpThreads = 2;
  auto executor = GraphExecutor::create(model->graph, config);
  EXPECT_TRUE(executor.isOk()) << executor.status().toString();
  if (!executor.isOk()) return Tensor();
  auto outputs = (*executor)->run(feeds);
  EXPECT_TRUE(outputs.isOk()) << outputs.status().toString();
  return outputs.isOk() && !outputs->empty() ? (*outputs)[0] : Tensor();
}

void expectSameBytes(const Tensor& a, const Tensor& b) {
  ASSERT_TRUE(a.defined() && b.defined());
  ASSERT_EQ(a.shape(), b.shape());
  ASSERT_EQ(a.dtype(), b.dtype());
  const auto* pa = static_cast<const uint8_t*>(a.rawData());
  const auto* pb = static_cast<const uint8_t*>(b.rawData());
  EXPECT_TRUE(std::equal(pa, pa + a.byteSize(), pb));
}

TEST_F(OneDnnInt8Test, QLinearConvWithConstantWeightsMatchesReference) {
  const int64_t C = 6, M = 10;
  Tensor x(DataType::UINT8, {1, C, 13, 9});
  const std::vector<uint8_t> xb = patternBytes(x.numel(), 1);
  std::copy(xb.begin(), xb.end(), static_cast<uint8_t*>(x.rawData()));
  for (int32_t wType : {onnx::TensorProto::UINT8, onnx::TensorProto::INT8}) {
    auto rest = [&](onnx::GraphProto& g, onnx::NodeProto& node) {
      addFloat(g, "x_scale", {0.02f});
      addInt8(g, "x_zero_point", {}, onnx::TensorProto::UINT8, {17});
      std::vector<float> wScale(M);
      for (int64_t i = 0; i < M; ++i) wScale[i] = 0.001f * float(i + 1);
      onnx::TensorProto& ws = *g.add_initializer();
      ws.set_name("w_scale");
      ws.set_data_type(onnx::TensorProto::FLOAT);
      ws.add_dims(M);
      for (float f : wScale) ws.add_float_data(f);
      addInt8(g, "w_zero_point", {M}, wType, patternBytes(M, 5));
      addFloat(g, "y_scale", {0.05f});
      addInt8(g, "y_zero_point", {}, onnx::TensorProto::UINT8, {128});
      onnx::TensorProto& b = *g.add_initializer();
      b.set_name("B");
      b.set_data_type(onnx::TensorProto::INT32);
      b.add_dims(M);
      for (int64_t i = 0; i < M; ++i) b.add_int32_data(static_cast<int32_t>(i * 97) - 400);
      testing::attrInts(node, "pads", {2, 1, 2, 1});
      testing::attrInts(node, "dilations", {2, 1});
      testing::attrInts(node, "strides", {1, 2});
    };
    const std::vector<std::string> inputs{"X", "x_scale", "x_zero_point", "W", "w_scale", "w_zero_point", "y_scale",
                                          "y_zero_point", "B"};
    const std::vector<uint8_t> wb = patternBytes(M * C * 9, 3);
    const Tensor packed = runInt8Op("QLinearConv", inputs, "W", {M, C, 3, 3}, wType, wb, rest, x, true);
    const Tensor reference = runInt8Op("QLinearConv", inputs, "W", {M, C, 3, 3}, wType, wb, rest, x, false);
    expectSameBytes(packed, reference);
  }
}

TEST_F(OneDnnInt8Test, MatMulIntegerAndQLinearMatMulWithConstantWeightsMatchReference) {
  const int64_t K = 40, N = 12;
  Tensor a(DataType::UINT8, {2, 5, K});
  const std::vector<uint8_t> ab = patternBytes(a.numel(), 2);
  std::copy(ab.begin(), ab.end(), static_cast<uint8_t*>(a.rawData()));
  const std::vector<uint8_t> bb = patternBytes(K * N, 4);
  for (int32_t bType : {onnx::TensorProto::UINT8, onnx::TensorProto::INT8}) {
    auto integerRest = [&](onnx::GraphProto& g, onnx::NodeProto&) {
      addInt8(g, "a_zero_point", {}, onnx::TensorProto::UINT8, {9});
      addInt8(g, "b_zero_point", {N}, bType, patternBytes(N, 6));
    };
    const std::vector<std::string> integerInputs{"X", "B", "a_zero_point", "b_zero_point"};
    expectSameBytes(runInt8Op("MatMulInteger", integerInputs, "B", {K, N}, bType, bb, integerRest, a, true),
                    runInt8Op("MatMulInteger", integerInputs, "B", {K, N}, bType, bb, integerRest, a, false));
    auto qlinearRest = [&](onnx::GraphProto& g, onnx::NodeProto&) {
      addFloat(g, "a_scale", {0.03f});
      addInt8(g, "a_zero_point", {}, onnx::TensorProto::UINT8, {9});
      addFloat(g, "b_scale", {0.004f});
      addInt8(g, "b_zero_point", {}, bType, {bType == onnx::TensorProto::UINT8 ? uint8_t(131) : uint8_t(3)});
      addFloat(g, "y_scale", {0.2f});
      addInt8(g, "y_zero_point", {}, onnx::TensorProto::UINT8, {100});
    };
    const std::vector<std::string> qlinearInputs{"X", "a_scale", "a_zero_point", "B", "b_scale", "b_zero_point",
                                                 "y_scale", "y_zero_point"};
    expectSameBytes(runInt8Op("QLinearMatMul", qlinearInputs, "B", {K, N}, bType, bb, qlinearRest, a, true),
                    runInt8Op("QLinearMatMul", qlinearInputs, "B", {K, N}, bType, bb, qlinearRest, a, false));
  }
}

// DynamicQuantizeLinear's vectorized, threaded quantization gives saturateQuantize's bytes: values halfway between
// integers (round half to even), NaNs (the zero point), values beyond the range (saturated), odd lengths (tails).
TEST(DynamicQuantizeLinearKernel, VectorizedQuantizationMatchesTheScalarRule) {
  const int64_t n = 40009;
  std::vector<float> x(static_cast<size_t>(n));
  // Quarter steps over [-100, 155]: the range is 255 wide, so scale is exactly 1 and the .5 values are exact halves.
  for (int64_t i = 0; i < n; ++i) x[i] = static_cast<float>((i * 7919) % 1021) * 0.25f - 100.0f;
  x[5] = std::nanf("");
  x[n - 1] = std::nanf("");
  testing::ModelBuilder m;
  m.input("X", {n});
  m.node("DynamicQuantizeLinear", {"X"}, {"Y", "Y_scale", "Y_zero_point"});
  m.output("Y", {}, onnx::TensorProto::UINT8);
  m.output("Y_scale", {}, onnx::TensorProto::FLOAT);
  m.output("Y_zero_point", {}, onnx::TensorProto::UINT8);
  auto model = onnx_io::modelFromProto(m.build());
  ASSERT_TRUE(model.isOk()) << model.status().toString();
  ExecutorConfig config;
  config.opsets = model->opsetImports;
  config.intraOpThreads = 2;
  auto executor = GraphExecutor::create(model->graph, config);
  ASSERT_TRUE(executor.isOk()) << executor.status().toString();
  const std::vector<Tensor> feeds{Tensor::fromVector<float>({n}, x)};
  auto outputs = (*executor)->run(feeds);
  ASSERT_TRUE(outputs.isOk()) << outputs.status().toString();
  const float scale = (*outputs)[1].template data<float>()[0];
  const int32_t zeroPoint = (*outputs)[2].template data<uint8_t>()[0];
  float lo = 0.0f, hi = 0.0f;
  for (float v : x) {
    if (v < lo) lo = v;
    if (v > hi) hi = v;
  }
  ASSERT_EQ(scale, (hi - lo) / 255.0f);
  ASSERT_EQ(scale, 1.0f);
  ASSERT_EQ(zeroPoint, saturateQuantize<uint8_t>(0.0f - lo / scale, 0));
  const uint8_t* y = (*outputs)[0].template data<uint8_t>();
  for (int64_t i = 0; i < n; ++i) ASSERT_EQ(y[i], saturateQuantize<uint8_t>(x[i] / scale, zeroPoint)) << i;
}

}  // namespace
}  // namespace kiln::cpu
