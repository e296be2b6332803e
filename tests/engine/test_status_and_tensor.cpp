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

TEST(Result, FromAnOkStatusIsAnErrorNotAValue) {
  Result<int> result{Status::ok()};
  EXPECT_FALSE(result.isOk());
  EXPECT_EQ(result.status().code(), StatusCode::FAIL);
  EXPECT_NE(result.status().message().find("OK status"), std::string::npos) << result.status().message();
}

TEST(Result, HoldsAValueOrAnError) {
  Result<std::string> value{std::string("x")};
  ASSERT_TRUE(value.isOk());
  EXPECT_TRUE(value.status().isOk());
  EXPECT_EQ(*value, "x");
  EXPECT_EQ(value->size(), 1u);
  Result<std::string> error{Status(StatusCode::NO_SUCHFILE, "gone")};
  EXPECT_FALSE(error.isOk());
  EXPECT_EQ(error.status().toString(), "NO_SUCHFILE: gone");
}

// value() on an error is a caller bug: it aborts with the Status on stderr (never throws, never returns garbage).
TEST(ResultDeathTest, ValueOfAnErrorAbortsNamingTheStatus) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_DEATH(
      {
        Result<int> error{Status(StatusCode::INVALID_ARGUMENT, "bad shape")};
        (void)error.value();
      },
      "error Result.*INVALID_ARGUMENT: bad shape");
  EXPECT_DEATH(
      {
        const Result<std::string> error{Status(StatusCode::EP_FAIL, "no device")};
        (void)error->size();
      },
      "EP_FAIL: no device");
  EXPECT_DEATH(
      {
        Result<std::string> error{Status(StatusCode::FAIL, "moved")};
        std::string taken = std::move(error).value();
        (void)taken;
      },
      "FAIL: moved");
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
