// The proxy's cookie: what a redeemed one-time link grants (authz::WorkloadGrant) until an
// expiry, signed with HMAC-SHA256 under a key every replica shares (--cookie-secret-file), so
// any replica accepts what another set and nobody can forge or widen it. The cookie is
// host-only, so the browser sends it to that one instance port; the payload binds the instance,
// port and tenant anyway, so a cookie carried to another host grants nothing there.
//
//   value = base64url(payload) "." base64url(HMAC-SHA256(key, payload))
//   payload = "v1|" instance_id "|" port "|" tenant_id "|" user_id "|" expiry unix seconds
#pragma once

#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "libs/authz/workload_access.h"

namespace gpuaas::proxy {

// The cookie's name; "__Host-" is not used because it requires Secure, and plain HTTP is the
// default on a development machine.
inline constexpr std::string_view kAccessCookieName = "gpuaas_access";

class AccessCookieSigner final {
 public:
  // `key`: at least 32 bytes (the secret file's contents).
  explicit AccessCookieSigner(std::string key) : key_(std::move(key)) {}

  // The cookie value for `grant`, valid until `expiry`. Error: INVALID_ARGUMENT when a field
  // holds '|' (ids never do).
  absl::StatusOr<std::string> Sign(const authz::WorkloadGrant& grant, absl::Time expiry) const;

  // The grant of a cookie value this key signed, if it is unexpired at `now`. UNAUTHENTICATED
  // for anything else (malformed, forged, expired), without saying which. Never blocks.
  absl::StatusOr<authz::WorkloadGrant> Verify(std::string_view value, absl::Time now) const;

 private:
  std::string Mac(std::string_view payload) const;

  const std::string key_;
};

// The value of the cookie named `name` in a Cookie header ("a=1; b=2"); "" when absent.
std::string_view FindCookie(std::string_view cookie_header, std::string_view name);

// The Cookie header without the cookie named `name`; "" when nothing else is left.
std::string WithoutCookie(std::string_view cookie_header, std::string_view name);

}  // namespace gpuaas::proxy
