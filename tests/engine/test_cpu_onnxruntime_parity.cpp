// The CPU EP computes what onnxruntime's CPU EP computes, bit for bit, in the float ops whose last-bit
// differences a quantized model turns into visible ones: a DynamicQuantizeLinear after them rounds a one-ulp
// difference into a different uint8 and scale (issue 19). Expected values are onnxruntime-node 1.30's outputs
// for the same models.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "ep/cpu/graph_executor.h"
#include "model_builder.h"
#include "onnx/model_loader.h"

namespace kiln {
namespace {

using testing::ModelBuilder;

// x[i] = ((7 i) mod 13) / 8 - 0.75: exact in float, so the inputs are the same on both sides.
std::vector<float> sampleInput(size_t count) {
  std::vector<float> x(count);
  for (size_t i = 0; i < count; ++i) x[i] = static_cast<float>((i * 7) % 13) / 8.0f - 0.75f;
  return x;
}

using testing::attrString;

// Runs `m` once on the CPU EP (`threads` intra-op threads) and returns its outputs.
std::vector<Tensor> runOnCpu(const ModelBuilder& m, const std::vector<Tensor>& inputs, int threads = 1) {
  auto model = onnx_io::modelFromProto(m.build());
  EXPECT_TRUE(model.isOk()) << model.status().toString();
  cpu::ExecutorConfig config;
  config.opsets = model->opsetImports;
  config.intraOpThreads = threads;
  auto executor = cpu::GraphExecutor::create(model->graph, config);
  EXPECT_TRUE(executor.isOk()) << executor.status().toString();
  auto outputs = (*executor)->run(inputs);
  EXPECT_TRUE(outputs.isOk()) << outputs.status().toString();
  return outputs.isOk() ? std::move(*outputs) : std::vector<Tensor>{};
}

// Runs one Resize (mode linear, opset 13) of a 1x1xHxW sample input to `sizes` on the CPU EP.
std::vector<float> runResize(const std::string& coordinates, int64_t h, int64_t w,
                             std::vector<int64_t> sizes) {
  ModelBuilder m;
  m.input("X", {1, 1, h, w});
  m.initializer("roi", {0}, {});
  onnx::TensorProto& sizesProto = *m.proto().add_initializer();
  sizesProto.set_name("sizes");
  sizesProto.set_data_type(onnx::TensorProto::INT64);
  sizesProto.add_dims(4);
  for (int64_t v : sizes) sizesProto.add_int64_data(v);
  onnx::NodeProto& node = m.node("Resize", {"X", "roi", "", "sizes"}, {"Y"});
  attrString(node, "mode", "linear");
  attrString(node, "coordinate_transformation_mode", coordinates);
  m.output("Y");
  const auto x = sampleInput(static_cast<size_t>(h * w));
  const std::vector<Tensor> outputs = runOnCpu(m, {Tensor::fromVector<float>({1, 1, h, w}, x)});
  if (outputs.empty()) return {};
  const float* y = outputs[0].data<float>();
  return std::vector<float>(y, y + outputs[0].numel());
}

// Bilinear Resize was computed in double with separable passes: up to one ulp off onnxruntime's float
// arithmetic, enough to change the 34th DynamicQuantizeLinear of a quantized U-Net and 1.6% of its mask.
TEST(CpuOnnxruntimeParity, BilinearResizeHalfPixelMatchesBitForBit) {
  const std::vector<float> expected{-0x1.8p-1f, -0x1.999998p-2f, 0x1.p-3f, -0x1.4cccd4p-2f, -0x1.4p-1f};
  EXPECT_EQ(runResize("half_pixel", 1, 3, {1, 1, 1, 5}), expected);
}

TEST(CpuOnnxruntimeParity, BilinearResizeAlignCornersMatchesBitForBit) {
  const std::vector<float> expected{-0x1.8p-1f,      -0x1.d55552p-2f, -0x1.555552p-3f, 0x1.p-3f,
                                    -0x1.000004p-3f, -0x1.7ffffcp-2f, -0x1.4p-1f};
  EXPECT_EQ(runResize("align_corners", 1, 3, {1, 1, 1, 7}), expected);
}

TEST(CpuOnnxruntimeParity, BilinearResizePytorchHalfPixelMatchesBitForBit) {
  const std::vector<float> expected{-0x1.8p-1f, -0x1.999998p-2f, 0x1.p-3f,   -0x1.4cccd4p-2f, -0x1.4p-1f,
                                    -0x1.p-2f,  -0x1.ccccccp-3f, -0x1.8p-3f, -0x1.333332p-3f, -0x1.p-3f,
                                    0x1.p-2f,   -0x1.9999a8p-5f, -0x1.p-1f,  0x1.999a2p-6f,   0x1.8p-2f};
  EXPECT_EQ(runResize("pytorch_half_pixel", 2, 3, {1, 1, 3, 5}), expected);
}

// An all-zero input (a dead Relu's output) has an empty range: onnxruntime gives scale 1 where ONNX's formula
// divides by 0; Kiln gave scale 0. Only the scale output differed, which is what a first-divergence search
// reads.
TEST(CpuOnnxruntimeParity, DynamicQuantizeLinearOfZerosHasScaleOne) {
  ModelBuilder m;
  m.input("X", {4});
  m.node("DynamicQuantizeLinear", {"X"}, {"Y", "Y_scale", "Y_zero_point"});
  m.output("Y", {}, onnx::TensorProto::UINT8);
  m.output("Y_scale");
  m.output("Y_zero_point", {}, onnx::TensorProto::UINT8);
  const std::vector<Tensor> outputs = runOnCpu(m, {Tensor::fromVector<float>({4}, {0.f, 0.f, 0.f, 0.f})});
  ASSERT_EQ(outputs.size(), 3u);
  EXPECT_EQ(outputs[1].data<float>()[0], 1.0f);
  EXPECT_EQ(outputs[2].data<uint8_t>()[0], 0);
  for (int i = 0; i < 4; ++i) EXPECT_EQ(outputs[0].data<uint8_t>()[i], 0) << i;
}

// ConvInteger accumulates exactly in int32, as onnxruntime's does, so splitting it over threads changes
// nothing: a dilated, padded 3x3 convolution of uint8 operands with zero points against a direct sum.
TEST(CpuOnnxruntimeParity, ConvIntegerIsExactOnAnyThreadCount) {
  const int64_t C = 8, M = 16, H = 40, W = 40;
  std::vector<uint8_t> x(static_cast<size_t>(C * H * W)), w(static_cast<size_t>(M * C * 9));
  for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<uint8_t>((i * 37) % 251);
  for (size_t i = 0; i < w.size(); ++i) w[i] = static_cast<uint8_t>((i * 53) % 241);
  ModelBuilder m;
  m.input("X", {1, C, H, W}, onnx::TensorProto::UINT8);
  auto addUint8 = [&](const std::string& name, const std::vector<int64_t>& dims,
                      const std::vector<uint8_t>& v) {
    onnx::TensorProto& t = *m.proto().add_initializer();
    t.set_name(name);
    t.set_data_type(onnx::TensorProto::UINT8);
    for (int64_t d : dims) t.add_dims(d);
    t.set_raw_data(std::string(v.begin(), v.end()));
  };
  addUint8("W", {M, C, 3, 3}, w);
  addUint8("x_zero_point", {}, {3});
  addUint8("w_zero_point", {}, {120});
  onnx::NodeProto& conv = m.node("ConvInteger", {"X", "W", "x_zero_point", "w_zero_point"}, {"Y"});
  testing::attrInts(conv, "pads", {2, 2, 2, 2});
  testing::attrInts(conv, "dilations", {2, 2});
  m.output("Y", {}, onnx::TensorProto::INT32);
  const Tensor input = Tensor::fromVector<uint8_t>({1, C, H, W}, x);
  const std::vector<Tensor> one = runOnCpu(m, {input}, 1), two = runOnCpu(m, {input}, 2);
  ASSERT_EQ(one.size(), 1u);
  ASSERT_EQ(two.size(), 1u);
  ASSERT_EQ(one[0].shape(), (Shape{1, M, H, W}));
  const int32_t* y1 = one[0].data<int32_t>();
  const int32_t* y2 = two[0].data<int32_t>();
  for (int64_t i = 0; i < M * H * W; ++i) ASSERT_EQ(y1[i], y2[i]) << i;
  for (int64_t m0 = 0; m0 < M; m0 += 5) {
    for (int64_t r = 0; r < H; r += 3) {
      for (int64_t c = 0; c < W; c += 7) {
        int64_t sum = 0;
        for (int64_t ci = 0; ci < C; ++ci) {
          for (int64_t kh = 0; kh < 3; ++kh) {
            for (int64_t kw = 0; kw < 3; ++kw) {
              const int64_t ih = r - 2 + 2 * kh, iw = c - 2 + 2 * kw;
              if (ih < 0 || ih >= H || iw < 0 || iw >= W) continue;
              sum += (x[static_cast<size_t>((ci * H + ih) * W + iw)] - 3) *
                     (w[static_cast<size_t>(((m0 * C + ci) * 3 + kh) * 3 + kw)] - 120);
            }
          }
        }
        ASSERT_EQ(y1[(m0 * H + r) * W + c], sum) << m0 << "," << r << "," << c;
      }
    }
  }
}

}  // namespace
}  // namespace kiln
