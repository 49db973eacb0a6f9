// How long a cookie's grant is taken on trust. The cookie is signed, so the proxy can verify it
// alone, but what it grants can stop holding before it expires: the user removed from the
// tenant or demoted, the instance deleted. So each grant is asked about again
// (GrantChecker, AccessService.CheckAccessGrant) once it was last confirmed more than `recheck`
// ago; the answer, yes or no, is cached per cookie value for `recheck`, so a busy page costs
// one RPC per bound, not one per request. An unreachable instance service is not cached: the
// request answers 503 and the next one asks again.
#pragma once

#include <cstddef>
#include <optional>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"

namespace gpuaas::proxy {

class GrantRechecks final {
 public:
  // `recheck`: the bound after which a grant is asked about again. At most `max_entries`
  // cookies are remembered; beyond that, stale entries go, then everything.
  explicit GrantRechecks(absl::Duration recheck, size_t max_entries = 100000)
      : recheck_(recheck), max_entries_(max_entries) {}

  // The answer for `cookie` when it was found within the bound before `now`; nullopt when it
  // must be asked again. Thread-safe, never blocks beyond a short lock.
  std::optional<absl::Status> Fresh(const std::string& cookie, absl::Time now) const;

  // Remembers the answer for `cookie` found at `now` (UNAVAILABLE and DEADLINE_EXCEEDED are
  // not remembered).
  void Remember(const std::string& cookie, const absl::Status& answer, absl::Time now);

  // When the answer remembered for `cookie` was found; nullopt when none is. An open
  // connection on the cookie is re-checked once that is `recheck` ago (open_connection_checks.h).
  std::optional<absl::Time> ConfirmedAt(const std::string& cookie) const;

 private:
  struct Entry {
    absl::Status answer;
    absl::Time checked;
  };

  const absl::Duration recheck_;
  const size_t max_entries_;
  mutable absl::Mutex mu_;
  absl::flat_hash_map<std::string, Entry> entries_ ABSL_GUARDED_BY(mu_);
};

}  // namespace gpuaas::proxy
