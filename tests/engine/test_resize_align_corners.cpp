// Resize with align_corners (and pytorch_half_pixel) where input length x scale is not whole: both EPs map output
// index j to j (in - 1) / (out - 1) with the integer output length, as onnxruntime does. They used in x scale
// unfloored (ONNX 1.12's reference), which a differential run against onnxruntime-node found: a 1x1x5x6 input with
// scales [1,1,0.5,2] gave row 1 from input row 2.67 instead of 4 (issue 31). ONNX's backend test data cannot see it:
// its integer upscales agree either way.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "gtest_requirements.h"
#include "kiln/session.h"
#include "model_builder.h"
#include "test_models.h"

namespace kiln {
namespace {

using testing::ModelBuilder;

constexpr int64_t kH = 5, kW = 6;

// x[r][c] = 6 r + c: linear in both axes, so a bilinear sample at input coordinate (y, x) is 6 y + x.
Tensor arangeInput() {
  std::vector<float> x(kH * kW);
  for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(i);
  return Tensor::fromVector<float>({1, 1, kH, kW}, x);
}

std::vector<float> runResize(const std::string& eps, const std::string& mode, const std::string& coordinates,
                             float scaleH, float scaleW, std::vector<int64_t>& shape) {
  ModelBuilder m;
  m.input("X", {1, 1, kH, kW});
  m.initializer("roi", {0}, {});
  m.initializer("scales", {4}, {1.0f, 1.0f, scaleH, scaleW});
  onnx::NodeProto& node = m.node("Resize", {"X", "roi", "scales"}, {"Y"}, "resize");
  testing::attrString(node, "mode", mode);
  testing::attrString(node, "coordinate_transformation_mode", coordinates);
  m.output("Y");
  testing::TempDir dir;
  const std::string path = m.save(dir.file("resize.onnx"));
  SessionOptions options;
  EXPECT_TRUE(options.addConfigEntry("kiln.execution_providers", eps).isOk());
  if (eps == "vulkan") {
    EXPECT_TRUE(options.addConfigEntry("session.disable_cpu_ep_fallback", "1").isOk());
  }
  auto session = Session::create(path, options);
  EXPECT_TRUE(session.isOk()) << session.status().toString();
  if (!session.isOk()) return {};
  auto outputs = (*session)->run({{"X", arangeInput()}});
  EXPECT_TRUE(outputs.isOk()) << outputs.status().toString();
  if (!outputs.isOk()) return {};
  const Tensor& y = (*outputs)[0].tensor;
  shape = y.shape();
  return std::vector<float>(y.data<float>(), y.data<float>() + y.numel());
}

// Input coordinate of output index j: align_corners over the integer output length.
double alignCorners(int64_t j, int64_t in, int64_t out) {
  return out == 1 ? 0.0 : static_cast<double>(j) * static_cast<double>(in - 1) / static_cast<double>(out - 1);
}

// round_prefer_floor
int64_t nearest(double x) { return x - std::floor(x) > 0.5 ? static_cast<int64_t>(std::ceil(x)) : static_cast<int64_t>(std::floor(x)); }

struct Case {
  float scaleH, scaleW;
  int64_t outH, outW;
};
// Non-integer in x scale on at least one axis: 2.5, 7.5, 3.6 and 3.0/3.6 (0.6 x 5 is 3 in float).
const Case kCases[] = {{0.5f, 2.0f, 2, 12}, {1.5f, 1.5f, 7, 9}, {0.6f, 0.6f, 3, 3}};

void checkEp(const std::string& eps) {
  for (const Case& c : kCases) {
    for (const std::string mode : {"linear", "nearest"}) {
      SCOPED_TRACE(eps + " " + mode + " scales " + std::to_string(c.scaleH) + "," + std::to_string(c.scaleW));
      std::vector<int64_t> shape;
      const std::vector<float> y = runResize(eps, mode, "align_corners", c.scaleH, c.scaleW, shape);
      ASSERT_EQ(shape, (std::vector<int64_t>{1, 1, c.outH, c.outW}));
      for (int64_t i = 0; i < c.outH; ++i) {
        for (int64_t j = 0; j < c.outW; ++j) {
          double yIn = alignCorners(i, kH, c.outH), xIn = alignCorners(j, kW, c.outW);
          if (mode == "nearest") yIn = static_cast<double>(nearest(yIn)), xIn = static_cast<double>(nearest(xIn));
          EXPECT_NEAR(y[i * c.outW + j], 6.0 * yIn + xIn, 1e-4) << "at " << i << "," << j;
        }
      }
    }
  }
  // Values onnxruntime-node 1.30 printed for the same models (first column or first row).
  std::vector<int64_t> shape;
  const auto half = runResize(eps, "linear", "align_corners", 0.5f, 2.0f, shape);
  ASSERT_EQ(half.size(), 24u);
  EXPECT_FLOAT_EQ(half[12], 24.0f) << "row 1 is input row 4 (ONNX 1.12's reference: 2.67)";
  const auto third = runResize(eps, "nearest", "align_corners", 1.5f, 1.5f, shape);
  ASSERT_EQ(third.size(), 63u);
  const float column[] = {0, 6, 6, 12, 18, 18, 24};
  for (int64_t i = 0; i < 7; ++i) EXPECT_FLOAT_EQ(third[i * 9], column[i]) << "row " << i;
  // pytorch_half_pixel: 1.5 x 0.3 floors to one output element, which samples the origin.
  const auto single = runResize(eps, "linear", "pytorch_half_pixel", 0.3f, 0.3f, shape);
  ASSERT_EQ(shape, (std::vector<int64_t>{1, 1, 1, 1}));
  EXPECT_FLOAT_EQ(single[0], 0.0f) << "onnxruntime samples (0, 0) for a length-1 output";
}

TEST(ResizeAlignCorners, CpuUsesTheIntegerOutputLengthAsOnnxruntime) { checkEp("cpu"); }

TEST(ResizeAlignCorners, VulkanUsesTheIntegerOutputLengthAsOnnxruntime) {
  REQUIRE_VULKAN();
  checkEp("vulkan");
}

}  // namespace
}  // namespace kiln
