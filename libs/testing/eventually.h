// Waiting in tests for something another process or thread makes true, without sleeping a
// fixed time (a fixed sleep is either slow or flaky on a loaded 2-core CI machine).
#pragma once

#include <functional>

#include "absl/time/clock.h"
#include "absl/time/time.h"

namespace gpuaas::testing {

// Polls `pred` every 50 ms until it holds or `timeout` passes; returns its last answer.
inline bool Eventually(const std::function<bool()>& pred,
                       absl::Duration timeout = absl::Seconds(30)) {
  const absl::Time deadline = absl::Now() + timeout;
  while (absl::Now() < deadline) {
    if (pred()) return true;
    absl::SleepFor(absl::Milliseconds(50));
  }
  return pred();
}

}  // namespace gpuaas::testing
