// Deadline derivation and context building on fixed times; what reaches a server (the header,
// the deadline, propagation from an incoming call) is tested in auth_client_test.cc.
#include "libs/client/call_context.h"

#include <gtest/gtest.h>

#include "absl/time/clock.h"

namespace gpuaas::client {
namespace {

constexpr absl::Time kNow = absl::FromUnixSeconds(1'800'000'000);

TEST(DeriveDeadlineTest, WithoutAParentTheTimeoutDecides) {
  EXPECT_EQ(DeriveDeadline(kNow, absl::Seconds(5), absl::InfiniteFuture()),
            kNow + absl::Seconds(5));
}

TEST(DeriveDeadlineTest, AParentShorterThanTheTimeoutDecidesLessTheMargin) {
  EXPECT_EQ(DeriveDeadline(kNow, absl::Seconds(5), kNow + absl::Seconds(1)),
            kNow + absl::Seconds(1) - kDeadlineMargin);
}

TEST(DeriveDeadlineTest, AParentLongerThanTheTimeoutLeavesTheTimeout) {
  EXPECT_EQ(DeriveDeadline(kNow, absl::Seconds(5), kNow + absl::Minutes(1)),
            kNow + absl::Seconds(5));
}

TEST(DeriveDeadlineTest, AParentWithinTheMarginLeavesNoTime) {
  EXPECT_LE(DeriveDeadline(kNow, absl::Seconds(5), kNow + kDeadlineMargin / 2), kNow);
  EXPECT_LE(DeriveDeadline(kNow, absl::Seconds(5), kNow - absl::Seconds(1)), kNow);
}

TEST(CallContextTest, DefaultContextUsesTheClientsTimeout) {
  EXPECT_EQ(CallContext().Deadline(kNow, absl::Seconds(3)), kNow + absl::Seconds(3));
}

TEST(CallContextTest, OwnTimeoutWinsOverTheClientsDefault) {
  CallContext call;
  call.set_timeout(absl::Milliseconds(200));
  EXPECT_EQ(call.Deadline(kNow, absl::Seconds(3)), kNow + absl::Milliseconds(200));
}

TEST(CallContextTest, FromDeadlineDerivesFromIt) {
  const absl::Time parent = kNow + absl::Milliseconds(500);
  EXPECT_EQ(CallContext::FromDeadline(parent).Deadline(kNow, absl::Seconds(3)),
            parent - kDeadlineMargin);
  EXPECT_EQ(CallContext::FromDeadline(absl::InfiniteFuture()).Deadline(kNow, absl::Seconds(3)),
            kNow + absl::Seconds(3));
}

TEST(CallContextTest, BearerHeaderGetsItsPrefixOnce) {
  EXPECT_EQ(CallContext().set_bearer_token("abc").authorization(), "Bearer abc");
  EXPECT_EQ(CallContext().set_bearer_token("Bearer abc").authorization(), "Bearer abc");
  EXPECT_EQ(CallContext().set_bearer_token("").authorization(), "");
  EXPECT_EQ(CallContext().authorization(), "");
}

TEST(CallContextTest, NewClientContextCarriesTheDeadline) {
  const absl::Time before = absl::Now();
  std::unique_ptr<grpc::ClientContext> ctx =
      CallContext().set_bearer_token("abc").NewClientContext(absl::Seconds(5));
  const absl::Time deadline = absl::FromChrono(ctx->deadline());
  EXPECT_GE(deadline, before + absl::Seconds(5));
  EXPECT_LE(deadline, absl::Now() + absl::Seconds(5));
}

}  // namespace
}  // namespace gpuaas::client
