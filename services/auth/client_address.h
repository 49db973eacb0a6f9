// Which client address a public call (Login, ExchangeApiKey) counts against in login
// throttling (login_guard.h). The TCP peer's, unless the call carries a client address vouched
// for by a token holding Power::kForwardClientAddress (the REST gateway's own key,
// ROLE_GATEWAY; client::ForwardedClient). A tenant calling this port directly cannot claim
// another address: its claim, with no such token, is ignored.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "libs/authz/verifier.h"
#include "libs/client/call_context.h"

namespace gpuaas::auth {

// `text` as throttling counts it: an IPv4 address in dotted form; an IPv4-mapped IPv6 address
// as its IPv4; any other IPv6 address as its /64 ("2001:db8:1:2::/64"), the least one
// subscriber is given, so a guesser cannot walk through its own addresses. nullopt when `text`
// is not an IP literal.
std::optional<std::string> ThrottleAddress(std::string_view text);

class ClientAddresses final {
 public:
  // `forwarders` checks the forwarding fronts' tokens; it must outlive this object.
  explicit ClientAddresses(authz::Authenticator& forwarders) : forwarders_(forwarders) {}

  // The address of the call from `peer` (rpc::PeerAddress form) carrying `forwarded`: the
  // forwarded one when its token verifies and holds the power and it is an IP literal, else
  // the peer's (a peer that is no IP, a Unix socket, counts as its path). May block: verifying
  // a token can fetch keys.
  std::string Resolve(std::string_view peer, const client::ForwardedClient& forwarded) const;

 private:
  authz::Authenticator& forwarders_;
};

}  // namespace gpuaas::auth
