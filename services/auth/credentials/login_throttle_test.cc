#include "services/auth/credentials/login_throttle.h"

#include <gtest/gtest.h>

namespace gpuaas::auth {
namespace {

const absl::Time kStart = absl::FromUnixSeconds(1'700'000'000);

FailureRun Fail(FailureRun run, absl::Time now, int times, const ThrottleRule& rule = {}) {
  for (int i = 0; i < times; ++i) run = AfterFailure(run, now, rule);
  return run;
}

TEST(LoginThrottle, AllowsUpToMaxFailures) {
  FailureRun run = Fail({}, kStart, 4);
  EXPECT_TRUE(Refusal(run, kStart).ok());
  run = AfterFailure(run, kStart, {});
  absl::Status s = Refusal(run, kStart);
  EXPECT_EQ(s.code(), absl::StatusCode::kResourceExhausted);
  EXPECT_EQ(s.message(), "too many failed attempts from your address, retry in 1s");
  EXPECT_TRUE(Refusal({}, kStart).ok());
}

TEST(LoginThrottle, LockoutDoublesAndCaps) {
  absl::Time now = kStart;
  FailureRun run = Fail({}, now, 5);
  int64_t expected = 1;
  for (int i = 0; i < 12; ++i) {
    const absl::Duration lockout = absl::Seconds(expected);
    EXPECT_FALSE(Refusal(run, now).ok()) << i;
    now += lockout - absl::Milliseconds(1);
    EXPECT_FALSE(Refusal(run, now).ok()) << i;
    now += absl::Milliseconds(1);
    EXPECT_TRUE(Refusal(run, now).ok()) << i;
    run = AfterFailure(run, now, {});
    expected = std::min<int64_t>(expected * 2, 300);
  }
  EXPECT_EQ(Refusal(run, now).message(),
            "too many failed attempts from your address, retry in 300s");
}

TEST(LoginThrottle, RetryHintRoundsUp) {
  FailureRun run = Fail({}, kStart, 7);  // 4 s lockout
  EXPECT_EQ(Refusal(run, kStart + absl::Milliseconds(500)).message(),
            "too many failed attempts from your address, retry in 4s");
  EXPECT_EQ(Refusal(run, kStart + absl::Milliseconds(3100)).message(),
            "too many failed attempts from your address, retry in 1s");
}

TEST(LoginThrottle, LapsedRunStartsAgain) {
  const ThrottleRule rule;
  FailureRun run = Fail({}, kStart, 4, rule);
  run = AfterFailure(run, kStart + rule.failure_window + absl::Seconds(1), rule);
  EXPECT_EQ(run.failures, 1);
  EXPECT_TRUE(Refusal(run, run.last_failure).ok());
}

TEST(LoginThrottle, ManyFailuresNeverOverflow) {
  FailureRun run = Fail({}, kStart, 100);
  EXPECT_EQ(run.locked_until, kStart + absl::Minutes(5));
}

}  // namespace
}  // namespace gpuaas::auth
