// A service's own access token (an agent's, the instance reconciler's): its API key
// ("<api_key_id>.<secret>") exchanged at the auth service, cached, and exchanged again once most
// of its lifetime has passed, so a call never leaves with a token about to expire. Neither the
// key nor a token is ever logged.
#pragma once

#include <string>

#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "libs/client/auth_client.h"
#include "libs/common/clock.h"

namespace gpuaas::client {

class AccessTokens final {
 public:
  // `auth` and `clock` must outlive this object.
  AccessTokens(const AuthClient& auth, std::string api_key, const Clock& clock);

  // A token to send as "authorization: Bearer ...": the cached one while it is fresh, else a new
  // exchange. Blocks on the exchange (up to the client's timeout). Thread-safe.
  // Errors: UNAUTHENTICATED when auth refuses the key (unknown, revoked, expired);
  // UNAVAILABLE or DEADLINE_EXCEEDED when auth cannot be reached.
  absl::StatusOr<std::string> Get();

  // True when the cached token is past its refresh point (or there is none): whoever holds a
  // connection opened with it should reopen it with Get()'s next answer. Thread-safe.
  bool RefreshDue() const;

  // Drops the cached token, e.g. after a server refused it. Thread-safe.
  void Invalidate();

 private:
  const AuthClient& auth_;
  const std::string api_key_;
  const Clock& clock_;

  mutable absl::Mutex mu_;
  std::string token_ ABSL_GUARDED_BY(mu_);
  absl::Time refresh_at_ ABSL_GUARDED_BY(mu_) = absl::InfinitePast();
};

}  // namespace gpuaas::client
