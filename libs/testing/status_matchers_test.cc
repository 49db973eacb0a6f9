#include "libs/testing/status_matchers.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace gpuaas::testing {
namespace {

using ::testing::Eq;
using ::testing::HasSubstr;
using ::testing::Not;

absl::StatusOr<int> Value(int v) { return v; }
absl::StatusOr<int> Missing() { return absl::NotFoundError("no such thing"); }

TEST(StatusMatchersTest, IsOk) {
  EXPECT_OK(absl::OkStatus());
  EXPECT_OK(Value(1));
  EXPECT_THAT(absl::InternalError("x"), Not(IsOk()));
  EXPECT_THAT(Missing(), Not(IsOk()));
}

TEST(StatusMatchersTest, StatusIs) {
  EXPECT_THAT(Missing(), StatusIs(absl::StatusCode::kNotFound));
  EXPECT_THAT(Missing(), StatusIs(absl::StatusCode::kNotFound, HasSubstr("such")));
  EXPECT_THAT(Missing(), Not(StatusIs(absl::StatusCode::kNotFound, HasSubstr("other"))));
  EXPECT_THAT(absl::AbortedError("a"), Not(StatusIs(absl::StatusCode::kNotFound)));
  EXPECT_THAT(Value(3), StatusIs(absl::StatusCode::kOk));
}

TEST(StatusMatchersTest, IsOkAndHolds) {
  EXPECT_THAT(Value(3), IsOkAndHolds(3));
  EXPECT_THAT(Value(3), IsOkAndHolds(Eq(3)));
  EXPECT_THAT(Value(3), Not(IsOkAndHolds(4)));
  EXPECT_THAT(Missing(), Not(IsOkAndHolds(3)));
}

TEST(StatusMatchersTest, ExplainsMismatches) {
  ::testing::StringMatchResultListener listener;
  EXPECT_FALSE(::testing::ExplainMatchResult(IsOk(), Missing(), &listener));
  EXPECT_THAT(listener.str(), HasSubstr("no such thing"));
}

TEST(StatusMatchersTest, AssertOkAndAssign) {
  ASSERT_OK_AND_ASSIGN(int v, Value(7));
  EXPECT_EQ(v, 7);
}

}  // namespace
}  // namespace gpuaas::testing
