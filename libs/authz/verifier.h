// Local access-token verification against a cached JWKS, so no request waits on the auth
// service. The JWKS is fetched once, then again only when a token names an unknown kid
// (at most once per `min_refetch_interval`) or the cache is older than `max_age`.
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "libs/authz/principal.h"
#include "libs/common/clock.h"

namespace gpuaas::authz {

// Where the JWKS document comes from: the auth service over gRPC, or (inside the auth service)
// its own key store.
class JwksSource {
 public:
  virtual ~JwksSource() = default;
  // Returns the JWKS JSON. May block on the network. UNAVAILABLE when unreachable.
  virtual absl::StatusOr<std::string> FetchJwks() = 0;
};

// Turns the `authorization` metadata value ("Bearer <jwt>") into a Principal.
class Authenticator {
 public:
  virtual ~Authenticator() = default;
  // UNAUTHENTICATED for a missing, malformed, forged, expired or unknown-kid token;
  // UNAVAILABLE when the keys cannot be fetched at all.
  virtual absl::StatusOr<Principal> Authenticate(std::string_view authorization_header) = 0;
};

struct VerifierOptions {
  std::string issuer = "gpuaas-auth";
  // The tokens' "aud" must equal it. Empty for the platform's APIs, which therefore refuse
  // every token minted for a node; an agent sets its node's (authz::NodeAudience), and so
  // accepts only tokens minted for it.
  std::string audience;
  absl::Duration min_refetch_interval = absl::Seconds(10);
  absl::Duration max_age = absl::Minutes(5);
  absl::Duration leeway = absl::Seconds(30);
};

// Thread-safe. Fetches outside its lock so concurrent verifications never wait on the network
// except the first ones. One fetch runs at a time. While no keys were ever fetched, every call
// tries (one at a time) and fails UNAVAILABLE if the fetch fails; once keys exist, a failed
// refresh keeps serving them (logged), so an auth-service outage does not stop verification.
// Blocks for at most one FetchJwks per call.
std::unique_ptr<Authenticator> NewJwksAuthenticator(std::unique_ptr<JwksSource> source,
                                                    const Clock& clock,
                                                    VerifierOptions options = {});

}  // namespace gpuaas::authz
