#include <gtest/gtest.h>

#include <atomic>
#include <set>

#include "absl/synchronization/notification.h"
#include "libs/common/clock.h"
#include "libs/common/ids.h"
#include "libs/common/status_macros.h"
#include "libs/common/thread_pool.h"

namespace gpuaas {
namespace {

absl::StatusOr<int> Half(int x) {
  if (x % 2 != 0) return absl::InvalidArgumentError("odd");
  return x / 2;
}

absl::StatusOr<int> Quarter(int x) {
  GPUAAS_ASSIGN_OR_RETURN(int h, Half(x));
  GPUAAS_ASSIGN_OR_RETURN(int q, Half(h));
  return q;
}

absl::Status CheckEven(int x) {
  GPUAAS_RETURN_IF_ERROR(Half(x).status());
  return absl::OkStatus();
}

TEST(StatusMacros, PropagateErrorsAndValues) {
  EXPECT_EQ(*Quarter(8), 2);
  EXPECT_EQ(Quarter(6).status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(CheckEven(2).ok());
  EXPECT_FALSE(CheckEven(3).ok());
}

TEST(Ids, AreUniqueAndPrefixed) {
  std::set<std::string> seen;
  for (int i = 0; i < 1000; ++i) {
    std::string id = NewId("usr_");
    ASSERT_EQ(id.substr(0, 4), "usr_");
    ASSERT_EQ(id.size(), 30u);
    seen.insert(id);
  }
  EXPECT_EQ(seen.size(), 1000u);
  EXPECT_EQ(RandomToken(32).size(), 43u);
}

TEST(ThreadPool, RunsEveryTaskBeforeDestruction) {
  std::atomic<int> n = 0;
  {
    ThreadPool pool(3);
    for (int i = 0; i < 500; ++i) pool.Submit([&n] { n++; });
  }
  EXPECT_EQ(n.load(), 500);
}

TEST(ThreadPool, TrySubmitRefusesBeyondTheQueueBound) {
  absl::Notification started;
  absl::Notification release;
  std::atomic<int> n = 0;
  {
    ThreadPool pool(1, /*max_queued=*/2);
    ASSERT_TRUE(pool.TrySubmit([&] {
      started.Notify();
      release.WaitForNotification();
      n++;
    }));
    started.WaitForNotification();  // the worker is busy; the queue is empty
    EXPECT_TRUE(pool.TrySubmit([&n] { n++; }));
    EXPECT_TRUE(pool.TrySubmit([&n] { n++; }));
    EXPECT_FALSE(pool.TrySubmit([&n] { n += 100; }));
    pool.Submit([&n] { n++; });  // Submit is never refused
    release.Notify();
  }
  EXPECT_EQ(n.load(), 4);
}

TEST(FakeClock, MovesOnlyWhenAdvanced) {
  FakeClock clock;
  absl::Time t0 = clock.Now();
  EXPECT_EQ(clock.Now(), t0);
  clock.Advance(absl::Seconds(5));
  EXPECT_EQ(clock.Now() - t0, absl::Seconds(5));
}

}  // namespace
}  // namespace gpuaas
