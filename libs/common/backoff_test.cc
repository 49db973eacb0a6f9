#include "libs/common/backoff.h"

#include <gtest/gtest.h>

#include <algorithm>

namespace gpuaas {
namespace {

TEST(BackoffTest, DoublesWithJitterUpToTheCap) {
  Backoff backoff({.initial = absl::Milliseconds(200), .max = absl::Seconds(5)}, 42);
  absl::Duration ceiling = absl::Milliseconds(200);
  for (int i = 0; i < 20; ++i) {
    absl::Duration d = backoff.Next();
    EXPECT_GE(d, ceiling / 2) << i;
    EXPECT_LE(d, ceiling) << i;
    ceiling = std::min(ceiling * 2, absl::Seconds(5));
  }
}

TEST(BackoffTest, WithoutJitterWaitsExactlyTheCeiling) {
  Backoff backoff(
      {.initial = absl::Milliseconds(100), .max = absl::Milliseconds(500), .jitter = 0});
  EXPECT_EQ(backoff.Next(), absl::Milliseconds(100));
  EXPECT_EQ(backoff.Next(), absl::Milliseconds(200));
  EXPECT_EQ(backoff.Next(), absl::Milliseconds(400));
  EXPECT_EQ(backoff.Next(), absl::Milliseconds(500));
  EXPECT_EQ(backoff.Next(), absl::Milliseconds(500));
}

TEST(BackoffTest, ResetStartsOver) {
  Backoff backoff({.initial = absl::Milliseconds(200), .max = absl::Seconds(5)}, 7);
  for (int i = 0; i < 10; ++i) {
    backoff.Next();
  }
  EXPECT_GT(backoff.Next(), absl::Milliseconds(2500));
  backoff.Reset();
  EXPECT_LE(backoff.Next(), absl::Milliseconds(200));
}

TEST(BackoffTest, JitterSpreadsClients) {
  Backoff a({}, 1);
  Backoff b({}, 2);
  for (int i = 0; i < 6; ++i) {
    a.Next();
    b.Next();
  }
  EXPECT_NE(a.Next(), b.Next());
}

TEST(BackoffTest, CeilingOfAnAttempt) {
  const Backoff::Options options{.initial = absl::Milliseconds(500), .max = absl::Seconds(30)};
  EXPECT_EQ(Backoff::Ceiling(options, 0), absl::Milliseconds(500));
  EXPECT_EQ(Backoff::Ceiling(options, 3), absl::Seconds(4));
  EXPECT_EQ(Backoff::Ceiling(options, 6), absl::Seconds(30));
  EXPECT_EQ(Backoff::Ceiling(options, 1'000'000), absl::Seconds(30));
}

}  // namespace
}  // namespace gpuaas
