// StopSignal: the one way a loop in this tree learns that it should end. One side calls Stop();
// the loop checks stopped() between units of work and waits with WaitFor(), which returns at
// once when Stop() comes, so a process shuts down without waiting out a poll interval.
#pragma once

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"

namespace gpuaas {

class StopSignal final {
 public:
  StopSignal() = default;
  StopSignal(const StopSignal&) = delete;
  StopSignal& operator=(const StopSignal&) = delete;

  // Raises the signal and wakes every waiter. Idempotent, thread-safe, never blocks.
  void Stop();
  // Whether Stop() was called. Thread-safe, never blocks.
  bool stopped() const;
  // Blocks for `d` or until Stop(), whichever comes first; returns stopped(). A zero or negative
  // `d` only checks. Thread-safe. The usual loop: `while (!stop.WaitFor(interval)) { work(); }`.
  bool WaitFor(absl::Duration d) const;
  // Blocks until Stop().
  void Wait() const;

 private:
  mutable absl::Mutex mu_;
  bool stopped_ ABSL_GUARDED_BY(mu_) = false;
};

}  // namespace gpuaas
