#include "services/auth/credentials/login_throttle.h"

#include <gtest/gtest.h>

#include <thread>
#include <vector>

namespace gpuaas::auth {
namespace {

void Fail(LoginThrottle& t, std::string_view key, int times) {
  for (int i = 0; i < times; ++i) {
    t.RecordFailure(key);
  }
}

TEST(LoginThrottle, AllowsUpToMaxFailures) {
  FakeClock clock;
  LoginThrottle t(clock);
  Fail(t, "alice", 4);
  EXPECT_TRUE(t.Check("alice").ok());
  t.RecordFailure("alice");
  absl::Status s = t.Check("alice");
  EXPECT_EQ(s.code(), absl::StatusCode::kResourceExhausted);
  EXPECT_EQ(s.message(), "too many failed logins, retry in 1s");
  EXPECT_TRUE(t.Check("bob").ok());  // keys are independent
}

TEST(LoginThrottle, LockoutDoublesAndCaps) {
  FakeClock clock;
  LoginThrottle t(clock);
  Fail(t, "alice", 5);
  int64_t expected = 1;
  for (int i = 0; i < 12; ++i) {
    const absl::Duration lockout = absl::Seconds(expected);
    EXPECT_FALSE(t.Check("alice").ok()) << i;
    clock.Advance(lockout - absl::Milliseconds(1));
    EXPECT_FALSE(t.Check("alice").ok()) << i;
    clock.Advance(absl::Milliseconds(1));
    EXPECT_TRUE(t.Check("alice").ok()) << i;
    t.RecordFailure("alice");
    expected = std::min<int64_t>(expected * 2, 300);
  }
  EXPECT_EQ(t.Check("alice").message(), "too many failed logins, retry in 300s");
}

TEST(LoginThrottle, RetryHintRoundsUp) {
  FakeClock clock;
  LoginThrottle t(clock);
  Fail(t, "alice", 7);  // 4 s lockout
  clock.Advance(absl::Milliseconds(500));
  EXPECT_EQ(t.Check("alice").message(), "too many failed logins, retry in 4s");
  clock.Advance(absl::Milliseconds(2600));
  EXPECT_EQ(t.Check("alice").message(), "too many failed logins, retry in 1s");
}

TEST(LoginThrottle, SuccessResets) {
  FakeClock clock;
  LoginThrottle t(clock);
  Fail(t, "alice", 4);
  t.RecordSuccess("alice");
  Fail(t, "alice", 4);
  EXPECT_TRUE(t.Check("alice").ok());
  EXPECT_EQ(t.size(), 1u);
  t.RecordSuccess("alice");
  EXPECT_EQ(t.size(), 0u);
  t.RecordSuccess("nobody");
}

TEST(LoginThrottle, FailuresOutsideTheWindowStartAFreshRun) {
  FakeClock clock;
  LoginThrottle t(clock);
  Fail(t, "alice", 4);
  clock.Advance(absl::Minutes(16));
  Fail(t, "alice", 4);
  EXPECT_TRUE(t.Check("alice").ok());
  t.RecordFailure("alice");
  EXPECT_FALSE(t.Check("alice").ok());
}

TEST(LoginThrottle, MemoryIsBounded) {
  FakeClock clock;
  LoginThrottle t(clock, LoginThrottleOptions{.max_failures = 1, .max_entries = 3});
  for (std::string key : {"a", "b", "c", "d", "e"}) {
    t.RecordFailure(key);
    clock.Advance(absl::Milliseconds(1));
  }
  EXPECT_EQ(t.size(), 3u);
  EXPECT_TRUE(t.Check("a").ok());  // the least recently failed were forgotten
  EXPECT_FALSE(t.Check("e").ok());
}

TEST(LoginThrottle, LapsedEntriesAreEvictedFirst) {
  FakeClock clock;
  LoginThrottle t(clock, LoginThrottleOptions{.max_entries = 10});
  Fail(t, "old1", 1);
  Fail(t, "old2", 1);
  clock.Advance(absl::Minutes(20));
  t.RecordFailure("new");
  EXPECT_EQ(t.size(), 1u);
}

TEST(LoginThrottle, ConcurrentUse) {
  FakeClock clock;
  LoginThrottle t(clock, LoginThrottleOptions{.max_failures = 1000000, .max_entries = 50});
  std::vector<std::thread> threads;
  for (int i = 0; i < 4; ++i) {
    threads.emplace_back([&t, i] {
      for (int j = 0; j < 2000; ++j) {
        std::string key = std::to_string((i * 7 + j) % 80);  // "k" + ... trips GCC 12 -Wrestrict
        t.RecordFailure(key);
        (void)t.Check(key);
        if (j % 10 == 0) {
          t.RecordSuccess(key);
        }
      }
    });
  }
  for (std::thread& th : threads) {
    th.join();
  }
  EXPECT_LE(t.size(), 50u);
}

}  // namespace
}  // namespace gpuaas::auth
