// Drives RunOpenLoop with fake invokers over short real-time windows (the schedule is the thing
// under test, so it cannot run on a fake clock); bounds are loose enough for a loaded machine.
#include "bench/loadgen/open_loop.h"

#include <thread>

#include <gtest/gtest.h>

#include "absl/synchronization/mutex.h"

namespace gpuaas::bench {
namespace {

OpenLoopOptions Short(double rate) {
  OpenLoopOptions o;
  o.rate = rate;
  o.warmup = absl::Milliseconds(50);
  o.duration = absl::Milliseconds(200);
  o.timeout = absl::Seconds(1);
  return o;
}

TEST(OpenLoopTest, SendsTheScheduleAndRecordsOnlyTheWindow) {
  LatencyRecorder rec;
  std::atomic<int> calls{0};
  OpenLoopResult r = RunOpenLoop(
      [&](grpc::ClientContext* ctx, std::function<void(grpc::Status)> done) {
        EXPECT_NE(ctx->deadline(), std::chrono::system_clock::time_point::max());
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
      [&](grpc::ClientContext*, std::function<void(grpc::Status)> done) {
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
