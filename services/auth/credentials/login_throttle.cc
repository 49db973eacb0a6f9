#include "services/auth/credentials/login_throttle.h"

#include <algorithm>
#include <cmath>

namespace gpuaas::auth {
namespace {

// Our abseil's heterogeneous lookup takes absl::string_view, a distinct type here.
absl::string_view AbslView(std::string_view s) { return absl::string_view(s.data(), s.size()); }

}  // namespace

LoginThrottle::LoginThrottle(const Clock& clock, LoginThrottleOptions options)
    : clock_(clock), options_(options) {}

absl::Status LoginThrottle::Check(std::string_view key) const {
  const absl::Time now = clock_.Now();
  absl::MutexLock lock(&mu_);
  auto it = index_.find(AbslView(key));
  if (it == index_.end() || now >= it->second->locked_until) {
    return absl::OkStatus();
  }
  // Round up, so "retry in 0s" never appears and retrying after N seconds always succeeds.
  const int64_t wait =
      absl::ToInt64Seconds(absl::Ceil(it->second->locked_until - now, absl::Seconds(1)));
  return absl::ResourceExhaustedError("too many failed logins, retry in " + std::to_string(wait) +
                                      "s");
}

void LoginThrottle::RecordFailure(std::string_view key) {
  const absl::Time now = clock_.Now();
  absl::MutexLock lock(&mu_);
  auto it = index_.find(AbslView(key));
  Lru::iterator entry;
  if (it == index_.end()) {
    EvictLocked(now);
    entry = lru_.emplace(lru_.end());
    entry->key = std::string(key);
    index_.emplace(entry->key, entry);
  } else {
    entry = it->second;
    lru_.splice(lru_.end(), lru_, entry);  // most recently failed moves to the back
    if (now - entry->last_failure > options_.failure_window) {
      entry->failures = 0;
    }
  }
  entry->failures++;
  entry->last_failure = now;
  if (entry->failures >= options_.max_failures) {
    entry->locked_until = now + LockoutFor(entry->failures);
  }
}

void LoginThrottle::RecordSuccess(std::string_view key) {
  absl::MutexLock lock(&mu_);
  auto it = index_.find(AbslView(key));
  if (it == index_.end()) {
    return;
  }
  lru_.erase(it->second);
  index_.erase(it);
}

size_t LoginThrottle::size() const {
  absl::MutexLock lock(&mu_);
  return index_.size();
}

// Drops entries whose run has lapsed (they would reset on the next failure anyway), then, if
// still full, the least recently failed ones. The list is ordered by last failure, so both
// stop at the first entry to keep: O(1) amortized per call.
void LoginThrottle::EvictLocked(absl::Time now) {
  auto drop_front = [this] {
    index_.erase(lru_.front().key);
    lru_.pop_front();
  };
  while (!lru_.empty() && now - lru_.front().last_failure > options_.failure_window &&
         now >= lru_.front().locked_until) {
    drop_front();
  }
  while (!lru_.empty() && lru_.size() >= std::max<size_t>(options_.max_entries, 1)) {
    drop_front();
  }
}

absl::Duration LoginThrottle::LockoutFor(int failures) const {
  const int doublings = std::min(failures - options_.max_failures, 30);  // 2^30 s dwarfs any cap
  return std::min(options_.base_lockout * (int64_t{1} << doublings), options_.max_lockout);
}

}  // namespace gpuaas::auth
