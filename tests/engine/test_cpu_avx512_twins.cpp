// The AVX-512 twins of the CPU EP's elementwise and epilogue loops (fused Conv chains, bias add,
// BatchNormalization's affine pass, float Add/Sub/Mul/Div runs) and of MatMulNBits' int8 dot give the results of the path they replace bit for
// bit: each test runs the same work with the twins on and off (setAvx512TwinsEnabled) on random data with odd sizes
// and vector tails. Skipped where the CPU has no AVX-512F (there only the baseline path exists).
#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "ep/cpu/elementwise_epilogue.h"
#include "ep/cpu/graph_executor.h"
#include "ep/cpu/kernels/cpu_isa.h"
#include "ep/cpu/kernels/matmul_nbits.h"
#include "model_builder.h"
#include "onnx/model_loader.h"

namespace kiln {
namespace {

using testing::ModelBuilder;

// Turns the twins off for its lifetime, so a failed assertion cannot leave them off for later tests.
class BaselineOnly {
 public:
  BaselineOnly() { cpu::setAvx512TwinsEnabled(false); }
  ~BaselineOnly() { cpu::setAvx512TwinsEnabled(true); }
  BaselineOnly(const BaselineOnly&) = delete;
  BaselineOnly& operator=(const BaselineOnly&) = delete;
};

std::vector<float> randomValues(size_t n, uint32_t seed, float lo = -4.f, float hi = 4.f) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(lo, hi);
  std::vector<float> v(n);
  for (float& x : v) x = dist(rng);
  return v;
}

bool sameBits(const std::vector<float>& a, const std::vector<float>& b) {
  return a.size() == b.size() && std::memcmp(a.data(), b.data(), a.size() * sizeof(float)) == 0;
}

#define SKIP_WITHOUT_AVX512()                                               \
  do {                                                                      \
    if (!cpu::cpuHasAvx512()) {                                             \
      GTEST_SKIP() << "this CPU has no AVX-512F (or it is disabled)";       \
    }                                                                       \
  } while (0)

// KILN_CPU_DISABLE_AVX512: unset, empty or "0" keep the twins; anything else turns them off.
TEST(CpuAvx512Twins, EnvironmentSwitchValues) {
  EXPECT_FALSE(cpu::disablesAvx512(nullptr));
  EXPECT_FALSE(cpu::disablesAvx512(""));
  EXPECT_FALSE(cpu::disablesAvx512("0"));
  EXPECT_TRUE(cpu::disablesAvx512("1"));
  EXPECT_TRUE(cpu::disablesAvx512("yes"));
  EXPECT_TRUE(cpu::disablesAvx512("00"));
}

TEST(CpuAvx512Twins, HookTurnsTheTwinsOffAndOnAgain) {
  SKIP_WITHOUT_AVX512();
  {
    BaselineOnly off;
    EXPECT_FALSE(cpu::cpuHasAvx512());
  }
  EXPECT_TRUE(cpu::cpuHasAvx512());
}

// Every op kind of a fused chain, every binary operator in both operand orders and with each operand kind, over
// ranges of odd lengths at odd offsets (vector tails), one value per channel.
TEST(CpuAvx512Twins, EpilogueChainMatchesBaselineBitForBit) {
  SKIP_WITHOUT_AVX512();
  using Op = cpu::ElementwiseEpilogue::Op;
  cpu::ElementwiseEpilogue chain;
  chain.channels = 3;
  chain.registers = 2;
  chain.inputCount = 1;
  auto add = [&](Op op) { chain.ops.push_back(std::move(op)); };
  Op save;
  save.kind = Op::Kind::kSave;
  save.index = 0;
  add(save);
  for (char binary : {'+', '-', '*', '/'}) {
    for (bool first : {false, true}) {
      for (Op::Operand operand : {Op::Operand::kConstant, Op::Operand::kRegister, Op::Operand::kInput}) {
        Op op;
        op.kind = Op::Kind::kBinary;
        op.binary = binary;
        op.operandFirst = first;
        op.operand = operand;
        op.index = 0;
        if (operand == Op::Operand::kConstant) op.values = binary == '/' ? std::vector<float>{1.7f, -2.5f, 3.1f}
                                                                        : std::vector<float>{0.3f};
        add(op);
        Op clip;  // keeps values bounded so that later ops see ordinary numbers
        clip.kind = Op::Kind::kClip;
        clip.a = -8.f;
        clip.b = 8.f;
        add(clip);
      }
    }
  }
  Op unary;
  for (Op::Kind kind : {Op::Kind::kRelu, Op::Kind::kSigmoid, Op::Kind::kHardSigmoid, Op::Kind::kLeakyRelu,
                        Op::Kind::kHardSwish, Op::Kind::kClip}) {
    unary.kind = kind;
    unary.a = kind == Op::Kind::kClip ? -0.5f : 0.2f;
    unary.b = kind == Op::Kind::kClip ? 0.75f : 0.5f;
    Op shift;  // back to both signs between activations
    shift.kind = Op::Kind::kBinary;
    shift.binary = '-';
    shift.operand = Op::Operand::kConstant;
    shift.values = {0.4f};
    add(unary);
    add(shift);
  }
  Op save1 = save;
  save1.index = 1;
  add(save1);
  Op sig;
  sig.kind = Op::Kind::kSigmoid;
  add(sig);
  Op mulSaved;
  mulSaved.kind = Op::Kind::kBinary;
  mulSaved.binary = '*';
  mulSaved.operand = Op::Operand::kRegister;
  mulSaved.index = 1;
  add(mulSaved);

  const std::vector<float> input = randomValues(4096, 7);
  const std::vector<float> start = randomValues(4096, 11, -30.f, 30.f);
  const float* inputs[] = {input.data()};
  for (int64_t count : {1, 3, 15, 16, 17, 31, 255, 256, 257, 1000, 3001}) {
    for (int64_t offset : {0, 1, 5}) {
      for (int64_t channel = 0; channel < 3; ++channel) {
        std::vector<float> twin = start, baseline = start;
        chain.apply(twin.data(), offset, count, channel, inputs);
        {
          BaselineOnly off;
          chain.apply(baseline.data(), offset, count, channel, inputs);
        }
        ASSERT_TRUE(sameBits(twin, baseline)) << "count " << count << " offset " << offset << " channel " << channel;
      }
    }
  }
}

// Runs `model` on `inputs` with the twins on and off, on 1 and 2 threads, and expects identical outputs.
void expectTwinsMatch(const onnx::ModelProto& proto, const std::vector<Tensor>& inputs, size_t expectedFused = 0) {
  auto model = onnx_io::modelFromProto(proto);
  ASSERT_TRUE(model.isOk()) << model.status().toString();
  for (int threads : {1, 2}) {
    cpu::ExecutorConfig config;
    config.opsets = model->opsetImports;
    config.intraOpThreads = threads;
    auto executor = cpu::GraphExecutor::create(model->graph, config);
    ASSERT_TRUE(executor.isOk()) << executor.status().toString();
    if (expectedFused) {
      EXPECT_EQ((*executor)->fusedNodeCount(), expectedFused);
    }
    auto twin = (*executor)->run(inputs);
    ASSERT_TRUE(twin.isOk()) << twin.status().toString();
    Result<std::vector<Tensor>> baseline = std::vector<Tensor>{};
    {
      BaselineOnly off;
      baseline = (*executor)->run(inputs);
    }
    ASSERT_TRUE(baseline.isOk()) << baseline.status().toString();
    ASSERT_EQ(twin->size(), baseline->size());
    for (size_t i = 0; i < twin->size(); ++i) {
      const Tensor& a = (*twin)[i];
      const Tensor& b = (*baseline)[i];
      ASSERT_EQ(a.shape(), b.shape()) << "output " << i;
      const float* pa = a.data<float>();
      const float* pb = b.data<float>();
      EXPECT_TRUE(sameBits(std::vector<float>(pa, pa + a.numel()), std::vector<float>(pb, pb + b.numel())))
          << "output " << i << " differs with " << threads << " threads";
    }
  }
}

// Depthwise convs (3x3 and 5x5, stride 1 and 2) and a 3x3 conv with bias on odd plane sizes, followed by fused
// chains (scale, shift, HardSwish as Add/Clip/Mul/Div, Sigmoid, HardSigmoid) and BatchNormalization.
TEST(CpuAvx512Twins, ConvChainsAndBatchNormMatchBaselineBitForBit) {
  SKIP_WITHOUT_AVX512();
  const int64_t C = 5, H = 23, W = 37;
  ModelBuilder m(13);
  m.input("X", {1, C, H, W});
  uint32_t seed = 100;
  auto weights = [&](const std::string& name, const std::vector<int64_t>& dims) {
    size_t n = 1;
    for (int64_t d : dims) n *= static_cast<size_t>(d);
    m.initializer(name, dims, randomValues(n, ++seed, -1.f, 1.f));
  };
  weights("W3", {C, 1, 3, 3});
  weights("B3", {C});
  weights("W5", {C, 1, 5, 5});
  weights("B5", {C});
  weights("Wf", {7, C, 3, 3});
  weights("Bf", {7});
  weights("scale", {1, C, 1, 1});
  weights("shift", {1, C, 1, 1});
  m.initializer("three", {}, {3.f});
  m.initializer("zero", {}, {0.f});
  m.initializer("six", {}, {6.f});
  auto& dw3 = m.node("Conv", {"X", "W3", "B3"}, {"d3"});
  testing::attrInt(dw3, "group", C);
  testing::attrInts(dw3, "pads", {1, 1, 1, 1});
  m.node("Mul", {"d3", "scale"}, {"d3s"});
  m.node("Add", {"d3s", "shift"}, {"d3a"});
  m.node("Add", {"d3a", "three"}, {"t"});
  m.node("Clip", {"t", "zero", "six"}, {"cl"});
  m.node("Mul", {"d3a", "cl"}, {"h"});
  m.node("Div", {"h", "six"}, {"Y1"});
  auto& dw5 = m.node("Conv", {"X", "W5", "B5"}, {"d5"});
  testing::attrInt(dw5, "group", C);
  testing::attrInts(dw5, "pads", {2, 2, 2, 2});
  testing::attrInts(dw5, "strides", {2, 2});
  m.node("Sigmoid", {"d5"}, {"Y2"});
  auto& full = m.node("Conv", {"X", "Wf", "Bf"}, {"f"});
  testing::attrInts(full, "pads", {1, 1, 1, 1});
  auto& hs = m.node("HardSigmoid", {"f"}, {"Y3"});
  testing::attrFloat(hs, "alpha", 0.2f);
  weights("bnScale", {C});
  weights("bnBias", {C});
  weights("bnMean", {C});
  m.initializer("bnVar", {C}, {0.5f, 1.f, 1.5f, 2.f, 2.5f});
  m.node("BatchNormalization", {"X", "bnScale", "bnBias", "bnMean", "bnVar"}, {"Y4"});
  for (const char* y : {"Y1", "Y2", "Y3", "Y4"}) m.output(y);
  expectTwinsMatch(m.build(), {Tensor::fromVector<float>({1, C, H, W}, randomValues(C * H * W, 1))}, 8);
}

// Depthwise convs keep their AVX2 twin on AVX-512 CPUs (an AVX-512 build of that loop contracted its tap sums
// differently): every depthwise loop shape (3x3 and 5x5 at strides 1 and 2, 7x7, the generic loop) on planes
// wider than a vector and with tails, alone (no fused chain after them).
TEST(CpuAvx512Twins, DepthwiseConvsMatchBaselineBitForBit) {
  SKIP_WITHOUT_AVX512();
  const int64_t C = 3, H = 21, W = 45;
  ModelBuilder m(13);
  m.input("X", {1, C, H, W});
  struct Case {
    int64_t k, stride, dilation;
  };
  const Case cases[] = {{3, 1, 1}, {3, 2, 1}, {5, 1, 1}, {5, 2, 1}, {7, 1, 1}, {3, 1, 2}, {3, 3, 1}};
  uint32_t seed = 200;
  int index = 0;
  for (const Case& c : cases) {
    const std::string w = "W" + std::to_string(index), b = "B" + std::to_string(index),
                      y = "Y" + std::to_string(index);
    m.initializer(w, {C, 1, c.k, c.k}, randomValues(static_cast<size_t>(C * c.k * c.k), ++seed, -1.f, 1.f));
    m.initializer(b, {C}, randomValues(C, ++seed));
    auto& conv = m.node("Conv", {"X", w, b}, {y});
    const int64_t pad = c.k / 2 * c.dilation;
    testing::attrInt(conv, "group", C);
    testing::attrInts(conv, "pads", {pad, pad, pad, pad});
    testing::attrInts(conv, "strides", {c.stride, c.stride});
    testing::attrInts(conv, "dilations", {c.dilation, c.dilation});
    m.output(y);
    ++index;
  }
  expectTwinsMatch(m.build(), {Tensor::fromVector<float>({1, C, H, W}, randomValues(C * H * W, 3))});
}

// Add, Sub, Mul and Div with every broadcast shape the kernels plan differently: same shapes, a scalar on either
// side, a per-channel [1, C, 1, 1] operand, a short repeating last dim, and odd lengths.
TEST(CpuAvx512Twins, BroadcastArithmeticMatchesBaselineBitForBit) {
  SKIP_WITHOUT_AVX512();
  const int64_t C = 3, H = 17, W = 19;
  ModelBuilder m(13);
  m.input("A", {2, C, H, W});
  m.input("B", {2, C, H, W});
  m.input("S", {});
  m.input("P", {1, C, 1, 1});
  m.input("R", {W});
  m.input("T", {3});
  m.input("U", {7, 5, 3});
  int out = 0;
  for (const char* op : {"Add", "Sub", "Mul", "Div"}) {
    for (auto [x, y] : {std::pair{"A", "B"}, std::pair{"A", "S"}, std::pair{"S", "A"}, std::pair{"P", "A"},
                        std::pair{"A", "P"}, std::pair{"A", "R"}, std::pair{"U", "T"}, std::pair{"T", "U"}}) {
      const std::string name = "Y" + std::to_string(out++);
      m.node(op, {x, y}, {name});
      m.output(name);
    }
  }
  auto away = [](std::vector<float> v) {  // keeps divisors away from zero
    for (float& x : v) x = x < 0 ? x - 0.25f : x + 0.25f;
    return v;
  };
  expectTwinsMatch(m.build(), {Tensor::fromVector<float>({2, C, H, W}, away(randomValues(2 * C * H * W, 1))),
                               Tensor::fromVector<float>({2, C, H, W}, away(randomValues(2 * C * H * W, 2))),
                               Tensor::fromVector<float>({}, {1.375f}),
                               Tensor::fromVector<float>({1, C, 1, 1}, away(randomValues(C, 3))),
                               Tensor::fromVector<float>({W}, away(randomValues(W, 4))),
                               Tensor::fromVector<float>({3}, away(randomValues(3, 5))),
                               Tensor::fromVector<float>({7, 5, 3}, away(randomValues(105, 6)))});
}

// MatMulNBits at accuracy_level 4: the int8 dot's VNNI twin against its AVX2 loop, for blocks of 32 (four per 64-byte
// step, a partial last step), 64 (two, a partial last step), 128 and 256 (several steps per block), rows of B in
// groups of four and alone.
TEST(CpuAvx512Twins, MatMulNBitsInt8DotMatchesBaselineBitForBit) {
  SKIP_WITHOUT_AVX512();
  for (auto [K, blockSize] : {std::pair<int64_t, int64_t>{32 * 7 - 5, 32}, {64 * 5, 64}, {128 * 3, 128},
                              {256 * 2 + 40, 256}}) {
    cpu::nbits::Layout l;
    l.K = K;
    l.N = 11;
    l.bits = 4;
    l.blockSize = blockSize;
    l.kBlocks = (K + blockSize - 1) / blockSize;
    l.blobSize = blockSize / 2;
    ASSERT_TRUE(cpu::nbits::int8DotSupported(l));
    std::mt19937 rng(static_cast<uint32_t>(K));
    std::vector<uint8_t> b(static_cast<size_t>(l.N * l.kBlocks * l.blobSize));
    for (uint8_t& x : b) x = static_cast<uint8_t>(rng());
    cpu::nbits::BlockParams p;
    p.scales = randomValues(static_cast<size_t>(l.N * l.kBlocks), 7, 0.01f, 0.1f);
    p.zeroPoints = randomValues(p.scales.size(), 8, 0.f, 15.f);
    for (size_t i = 0; i < p.scales.size(); ++i) p.scaledZeroPoints.push_back(p.scales[i] * p.zeroPoints[i]);
    const std::vector<float> a = randomValues(static_cast<size_t>(K), 9);
    std::vector<int8_t> codes(static_cast<size_t>(cpu::nbits::int8RowLength(l)));
    std::vector<float> aScales(static_cast<size_t>(l.kBlocks)), sums(aScales.size());
    cpu::nbits::quantizeActivationRowForDot(l, a.data(), codes.data(), aScales.data(), sums.data());
    std::vector<float> twin(static_cast<size_t>(l.N)), baseline(twin.size());
    cpu::nbits::dotRowsInt8(l, b.data(), p, codes.data(), aScales.data(), sums.data(), 0, l.N, twin.data());
    {
      BaselineOnly off;
      cpu::nbits::dotRowsInt8(l, b.data(), p, codes.data(), aScales.data(), sums.data(), 0, l.N, baseline.data());
    }
    EXPECT_TRUE(sameBits(twin, baseline)) << "K " << K << ", blocks of " << blockSize;
  }
}

}  // namespace
}  // namespace kiln
