// A fixed-size worker pool. gRPC callback handlers hand blocking work (database calls,
// scrypt) to it so the gRPC event threads never block.
#pragma once

#include <deque>
#include <functional>
#include <thread>
#include <vector>

#include "absl/synchronization/mutex.h"

namespace gpuaas {

class ThreadPool final {
 public:
  explicit ThreadPool(int threads);
  // Runs every queued task, then joins the workers.
  ~ThreadPool();
  ThreadPool(const ThreadPool&) = delete;
  ThreadPool& operator=(const ThreadPool&) = delete;

  // Queues `task`; never blocks. Tasks must not throw.
  void Submit(std::function<void()> task);

 private:
  void Work();

  absl::Mutex mu_;
  std::deque<std::function<void()>> queue_ ABSL_GUARDED_BY(mu_);
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  std::vector<std::thread> workers_;
};

}  // namespace gpuaas
