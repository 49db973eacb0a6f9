// A fixed-size worker pool. gRPC callback handlers hand blocking work (database calls,
// scrypt) to it so the gRPC event threads never block.
#pragma once

#include <cstddef>
#include <deque>
#include <functional>
#include <thread>
#include <vector>

#include "absl/synchronization/mutex.h"

namespace gpuaas {

class ThreadPool final {
 public:
  // `max_queued` bounds TrySubmit's queue (tasks waiting for a worker); 0 = unbounded.
  explicit ThreadPool(int threads, size_t max_queued = 0);
  // Runs every queued task, then joins the workers.
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  // Queues `task`; never blocks. Tasks must not throw.
  void Submit(std::function<void()> task);

  // As Submit, but refuses (returns false, drops `task`) when `max_queued` tasks are already
  // waiting: under overload a caller should hear "busy" at once rather than be served after
  // it stopped waiting.
  bool TrySubmit(std::function<void()> task);

 private:
  void Work();

  const size_t max_queued_;
  absl::Mutex mu_;
  std::deque<std::function<void()>> queue_ ABSL_GUARDED_BY(mu_);
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  std::vector<std::thread> workers_;
};

}  // namespace gpuaas
