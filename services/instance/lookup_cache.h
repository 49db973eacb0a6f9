// A short-lived copy, per replica, of answers read from another service, by key: CreateInstance
// keeps specs (by spec name) and tenants (by tenant id) here for a few seconds, so that most
// creates make no call before their transaction. What may be served from it, to whom, and how
// stale, is the user's decision (instances.h); this only stores and forgets.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <utility>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "libs/common/clock.h"

namespace gpuaas::instance {

// Thread-safe. Bounded: when full, expired entries go first, then everything (a burst of new
// keys costs one round of calls, never memory).
template <class V>
class LookupCache final {
 public:
  // Values live `ttl` after Insert on `clock`; a `ttl` of zero (or a `capacity` of zero) keeps
  // nothing.
  LookupCache(const Clock& clock, absl::Duration ttl, size_t capacity)
      : clock_(clock), ttl_(ttl), capacity_(capacity) {}

  // The value inserted for `key` less than `ttl` ago.
  std::optional<V> Find(const std::string& key) const ABSL_LOCKS_EXCLUDED(mu_) {
    const absl::Time now = clock_.Now();
    absl::MutexLock lock(&mu_);
    auto it = entries_.find(key);
    if (it == entries_.end() || it->second.expires <= now) return std::nullopt;
    return it->second.value;
  }

  void Insert(const std::string& key, V value) ABSL_LOCKS_EXCLUDED(mu_) {
    if (ttl_ <= absl::ZeroDuration() || capacity_ == 0) return;
    const absl::Time now = clock_.Now();
    absl::MutexLock lock(&mu_);
    if (entries_.size() >= capacity_ && !entries_.contains(key)) MakeRoom(now);
    entries_.insert_or_assign(key, Entry{std::move(value), now + ttl_});
  }

  size_t size() const ABSL_LOCKS_EXCLUDED(mu_) {
    absl::MutexLock lock(&mu_);
    return entries_.size();
  }

 private:
  struct Entry {
    V value;
    absl::Time expires;
  };

  void MakeRoom(absl::Time now) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    absl::erase_if(entries_, [now](const auto& e) { return e.second.expires <= now; });
    if (entries_.size() >= capacity_) entries_.clear();
  }

  const Clock& clock_;
  const absl::Duration ttl_;
  const size_t capacity_;
  mutable absl::Mutex mu_;
  absl::flat_hash_map<std::string, Entry> entries_ ABSL_GUARDED_BY(mu_);
};

}  // namespace gpuaas::instance
