// Who is calling: the identity a verified access token carries, and the permission checks
// every service applies to it.
#pragma once

#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "libs/authz/roles.h"

namespace gpuaas::authz {

struct Principal {
  std::string user_id;    // JWT sub
  std::string tenant_id;  // the one tenant the token acts for; empty only for global roles
  Role role = ::gpuaas::common::v1::ROLE_UNSPECIFIED;
  std::string token_id;    // jti
  std::string api_key_id;  // set when the token came from ExchangeApiKey
  std::string node_id;     // the node a NODE_AGENT token acts for (claim "node")
  std::string audience;    // "node:<id>" for a token minted for one agent call (node_calls.h)
  std::string purpose;     // the one agent call such a token makes

  // Holds Power::kAnyTenant (PLATFORM_ADMIN, SERVICE): may act across tenants.
  bool IsGlobal() const;
  bool IsPlatformAdmin() const;
  // The role holds `power` (roles.h).
  bool Has(Power power) const;
};

// The principal's role satisfies `at_least`: MayGrant(p.role, at_least) (roles.h), so
// PLATFORM_ADMIN passes every check and SERVICE passes up to MEMBER. `at_least` =
// ROLE_UNSPECIFIED accepts any role that reads (Power::kRead), so the machine roles, which read
// nothing, are refused; an unknown requirement fails closed.
// Error: PERMISSION_DENIED naming the role needed.
absl::Status RequireRole(const Principal& p, Role at_least);

// Only PLATFORM_ADMIN. Error: PERMISSION_DENIED.
absl::Status RequirePlatformAdmin(const Principal& p);

// The principal holds `power`. Error: PERMISSION_DENIED saying `what` needs it.
absl::Status RequirePower(const Principal& p, Power power, std::string_view what);

// The caller acts in `tenant_id`, or is global. Another tenant's resource is NOT_FOUND
// ("<what> not found"), so callers cannot learn that it exists.
absl::Status RequireTenant(const Principal& p, std::string_view tenant_id, std::string_view what);

// The principal may make a node call (Power::kNodeCalls) for `node_id`: only a NODE_AGENT (the
// one role holding node calls), only for the node its token is bound to; no role acts for
// every node. Error:
// PERMISSION_DENIED, also for another node's id: node ids are no secret (ListNodes shows them)
// and a NOT_FOUND would read to an agent as "register again" (Heartbeat's answer for an unknown
// node), making a misbound agent loop instead of stopping on a clear refusal.
absl::Status RequireNode(const Principal& p, std::string_view node_id, std::string_view what);

}  // namespace gpuaas::authz
