// The one role model: what each role may do (its powers) and which roles it may hand on to an
// API key or a membership. Every permission decision in gpuaas reduces to these functions, so a
// role means the same thing in every service.
//
//   role              powers
//   VIEWER            read
//   MEMBER            read, use
//   TENANT_ADMIN      read, use, manage people
//   SERVICE           read, use, any tenant, service calls (never manages people)
//   NODE_AGENT        node calls, only for the node its key is bound to (RequireNode)
//   ACCESS_PROXY      access calls
//   GATEWAY           forward client addresses
//   PLATFORM_ADMIN    read, use, manage people, any tenant, service calls, platform
//
// Each node call and access call has exactly one holder: its machine's own key. The machine
// roles (NODE_AGENT, ACCESS_PROXY) hold no tenant power at all: a compromised node or proxy
// reaches no tenant's API, storage or other nodes. SERVICE (the instance service's key) holds
// neither machine's calls, so a leaked service key cannot act as a node or as the proxy. Nor
// does PLATFORM_ADMIN: a person is not a node, and a token that could act for every node is
// the unbound machine credential issue 22 removes; an admin makes the machines' keys instead.
//
// A role may grant another exactly when it holds every power of the other, so no chain of
// grants (API keys, memberships) ever yields more power than its start: SERVICE cannot mint a
// TENANT_ADMIN key, a TENANT_ADMIN cannot mint a SERVICE key. The one exception: a machine
// role is granted by Power::kPlatform alone (platform admins mint the machines' keys, a node
// agent's bound to one node, without holding the machines' powers themselves).
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

#include "gpuaas/common/v1/common.pb.h"

namespace gpuaas::authz {

using Role = ::gpuaas::common::v1::Role;

enum class Power : uint32_t {
  kRead = 1u << 0,          // read the tenant's resources
  kUse = 1u << 1,           // create and drive the tenant's resources (instances, storages)
  kManagePeople = 1u << 2,  // the tenant's members, their API keys, the tenant's name
  kAnyTenant = 1u << 3,     // act in every tenant, not only the token's
  kServiceCalls = 1u << 4,  // calls only services make (claim stock, attach storage)
  kPlatform = 1u << 5,      // tenants, users, quotas, specs, stock, signing keys
  kNodeCalls = 1u << 6,     // register a node, heartbeat, watch and report its workloads
  kAccessCalls = 1u << 7,   // the access proxy's calls (redeem access codes, report access)
  // Name the client address a public call (Login, ExchangeApiKey) came from, which login
  // throttling counts by; anyone else's claim is ignored and its TCP peer counts.
  kForwardClientAddress = 1u << 8,
};

// The powers of `role` as a bit set; 0 for ROLE_UNSPECIFIED and values outside the enum.
uint32_t PowersOf(Role role);

// `role` holds `power`. False for ROLE_UNSPECIFIED and unknown values.
bool Holds(Role role, Power power);

// `holder` may hand `granted` on: `granted` is a real role and every power it has, `holder`
// has too; or `granted` is a machine role and `holder` holds Power::kPlatform. The same test
// answers "does `holder` satisfy a check that needs `granted`".
bool MayGrant(Role holder, Role granted);

// The strongest role whose powers lie within both `a` and `b` (what an API key of role `b`
// may do for a creator who now holds `a`); ROLE_UNSPECIFIED when no role fits. A machine role
// meets a role that may grant it in itself: a machine's key works while its maker is still a
// platform admin.
Role Meet(Role a, Role b);

// The weakest role holding `power`, for messages that tell the caller what it lacks.
Role WeakestHolder(Power power);

// VIEWER, MEMBER, TENANT_ADMIN: held per tenant, meaningless without one.
bool IsTenantRole(Role role);

// PLATFORM_ADMIN, SERVICE: held by a user globally.
bool IsGlobalRole(Role role);

// NODE_AGENT, ACCESS_PROXY, GATEWAY: held only by API keys a platform admin made, never by a user.
bool IsMachineRole(Role role);

// The name tokens carry ("TENANT_ADMIN", without the enum prefix); "UNKNOWN" outside the enum.
std::string_view RoleName(Role role);

// The inverse of RoleName for the real roles; nullopt for anything else, including
// "ROLE_UNSPECIFIED", so a token can never carry an unspecified role.
std::optional<Role> RoleFromName(std::string_view name);

}  // namespace gpuaas::authz
