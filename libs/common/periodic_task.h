// PeriodicTask: runs a callback every `interval` on its own thread until stopped, for the
// housekeeping loops of a process (sweeps, expiries, timeouts). The next run starts `interval`
// after the previous one ended, so a slow run delays the next one and runs never overlap or
// pile up. Stop() wakes the thread at once; a run in progress finishes first.
#pragma once

#include <functional>
#include <thread>

#include "absl/time/time.h"
#include "libs/common/stop_signal.h"

namespace gpuaas {

class PeriodicTask final {
 public:
  struct Options {
    absl::Duration interval;
    // Run once at start, rather than only after the first interval.
    bool run_immediately = false;
  };

  // Starts the thread at once; `run` is called on it, never concurrently with itself. `run`
  // may watch stop_signal() to cut a long run short.
  PeriodicTask(Options options, std::function<void()> run);
  // Stop() and Join().
  ~PeriodicTask();
  PeriodicTask(const PeriodicTask&) = delete;
  PeriodicTask& operator=(const PeriodicTask&) = delete;

  // Asks the thread to end. Idempotent, thread-safe, never blocks.
  void Stop() { stop_.Stop(); }
  // Stop(), then blocks until the run in progress (if any) has returned and the thread ended.
  // Idempotent. Must not be called from `run`.
  void Join();

  const StopSignal& stop_signal() const { return stop_; }

 private:
  StopSignal stop_;
  std::thread thread_;
};

}  // namespace gpuaas
