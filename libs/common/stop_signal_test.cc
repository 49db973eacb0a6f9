#include "libs/common/stop_signal.h"

#include <gtest/gtest.h>

#include <thread>

namespace gpuaas {
namespace {

TEST(StopSignalTest, WaitForTimesOutWhileNotStopped) {
  StopSignal stop;
  EXPECT_FALSE(stop.stopped());
  EXPECT_FALSE(stop.WaitFor(absl::ZeroDuration()));
  EXPECT_FALSE(stop.WaitFor(absl::Milliseconds(1)));
}

TEST(StopSignalTest, StopWakesAWaiterAtOnce) {
  StopSignal stop;
  std::thread stopper([&] { stop.Stop(); });
  EXPECT_TRUE(stop.WaitFor(absl::InfiniteDuration()));
  stopper.join();
  stop.Wait();
  EXPECT_TRUE(stop.stopped());
}

TEST(StopSignalTest, StopIsIdempotent) {
  StopSignal stop;
  stop.Stop();
  stop.Stop();
  EXPECT_TRUE(stop.stopped());
  EXPECT_TRUE(stop.WaitFor(absl::Hours(1)));
}

}  // namespace
}  // namespace gpuaas
