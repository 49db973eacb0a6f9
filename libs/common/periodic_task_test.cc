#include "libs/common/periodic_task.h"

#include <gtest/gtest.h>

#include <atomic>

#include "absl/synchronization/mutex.h"
#include "absl/synchronization/notification.h"
#include "absl/time/clock.h"

namespace gpuaas {
namespace {

TEST(PeriodicTaskTest, RunsImmediatelyWhenAsked) {
  absl::Mutex mu;
  int runs = 0;
  PeriodicTask task({.interval = absl::InfiniteDuration(), .run_immediately = true}, [&] {
    absl::MutexLock lock(&mu);
    ++runs;
  });
  absl::MutexLock lock(&mu);
  mu.Await(absl::Condition(
      +[](int* n) { return *n > 0; }, &runs));
  EXPECT_EQ(runs, 1);
}

TEST(PeriodicTaskTest, RunsEveryIntervalAndNotBefore) {
  absl::Mutex mu;
  int runs = 0;
  const auto count = [&] {
    absl::MutexLock lock(&mu);
    ++runs;
  };
  {
    PeriodicTask task({.interval = absl::Milliseconds(1)}, count);
    absl::MutexLock lock(&mu);
    EXPECT_TRUE(mu.AwaitWithTimeout(absl::Condition(
                                        +[](int* n) { return *n >= 3; }, &runs),
                                    absl::Seconds(30)))
        << runs << " runs";
  }
  // An hour's interval: nothing runs before it, and Stop (the destructor) does not run it.
  {
    absl::MutexLock lock(&mu);
    runs = 0;
  }
  {
    PeriodicTask task({.interval = absl::Hours(1)}, count);
    absl::SleepFor(absl::Milliseconds(50));
  }
  absl::MutexLock lock(&mu);
  EXPECT_EQ(runs, 0);
}

TEST(PeriodicTaskTest, StopEndsTheWaitAtOnceAndJoinWaits) {
  std::atomic<int> runs{0};
  PeriodicTask task({.interval = absl::InfiniteDuration()}, [&] { ++runs; });
  task.Stop();
  EXPECT_TRUE(task.stop_signal().stopped());
  task.Join();  // would hang if Stop did not wake the infinite wait
  task.Join();
  EXPECT_EQ(runs.load(), 0);
}

TEST(PeriodicTaskTest, ARunSeesTheStopSignal) {
  absl::Notification running;
  bool saw_stop = false;
  {
    PeriodicTask* self = nullptr;
    absl::Notification self_set;
    PeriodicTask task({.interval = absl::InfiniteDuration(), .run_immediately = true}, [&] {
      self_set.WaitForNotification();
      running.Notify();
      saw_stop = self->stop_signal().WaitFor(absl::InfiniteDuration());
    });
    self = &task;
    self_set.Notify();
    running.WaitForNotification();
  }  // the destructor stops the task, which ends the run's wait, then joins
  EXPECT_TRUE(saw_stop);
}

}  // namespace
}  // namespace gpuaas
