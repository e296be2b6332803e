#include <gtest/gtest.h>

#include <cmath>

#include "kiln/status.h"
#include "kiln/tensor.h"

namespace kiln {
namespace {

TEST(Status, CodesMatchOnnxRuntime) {
  EXPECT_EQ(static_cast<int>(StatusCode::INVALID_GRAPH), 10);
  EXPECT_EQ(static_cast<int>(StatusCode::MODEL_REQUIRES_COMPILATION), 13);
  EXPECT_EQ(Status(StatusCode::EP_FAIL, "x").toString(), "EP_FAIL: x");
}

TEST(Tensor, Float16RoundTripsExactValues) {
  for (float v : {0.f, 1.f, -2.5f, 65504.f, 6.1035156e-05f, 5.9604645e-08f}) {
    EXPECT_EQ(static_cast<float>(Float16(v)), v) << v;
  }
  EXPECT_TRUE(std::isinf(static_cast<float>(Float16(1e6f))));
  EXPECT_TRUE(std::isnan(static_cast<float>(Float16(NAN))));
}

TEST(Tensor, ReshapedSharesStorage) {
  Tensor t = Tensor::fromVector<float>({2, 3}, {1, 2, 3, 4, 5, 6});
  Tensor v = t.reshaped({3, 2});
  EXPECT_TRUE(v.sharesStorageWith(t));
  EXPECT_EQ(v.data<float>()[5], 6.f);
  EXPECT_FALSE(t.clone().sharesStorageWith(t));
}

}  // namespace
}  // namespace kiln
