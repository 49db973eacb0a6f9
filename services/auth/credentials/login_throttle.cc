#include "services/auth/credentials/login_throttle.h"

#include <algorithm>
#include <string>

namespace gpuaas::auth {

FailureRun AfterFailure(const FailureRun& run, absl::Time now, const ThrottleRule& rule) {
  FailureRun next = run;
  if (now - run.last_failure > rule.failure_window) {
    next.failures = 0;
  }
  next.failures = std::min(next.failures + 1, 1 << 20);
  next.last_failure = now;
  if (next.failures >= rule.max_failures) {
    const int doublings = std::min(next.failures - rule.max_failures, 30);  // 2^30 s dwarfs a cap
    next.locked_until =
        now + std::min(rule.base_lockout * (int64_t{1} << doublings), rule.max_lockout);
  }
  return next;
}

absl::Status Refusal(const FailureRun& run, absl::Time now) {
  if (now >= run.locked_until) {
    return absl::OkStatus();
  }
  const int64_t wait = absl::ToInt64Seconds(absl::Ceil(run.locked_until - now, absl::Seconds(1)));
  return absl::ResourceExhaustedError("too many failed attempts from your address, retry in " +
                                      std::to_string(wait) + "s");
}

}  // namespace gpuaas::auth
