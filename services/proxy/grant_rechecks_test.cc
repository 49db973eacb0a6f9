#include "services/proxy/grant_rechecks.h"

#include <gtest/gtest.h>

namespace gpuaas::proxy {
namespace {

const absl::Time kNow = absl::FromUnixSeconds(1'800'000'000);

TEST(GrantRechecks, AnswersWithinTheBoundThenAsksAgain) {
  GrantRechecks rechecks(absl::Seconds(60));
  EXPECT_FALSE(rechecks.Fresh("c1", kNow));
  rechecks.Remember("c1", absl::OkStatus(), kNow);
  rechecks.Remember("c2", absl::PermissionDeniedError("removed"), kNow);
  EXPECT_EQ(rechecks.Fresh("c1", kNow + absl::Seconds(59)), absl::OkStatus());
  EXPECT_EQ(rechecks.Fresh("c2", kNow)->code(), absl::StatusCode::kPermissionDenied);
  EXPECT_FALSE(rechecks.Fresh("c1", kNow + absl::Seconds(60)));
  // An outage is never remembered: the next request asks again.
  rechecks.Remember("c3", absl::UnavailableError("down"), kNow);
  EXPECT_FALSE(rechecks.Fresh("c3", kNow));
}

TEST(GrantRechecks, StaysBounded) {
  GrantRechecks rechecks(absl::Seconds(60), 2);
  rechecks.Remember("a", absl::OkStatus(), kNow);
  rechecks.Remember("b", absl::OkStatus(), kNow + absl::Seconds(61));
  rechecks.Remember("c", absl::OkStatus(), kNow + absl::Seconds(61));  // "a" was stale
  EXPECT_FALSE(rechecks.Fresh("a", kNow + absl::Seconds(61)));
  EXPECT_TRUE(rechecks.Fresh("b", kNow + absl::Seconds(61)));
  EXPECT_TRUE(rechecks.Fresh("c", kNow + absl::Seconds(61)));
}

}  // namespace
}  // namespace gpuaas::proxy
