#include "libs/common/periodic_task.h"

#include <utility>

namespace gpuaas {

PeriodicTask::PeriodicTask(Options options, std::function<void()> run)
    : thread_([this, options, run = std::move(run)] {
        if (options.run_immediately && !stop_.stopped()) {
          run();
        }
        while (!stop_.WaitFor(options.interval)) {
          run();
        }
      }) {}

PeriodicTask::~PeriodicTask() { Join(); }

void PeriodicTask::Join() {
  stop_.Stop();
  if (thread_.joinable()) {
    thread_.join();
  }
}

}  // namespace gpuaas
