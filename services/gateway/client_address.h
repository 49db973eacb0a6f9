// Which address a request came from, as the gateway tells the auth service (login throttling
// counts by it): the TCP peer's, unless the peer is one of the operator's --trusted-proxies,
// whose X-Forwarded-For / Forwarded headers then name the client. Headers from any other peer
// are ignored, so a client cannot pick the address its guesses count against.
#pragma once

#include <array>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "libs/client/access_tokens.h"
#include "libs/client/call_context.h"
#include "libs/http/http_message.h"

namespace gpuaas::gateway {

// A set of address ranges: IPv4 and IPv6 CIDRs ("10.0.0.0/8", "2001:db8::/32"; a bare address
// is a /32 or /128). IPv4-mapped IPv6 addresses match their IPv4 ranges.
class TrustedProxies final {
 public:
  TrustedProxies() = default;  // trusts no one
  // `list`: comma-separated CIDRs; empty trusts no one. INVALID_ARGUMENT naming `flag` for a
  // malformed entry.
  static absl::StatusOr<TrustedProxies> Parse(absl::string_view flag, absl::string_view list);

  // `address` (an IP literal, IPv6 without brackets) lies in a range. False for non-IPs.
  bool Contains(absl::string_view address) const;

 private:
  struct Range {
    std::array<unsigned char, 16> bytes{};  // IPv4 as IPv4-mapped IPv6
    int prefix = 0;                         // over the 128 bits
  };
  std::vector<Range> ranges_;
};

// The client of `req`: its TCP peer (remote_addr) when that is not trusted; else, walking the
// Forwarded header's `for=` hops (or X-Forwarded-For's, when there is no Forwarded) from the
// nearest, the first hop that is not itself a trusted proxy (or the farthest hop, when all
// are). A malformed or missing hop ends the walk at the last address known good.
std::string ClientAddressOf(const http::HttpRequest& req, const TrustedProxies& trusted);

// How the gateway vouches to the auth service for the address of a login or an API-key
// exchange (client::ForwardedClient): with its own key's token (ROLE_GATEWAY, --api-key-file).
// Without a key it vouches for nothing, and auth counts every REST client as the gateway.
struct ClientVouching {
  TrustedProxies trusted;
  client::AccessTokens* tokens = nullptr;  // not owned; null: no key

  // `call` with `req`'s client vouched for. Without a key, or when its token cannot be had
  // (auth down: the call fails anyway), `call` as it was. May block on the token's exchange.
  client::CallContext& Vouch(const http::HttpRequest& req, client::CallContext& call) const;
  // The same on a raw context (the REST routes').
  void Vouch(const http::HttpRequest& req, grpc::ClientContext& ctx) const;
};

}  // namespace gpuaas::gateway
