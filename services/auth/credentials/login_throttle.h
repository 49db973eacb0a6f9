// The arithmetic of login throttling, apart from where the counts live (the auth service keeps
// them in PostgreSQL, login_guard.h, so every replica sees the same ones): a run of failures
// for one key (a client address, or an account at a client address) past `max_failures` locks
// the key out for a lockout that doubles with each further failure, up to `max_lockout`.
// Pure functions; unit-tested in login_throttle_test.cc.
#pragma once

#include <cstdint>

#include "absl/status/status.h"
#include "absl/time/time.h"

namespace gpuaas::auth {

struct ThrottleRule {
  // Consecutive failures allowed before the first lockout.
  int max_failures = 5;
  // A failure more than this long after the previous one starts a fresh run.
  absl::Duration failure_window = absl::Minutes(15);
  // The first lockout; each further failure doubles it, up to max_lockout.
  absl::Duration base_lockout = absl::Seconds(1);
  absl::Duration max_lockout = absl::Minutes(5);
};

// One key's run of failures as stored.
struct FailureRun {
  int32_t failures = 0;
  absl::Time last_failure = absl::InfinitePast();
  absl::Time locked_until = absl::InfinitePast();
};

// The run after one more failure at `now`: a lapsed run starts again at 1; past max_failures
// the key is locked until now + the doubled lockout.
FailureRun AfterFailure(const FailureRun& run, absl::Time now, const ThrottleRule& rule);

// OK, or RESOURCE_EXHAUSTED "too many failed attempts from your address, retry in Ns" while
// `run` is locked at `now` (N rounded up, so retrying after N seconds always passes this
// check). The message names no account: a refusal must not tell whose login was guessed.
absl::Status Refusal(const FailureRun& run, absl::Time now);

}  // namespace gpuaas::auth
