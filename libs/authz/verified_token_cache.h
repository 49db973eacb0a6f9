// Tokens that already verified, so a client reusing its access token (the usual case: one token
// for its whole 15-minute life) costs a hash lookup instead of an Ed25519 verification, which
// is most of a token check's CPU.
//
// An entry belongs to the key-set generation it was verified against; a new JWKS drops every
// entry, so a key the auth service withdraws stops verifying at the next refetch, as without
// the cache. Expiry is checked on every hit.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "libs/authz/principal.h"

namespace gpuaas::authz {

// Thread-safe. Bounded: when full, expired entries go first, then everything.
class VerifiedTokenCache final {
 public:
  explicit VerifiedTokenCache(size_t capacity) : capacity_(capacity) {}

  // The principal of `token` if it verified against key generation `generation` and is neither
  // expired nor not yet valid at `now` (with `leeway`, the same rule as VerifyJwt).
  std::optional<Principal> Find(std::string_view token, uint64_t generation, absl::Time now,
                                absl::Duration leeway) ABSL_LOCKS_EXCLUDED(mu_);

  // Records a token that verified against key generation `generation`.
  void Insert(std::string_view token, uint64_t generation, Principal principal, absl::Time iat,
              absl::Time exp, absl::Time now) ABSL_LOCKS_EXCLUDED(mu_);

  size_t size() const ABSL_LOCKS_EXCLUDED(mu_);

 private:
  struct Entry {
    Principal principal;
    absl::Time iat;
    absl::Time exp;
  };

  const size_t capacity_;
  mutable absl::Mutex mu_;
  uint64_t generation_ ABSL_GUARDED_BY(mu_) = 0;
  absl::flat_hash_map<std::string, Entry> entries_ ABSL_GUARDED_BY(mu_);
};

}  // namespace gpuaas::authz
