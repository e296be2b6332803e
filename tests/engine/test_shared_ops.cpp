// What both execution providers share instead of including each other: the ONNX shape rules (ops/shape_rules.h)
// and host evaluation of single nodes (ep/host_evaluator.h, implemented by the CPU EP's kernels).
#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <vector>

#include "ep/cpu/host_evaluator.h"
#include "ops/shape_rules.h"

namespace kiln {
namespace {

TEST(ShapeRules, NormalizeAxisMapsNegativeAxesAndNamesWhatIsOutOfRange) {
  EXPECT_EQ(ops::normalizeAxis(-1, 3).value(), 2);
  EXPECT_EQ(ops::normalizeAxis(2, 3).value(), 2);
  EXPECT_EQ(ops::normalizeAxis(0, 0).value(), 0);  // a scalar's only axis
  const auto tooLarge = ops::normalizeAxis(3, 3);
  ASSERT_FALSE(tooLarge.isOk());
  EXPECT_EQ(tooLarge.status().code(), StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(tooLarge.status().message(), "axis 3 is out of range for rank 3");
  const auto tooNegative = ops::normalizeAxis(-4, 3, "Gather axis");
  ASSERT_FALSE(tooNegative.isOk());
  EXPECT_EQ(tooNegative.status().message(), "Gather axis -4 is out of range for rank 3");
  EXPECT_FALSE(ops::normalizeAxis(-1, 0).isOk());
}

TEST(ShapeRules, BroadcastShapesFollowsNumpyAndRefusesMismatches) {
  EXPECT_EQ(ops::broadcastShapes({2, 1, 3}, {4, 1}).value(), (Shape{2, 4, 3}));
  EXPECT_EQ(ops::broadcastShapes({}, {5}).value(), (Shape{5}));
  EXPECT_EQ(ops::broadcastShapes({0}, {1}).value(), (Shape{0}));
  EXPECT_EQ(ops::broadcastShapes({1}, {0}).value(), (Shape{0}));
  const auto mismatch = ops::broadcastShapes({2}, {3});
  ASSERT_FALSE(mismatch.isOk());
  EXPECT_EQ(mismatch.status().code(), StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(mismatch.status().message(), "shapes 2 and 3 do not broadcast");
}

TEST(ShapeRules, SliceAxisClampsByTheStepsSign) {
  const int64_t end = std::numeric_limits<int64_t>::max();
  auto forward = ops::resolveSliceAxis(0, end, 1, 5);
  EXPECT_EQ(forward.start, 0);
  EXPECT_EQ(forward.count, 5);
  auto backward = ops::resolveSliceAxis(-1, std::numeric_limits<int64_t>::min(), -1, 5);
  EXPECT_EQ(backward.start, 4);
  EXPECT_EQ(backward.count, 5);
  auto stepped = ops::resolveSliceAxis(10, 0, -2, 5);  // 4, 2
  EXPECT_EQ(stepped.start, 4);
  EXPECT_EQ(stepped.count, 2);
  EXPECT_EQ(ops::resolveSliceAxis(3, 1, 1, 5).count, 0);
  EXPECT_EQ(ops::resolveSliceAxis(0, 1, 1, 0).count, 0);
}

TEST(HostEvaluator, CpuKernelsEvaluateShapeArithmetic) {
  const auto host = cpu::hostEvaluator();
  ASSERT_NE(host, nullptr);
  EXPECT_TRUE(host->canEvaluate("", "Add", 14));
  EXPECT_TRUE(host->canEvaluate("", "Shape", 13));
  EXPECT_FALSE(host->canEvaluate("", "NoSuchOp", 13));

  ir::Node add;
  add.name = "add";
  add.opType = "Add";
  add.inputs = {"a", "b"};
  add.outputs = {"c"};
  const Tensor b = Tensor::fromVector<int64_t>({2}, {10, 20});
  auto prepared = host->prepare(add, 14, {nullptr, &b});  // b constant, a given at run time
  ASSERT_TRUE(prepared.isOk()) << prepared.status().toString();
  const Tensor a = Tensor::fromVector<int64_t>({2}, {1, 2});
  const std::vector<const Tensor*> inputs{&a, &b};
  std::vector<Tensor> outputs(1);
  ASSERT_TRUE(prepared.value()->compute(inputs, outputs).isOk());
  ASSERT_EQ(outputs[0].shape(), (Shape{2}));
  EXPECT_EQ(outputs[0].data<int64_t>()[0], 11);
  EXPECT_EQ(outputs[0].data<int64_t>()[1], 22);
}

TEST(HostEvaluator, RefusesAnOpItCannotEvaluate) {
  ir::Node node;
  node.name = "mystery";
  node.opType = "NoSuchOp";
  node.outputs = {"y"};
  auto prepared = cpu::hostEvaluator()->prepare(node, 13, {});
  ASSERT_FALSE(prepared.isOk());
  EXPECT_EQ(prepared.status().code(), StatusCode::NOT_IMPLEMENTED);
}

}  // namespace
}  // namespace kiln
