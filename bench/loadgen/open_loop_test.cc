// Drives RunOpenLoop with fake invokers over short real-time windows (the schedule is the thing
// under test, so it cannot run on a fake clock); bounds are loose enough for a loaded machine.
#include "bench/loadgen/open_loop.h"

#include <gtest/gtest.h>

#include <thread>

#include "absl/synchronization/mutex.h"

namespace gpuaas::bench {
namespace {

OpenLoopOptions Short(double rate) {
  OpenLoopOptions o;
  o.rate = rate;
  o.warmup = absl::Milliseconds(50);
  o.duration = absl::Milliseconds(200);
  return o;
}

TEST(OpenLoopTest, SendsTheScheduleAndRecordsOnlyTheWindow) {
  LatencyRecorder rec;
  std::atomic<int> calls{0};
  OpenLoopResult r = RunOpenLoop(
      [&](std::function<void(grpc::Status)> done) {
        ++calls;
        done(grpc::Status::OK);
      },
      Short(1000), rec);
  EXPECT_EQ(r.scheduled, 200);
  EXPECT_EQ(r.sent, 200);
  EXPECT_EQ(r.unsent, 0);
  EXPECT_EQ(calls, 250);  // warm-up calls are sent too
  LatencySummary s = rec.Summarize();
  EXPECT_EQ(s.completed, 200);
  EXPECT_EQ(s.ok, 200);
}

TEST(OpenLoopTest, StallIsChargedFromTheScheduledTime) {
  LatencyRecorder rec;
  absl::Mutex mu;
  std::vector<std::function<void(grpc::Status)>> pending;
  OpenLoopOptions o = Short(1000);
  o.max_in_flight = 5;
  // A server that answers nothing until the window is over.
  std::thread releaser([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(400));
    absl::MutexLock lock(&mu);
    for (auto& done : pending) {
      done(grpc::Status(grpc::StatusCode::UNAVAILABLE, "down"));
    }
  });
  OpenLoopResult r = RunOpenLoop(
      [&](std::function<void(grpc::Status)> done) {
        absl::MutexLock lock(&mu);
        pending.push_back(std::move(done));
      },
      o, rec);
  releaser.join();
  EXPECT_EQ(r.scheduled, 200);
  EXPECT_EQ(r.sent, 0);  // the five slots went to warm-up calls
  EXPECT_EQ(r.unsent, 200);
  EXPECT_EQ(rec.Summarize().completed, 0);
}

}  // namespace
}  // namespace gpuaas::bench
