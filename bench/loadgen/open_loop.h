// An open-loop load driver: call i is due at start + i / rate whether or not earlier calls have
// finished, and its latency is measured from that due time, not from when it was actually sent.
// A closed loop (send, wait, send) slows down with the server and hides exactly the stalls a
// latency benchmark exists to find ("coordinated omission"); measuring from the schedule charges
// every stall to every call that should have been sent during it.
#pragma once

#include <grpcpp/support/status.h>

#include <cstdint>
#include <functional>

#include "absl/time/time.h"
#include "bench/loadgen/latency_recorder.h"

namespace gpuaas::bench {

// Starts one asynchronous call, with its own deadline, and calls `done` exactly once, from any
// thread, when the call finishes.
using Invoker = std::function<void(std::function<void(grpc::Status)> done)>;

struct OpenLoopOptions {
  double rate = 500;                            // calls per second
  absl::Duration duration = absl::Seconds(30);  // measured window, after the warm-up
  absl::Duration warmup = absl::Seconds(3);     // sent but not recorded
  int max_in_flight = 1000;  // a due call waits for a slot (its wait counts as latency)
};

struct OpenLoopResult {
  int64_t scheduled = 0;   // calls due in the measured window
  int64_t sent = 0;        // of those, sent before the window closed
  int64_t unsent = 0;      // due but never sent: the in-flight limit stayed full to the end
  absl::Duration elapsed;  // first due time of the window to the last completion
};

// Drives `invoke` and records measured calls into `recorder`. Blocks for warm-up + duration
// plus the time to drain in-flight calls (at most the calls' own deadline).
OpenLoopResult RunOpenLoop(const Invoker& invoke, const OpenLoopOptions& options,
                           LatencyRecorder& recorder);

}  // namespace gpuaas::bench
