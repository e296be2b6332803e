// kiln/compare.h results as JSON (app/common/compare_json.h): the documented fields, non-finite numbers as strings,
// and a bisect as per-node data that the node-data reader accepts.
#include <gtest/gtest.h>

#include <limits>

#include "compare_json.h"

namespace kiln::app {
namespace {

TEST(CompareJson, TensorComparisonHasEveryField) {
  const Tensor value = Tensor::fromVector<float>({2}, {1, std::numeric_limits<float>::quiet_NaN()});
  const Tensor reference = Tensor::fromVector<float>({2}, {1.5f, 2});
  const nlohmann::json j = tensorComparisonToJson(compareTensors("y", value, reference));
  for (const char* key : {"name", "passed", "dtype", "shape", "elements", "max_abs_error", "max_rel_error",
                          "mean_abs_error", "cosine_similarity", "fraction_beyond_tolerance", "beyond_tolerance",
                          "nan_mismatches", "inf_mismatches", "worst", "dtype_mismatch", "shape_mismatch", "missing"}) {
    EXPECT_TRUE(j.contains(key)) << key;
  }
  EXPECT_EQ(j["nan_mismatches"], 1);
  EXPECT_EQ(j["worst"]["index"], nlohmann::json::array({1}));
  EXPECT_EQ(j["worst"]["value"], "nan");  // non-finite numbers are strings, never null
  EXPECT_EQ(j["passed"], false);
}

TEST(CompareJson, BisectAsNodeDataReadsBack) {
  BisectResult bisect;
  bisect.valuesCompared = 3;
  bisect.nodes.push_back({"a", "Add", "main", {compareTensors("x1", Tensor::fromVector<float>({1}, {1}),
                                                              Tensor::fromVector<float>({1}, {1}))}});
  bisect.nodes.push_back({"b", "Mul", "main/If_0.then_branch",
                          {compareTensors("x2", Tensor::fromVector<float>({2}, {1, 2}), Tensor::fromVector<float>({2}, {1, 3})),
                           compareTensors("x3", Tensor::fromVector<float>({1}, {0}), Tensor::fromVector<float>({1}, {0}))}});
  bisect.firstDivergence = NodeDivergence{"b", "Mul", {}, {}};
  const NodeData data = compareNodeData(bisect, "m.onnx", {}, "vulkan", "cpu");
  auto back = nodeDataFromJson(toJson(data));
  ASSERT_TRUE(back.isOk()) << back.status().toString();
  EXPECT_EQ(back->kind, "compare");
  ASSERT_EQ(back->nodes.size(), 2u);
  EXPECT_EQ(back->nodes[1].graph, "main/If_0.then_branch");
  EXPECT_DOUBLE_EQ(back->nodes[1].metrics.at("max_abs_error"), 1);
  EXPECT_DOUBLE_EQ(back->nodes[1].metrics.at("fraction_beyond_tolerance"), 0.5);  // the worst output's
  EXPECT_EQ(back->nodes[1].details["first_divergence"], true);
  EXPECT_EQ(back->nodes[1].details["outputs"].size(), 2u);
  EXPECT_EQ(back->nodes[0].details["passed"], true);
  EXPECT_FALSE(back->nodes[0].details.contains("first_divergence"));
}

}  // namespace
}  // namespace kiln::app
