#include "bench/loadgen/open_loop.h"

#include <chrono>
#include <memory>
#include <thread>

#include "absl/synchronization/mutex.h"

namespace gpuaas::bench {
namespace {

using SteadyClock = std::chrono::steady_clock;

// Lets the first due time be in the future, so call 0 is not already late when the loop starts.
constexpr auto kStartDelay = std::chrono::milliseconds(10);

// Counts in-flight calls; the issuer waits on it when the limit is reached and at the end.
class InFlight final {
 public:
  explicit InFlight(int limit) : limit_(limit) {}

  // Takes a slot, waiting until `deadline` at most. False when none freed up in time.
  bool Acquire(absl::Time deadline) {
    absl::MutexLock lock(&mu_);
    auto has_slot = [this]() ABSL_SHARED_LOCKS_REQUIRED(mu_) { return count_ < limit_; };
    if (!mu_.AwaitWithDeadline(absl::Condition(&has_slot), deadline)) {
      return false;
    }
    ++count_;
    return true;
  }

  void Release() {
    absl::MutexLock lock(&mu_);
    --count_;
  }

  void AwaitZero() {
    absl::MutexLock lock(&mu_);
    auto idle = [this]() ABSL_SHARED_LOCKS_REQUIRED(mu_) { return count_ == 0; };
    mu_.Await(absl::Condition(&idle));
  }

 private:
  absl::Mutex mu_;
  const int limit_;
  int count_ ABSL_GUARDED_BY(mu_) = 0;
};

absl::Time ToAbsl(SteadyClock::time_point t) {
  // absl::Mutex deadlines are wall-clock; convert through "now" on both clocks.
  return absl::Now() + absl::FromChrono(t - SteadyClock::now());
}

}  // namespace

OpenLoopResult RunOpenLoop(const Invoker& invoke, const OpenLoopOptions& options,
                           LatencyRecorder& recorder) {
  OpenLoopResult result;
  InFlight in_flight(options.max_in_flight);
  const auto interval = std::chrono::duration<double>(1.0 / options.rate);
  const auto start = SteadyClock::now() + kStartDelay;
  const auto window_start = start + absl::ToChronoNanoseconds(options.warmup);
  const auto end = window_start + absl::ToChronoNanoseconds(options.duration);

  auto due_time = [&](int64_t i) {
    return start +
           std::chrono::duration_cast<SteadyClock::duration>(interval * static_cast<double>(i));
  };
  for (int64_t i = 0; due_time(i) < end; ++i) {
    result.scheduled += due_time(i) >= window_start ? 1 : 0;
  }

  for (int64_t i = 0;; ++i) {
    const auto due = due_time(i);
    if (due >= end) {
      break;
    }
    const bool measured = due >= window_start;
    std::this_thread::sleep_until(due);
    if (!in_flight.Acquire(ToAbsl(end))) {
      // The window closed while every slot was busy: this call and all later ones go unsent.
      break;
    }
    result.sent += measured ? 1 : 0;
    invoke([due, measured, &recorder, &in_flight](grpc::Status status) {
      if (measured) {
        recorder.Record(status.error_code(), absl::FromChrono(SteadyClock::now() - due));
      }
      in_flight.Release();
    });
  }
  in_flight.AwaitZero();
  result.unsent = result.scheduled - result.sent;
  result.elapsed = absl::FromChrono(SteadyClock::now() - window_start);
  return result;
}

}  // namespace gpuaas::bench
