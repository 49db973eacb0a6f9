#include "libs/common/stop_signal.h"

namespace gpuaas {

void StopSignal::Stop() {
  absl::MutexLock lock(&mu_);
  stopped_ = true;
}

bool StopSignal::stopped() const {
  absl::MutexLock lock(&mu_);
  return stopped_;
}

bool StopSignal::WaitFor(absl::Duration d) const {
  absl::MutexLock lock(&mu_);
  mu_.AwaitWithTimeout(absl::Condition(&stopped_), d);
  return stopped_;
}

void StopSignal::Wait() const {
  absl::MutexLock lock(&mu_);
  mu_.Await(absl::Condition(&stopped_));
}

}  // namespace gpuaas
