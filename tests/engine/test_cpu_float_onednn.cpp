// The opt-in oneDNN float convolution (ep/cpu/kernels/onednn_conv.h, kiln.cpu.float_kernels=onednn) agrees with a
// double-precision reference within float rounding: groups, strides, dilations, asymmetric pads, bias or none, 1-D and
// 2-D, batches; and the config key takes only its two values.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "ep/cpu/kernels/conv_helpers.h"
#include "ep/cpu/kernels/onednn_conv.h"
#include "ep/cpu/thread_pool.h"
#include "kiln/config_keys.h"
#include "session/session_config.h"

namespace kiln::cpu {
namespace {

Tensor randomFloat(Shape shape, std::mt19937& rng) {
  Tensor t(DataType::FLOAT, shape);
  std::uniform_real_distribution<float> value(-1.0f, 1.0f);
  for (int64_t i = 0; i < t.numel(); ++i) t.data<float>()[i] = value(rng);
  return t;
}

struct Case {
  int64_t N, C, M, group, H, W, kH, kW, stride, dilation, pad;
  bool bias;
};

// y = conv(x, w) + b in double, for the 2-D geometry `g` (1-D as height 1).
std::vector<double> reference(const Case& c, const ops::WindowGeometry& g, const float* x, const float* w,
                              const float* b) {
  const bool oneD = g.rank() == 1;
  const int64_t inH = oneD ? 1 : g.in[0], inW = g.in[g.rank() - 1], outH = oneD ? 1 : g.out[0],
                outW = g.out[g.rank() - 1];
  const int64_t Cg = c.C / c.group, Mg = c.M / c.group, kH = oneD ? 1 : c.kH;
  const int64_t pT = oneD ? 0 : g.padBegin[0], pL = g.padBegin[g.rank() - 1];
  std::vector<double> y(static_cast<size_t>(c.N * c.M * outH * outW));
  for (int64_t n = 0; n < c.N; ++n)
    for (int64_t m = 0; m < c.M; ++m)
      for (int64_t oh = 0; oh < outH; ++oh)
        for (int64_t ow = 0; ow < outW; ++ow) {
          double acc = b ? b[m] : 0.0;
          const int64_t grp = m / Mg;
          for (int64_t ci = 0; ci < Cg; ++ci)
            for (int64_t kh = 0; kh < kH; ++kh)
              for (int64_t kw = 0; kw < c.kW; ++kw) {
                const int64_t ih = oh * c.stride - pT + kh * c.dilation, iw = ow * c.stride - pL + kw * c.dilation;
                if (ih < 0 || ih >= inH || iw < 0 || iw >= inW) continue;
                acc += double(x[((n * c.C + grp * Cg + ci) * inH + ih) * inW + iw]) *
                       double(w[((m * Cg + ci) * kH + kh) * c.kW + kw]);
              }
          y[((n * c.M + m) * outH + oh) * outW + ow] = acc;
        }
  return y;
}

void check(const Case& c, bool oneD, std::mt19937& rng, ThreadPool* pool) {
  SCOPED_TRACE("N" + std::to_string(c.N) + " C" + std::to_string(c.C) + " M" + std::to_string(c.M) + " g" +
               std::to_string(c.group) + " " + std::to_string(c.H) + "x" + std::to_string(c.W) + " k" +
               std::to_string(c.kH) + "x" + std::to_string(c.kW) + " s" + std::to_string(c.stride) + " d" +
               std::to_string(c.dilation) + " p" + std::to_string(c.pad) + (c.bias ? " bias" : "") +
               (oneD ? " 1-D" : ""));
  const Shape xShape = oneD ? Shape{c.N, c.C, c.W} : Shape{c.N, c.C, c.H, c.W};
  const Shape wShape = oneD ? Shape{c.M, c.C / c.group, c.kW} : Shape{c.M, c.C / c.group, c.kH, c.kW};
  const Tensor x = randomFloat(xShape, rng), w = randomFloat(wShape, rng), b = randomFloat({c.M}, rng);
  ops::WindowAttributes attrs;
  attrs.strides.assign(oneD ? 1 : 2, c.stride);
  attrs.dilations.assign(oneD ? 1 : 2, c.dilation);
  attrs.pads = oneD ? std::vector<int64_t>{c.pad, c.pad + 1} : std::vector<int64_t>{c.pad + 1, c.pad, c.pad, c.pad + 1};
  auto shapes = resolveConvShapes(attrs, c.group, x, w, c.bias ? &b : nullptr);
  ASSERT_TRUE(shapes.isOk()) << shapes.status().toString();
  const ConvShapes& s = shapes.value();
  auto conv = OneDnnFloatConv::create(c.group, w);
  ASSERT_NE(conv, nullptr);
  Tensor y(DataType::FLOAT, s.outShape);
  ASSERT_TRUE(conv->run(x.data<float>(), c.bias ? b.data<float>() : nullptr, s, y.data<float>(), pool))
      << conv->implementation();
  const std::vector<double> expected =
      reference(c, s.geometry, x.data<float>(), w.data<float>(), c.bias ? b.data<float>() : nullptr);
  ASSERT_EQ(static_cast<int64_t>(expected.size()), y.numel());
  const double taps = double(c.C / c.group * c.kH * c.kW);
  for (size_t i = 0; i < expected.size(); ++i) {
    ASSERT_NEAR(y.data<float>()[i], expected[i], 1e-6 * taps * 4 + 1e-6) << "at " << i;
  }
}

TEST(CpuFloatOneDnn, ConvMatchesDoubleReference) {
  std::mt19937 rng(7);
  ThreadPool pool(2);
  const std::vector<Case> cases = {
      {1, 8, 16, 1, 9, 11, 3, 3, 1, 1, 1, true},   {2, 8, 12, 2, 10, 7, 3, 3, 2, 1, 0, false},
      {1, 16, 24, 1, 13, 13, 1, 1, 1, 1, 0, true}, {1, 6, 6, 3, 12, 12, 5, 5, 1, 2, 2, true},
      {1, 3, 16, 1, 33, 31, 3, 3, 2, 1, 1, true},  {3, 4, 5, 1, 6, 9, 2, 3, 1, 1, 0, false},
  };
  for (const Case& c : cases) {
    check(c, false, rng, &pool);
    check(c, true, rng, nullptr);
  }
}

TEST(CpuFloatOneDnn, ConfigKeyTakesOnlyItsValues) {
  SessionOptions options;
  ASSERT_TRUE(parseSessionConfig(options).isOk());
  EXPECT_FALSE(parseSessionConfig(options)->cpuFloatOnOneDnn);  // the default: im2col + GEMM
  for (const char* gemm : {"gemm", "openblas"}) {  // openblas: the old name, still accepted
    ASSERT_TRUE(options.addConfigEntry(config::kCpuFloatKernels, gemm).isOk());
    ASSERT_TRUE(parseSessionConfig(options).isOk()) << gemm;
    EXPECT_FALSE(parseSessionConfig(options)->cpuFloatOnOneDnn) << gemm;
  }
  ASSERT_TRUE(options.addConfigEntry(config::kCpuFloatKernels, "onednn").isOk());
  EXPECT_TRUE(parseSessionConfig(options)->cpuFloatOnOneDnn);
  ASSERT_TRUE(options.addConfigEntry(config::kCpuFloatKernels, "mkl").isOk());
  auto bad = parseSessionConfig(options);
  ASSERT_FALSE(bad.isOk());
  EXPECT_EQ(bad.status().code(), StatusCode::INVALID_ARGUMENT);
  EXPECT_NE(bad.status().message().find(config::kCpuFloatKernels), std::string::npos);
}

}  // namespace
}  // namespace kiln::cpu
