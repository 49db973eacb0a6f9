#include "services/agent/backoff.h"

#include <gtest/gtest.h>

namespace gpuaas::agent {
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

TEST(BackoffTest, ResetStartsOver) {
  Backoff backoff({.initial = absl::Milliseconds(200), .max = absl::Seconds(5)}, 7);
  for (int i = 0; i < 10; ++i) {
    backoff.Next();
  }
  EXPECT_GT(backoff.Next(), absl::Milliseconds(2500));
  backoff.Reset();
  EXPECT_LE(backoff.Next(), absl::Milliseconds(200));
}

TEST(BackoffTest, JitterSpreadsAgents) {
  Backoff a({}, 1);
  Backoff b({}, 2);
  for (int i = 0; i < 6; ++i) {
    a.Next();
    b.Next();
  }
  EXPECT_NE(a.Next(), b.Next());
}

}  // namespace
}  // namespace gpuaas::agent
