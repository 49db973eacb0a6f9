// Slows down password guessing: after a run of failed logins for one key (a user name, or a
// peer address) further attempts are refused for an exponentially growing lockout.
#pragma once

#include <cstdint>
#include <list>
#include <string>
#include <string_view>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "libs/common/clock.h"

namespace gpuaas::auth {

struct LoginThrottleOptions {
  // Consecutive failures allowed before the first lockout.
  int max_failures = 5;
  // A failure more than this long after the previous one starts a fresh run.
  absl::Duration failure_window = absl::Minutes(15);
  // The first lockout; each further failure doubles it, up to max_lockout.
  absl::Duration base_lockout = absl::Seconds(1);
  absl::Duration max_lockout = absl::Minutes(5);
  // Memory bound: beyond this many keys the least recently failed ones are forgotten. An
  // attacker spraying names can thereby free a locked key early, but never grow our memory.
  size_t max_entries = 100'000;
};

// Thread-safe; never blocks on I/O. Keys are opaque: use one throttle per dimension (e.g. a
// user-name throttle and a peer-address throttle with a higher max_failures), and record
// failures for unknown user names too, so a refusal says nothing about whether a user exists.
class LoginThrottle final {
 public:
  explicit LoginThrottle(const Clock& clock, LoginThrottleOptions options = {});

  LoginThrottle(const LoginThrottle&) = delete;
  LoginThrottle& operator=(const LoginThrottle&) = delete;

  // OK, or RESOURCE_EXHAUSTED "too many failed logins, retry in Ns" while `key` is locked out.
  // Call before checking the password, so a locked-out caller learns nothing from it.
  absl::Status Check(std::string_view key) const;

  // A failed attempt: extends the run and, past max_failures, starts or doubles the lockout.
  void RecordFailure(std::string_view key);

  // A successful login forgets the key's failures.
  void RecordSuccess(std::string_view key);

  // Keys currently remembered (for tests and metrics).
  size_t size() const;

 private:
  struct Entry {
    std::string key;
    int failures = 0;
    absl::Time last_failure;
    absl::Time locked_until;
  };
  using Lru = std::list<Entry>;  // front = least recently failed

  void EvictLocked(absl::Time now) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  absl::Duration LockoutFor(int failures) const;

  const Clock& clock_;
  const LoginThrottleOptions options_;
  mutable absl::Mutex mu_;
  Lru lru_ ABSL_GUARDED_BY(mu_);
  absl::flat_hash_map<std::string, Lru::iterator> index_ ABSL_GUARDED_BY(mu_);
};

}  // namespace gpuaas::auth
