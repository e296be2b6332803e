// The oneDNN int8 convolution and matmul (ep/cpu/kernels/onednn_int8.h) give the reference int32 loops' results bit
// for bit: uint8 weights shifted to int8 with zero-point compensation, per-tensor and per-channel weight zero points,
// nonzero activation zero points (padding included), dilations, strides, groups (depthwise too), 1x1 and 3x3
// kernels, odd sizes, and the extreme values where a saturating 16-bit accumulation would differ.
#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "ep/cpu/kernels/conv_helpers.h"
#include "ep/cpu/kernels/matmul_helpers.h"
#include "ep/cpu/kernels/onednn_int8.h"
#include "ep/cpu/thread_pool.h"

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

}  // namespace
}  // namespace kiln::cpu
