#include "libs/authz/roles.h"

#include <iterator>

namespace gpuaas::authz {
namespace {

using ::gpuaas::common::v1::ROLE_ACCESS_PROXY;
using ::gpuaas::common::v1::ROLE_GATEWAY;
using ::gpuaas::common::v1::ROLE_MEMBER;
using ::gpuaas::common::v1::ROLE_NODE_AGENT;
using ::gpuaas::common::v1::ROLE_PLATFORM_ADMIN;
using ::gpuaas::common::v1::ROLE_SERVICE;
using ::gpuaas::common::v1::ROLE_TENANT_ADMIN;
using ::gpuaas::common::v1::ROLE_UNSPECIFIED;
using ::gpuaas::common::v1::ROLE_VIEWER;

constexpr uint32_t Bit(Power p) { return static_cast<uint32_t>(p); }

constexpr uint32_t kViewer = Bit(Power::kRead);
constexpr uint32_t kMember = kViewer | Bit(Power::kUse);
constexpr uint32_t kTenantAdmin = kMember | Bit(Power::kManagePeople);
constexpr uint32_t kNodeAgent = Bit(Power::kNodeCalls);
constexpr uint32_t kAccessProxy = Bit(Power::kAccessCalls);
constexpr uint32_t kGateway = Bit(Power::kForwardClientAddress);
// Only what the instance service calls with it: claim and release stock, attach and detach
// storage, read agents' workload logs, and look up tenants, users and storages in any tenant.
constexpr uint32_t kService = kMember | Bit(Power::kAnyTenant) | Bit(Power::kServiceCalls);
constexpr uint32_t kPlatformAdmin = kTenantAdmin | kService | Bit(Power::kPlatform);

// Strongest first, for Meet. The machine roles share no power with the tenant roles, so their
// place after VIEWER never makes Meet pick one for a tenant role.
constexpr Role kByStrength[] = {ROLE_PLATFORM_ADMIN, ROLE_SERVICE, ROLE_TENANT_ADMIN,
                                ROLE_MEMBER,         ROLE_VIEWER,  ROLE_NODE_AGENT,
                                ROLE_ACCESS_PROXY,   ROLE_GATEWAY};

bool Within(uint32_t inner, uint32_t outer) { return (inner & ~outer) == 0; }

}  // namespace

uint32_t PowersOf(Role role) {
  switch (role) {
    case ROLE_VIEWER:
      return kViewer;
    case ROLE_MEMBER:
      return kMember;
    case ROLE_TENANT_ADMIN:
      return kTenantAdmin;
    case ROLE_SERVICE:
      return kService;
    case ROLE_PLATFORM_ADMIN:
      return kPlatformAdmin;
    case ROLE_NODE_AGENT:
      return kNodeAgent;
    case ROLE_ACCESS_PROXY:
      return kAccessProxy;
    case ROLE_GATEWAY:
      return kGateway;
    default:
      return 0;
  }
}

bool Holds(Role role, Power power) { return (PowersOf(role) & Bit(power)) != 0; }

bool MayGrant(Role holder, Role granted) {
  const uint32_t want = PowersOf(granted);
  if (IsMachineRole(granted)) return Holds(holder, Power::kPlatform);
  return want != 0 && Within(want, PowersOf(holder));
}

Role Meet(Role a, Role b) {
  if (IsMachineRole(b) && MayGrant(a, b)) return b;
  if (IsMachineRole(a) && MayGrant(b, a)) return a;
  const uint32_t both = PowersOf(a) & PowersOf(b);
  for (Role r : kByStrength) {
    if (Within(PowersOf(r), both)) {
      return r;
    }
  }
  return ROLE_UNSPECIFIED;
}

Role WeakestHolder(Power power) {
  for (auto it = std::rbegin(kByStrength); it != std::rend(kByStrength); ++it) {
    if (Holds(*it, power)) {
      return *it;
    }
  }
  return ROLE_PLATFORM_ADMIN;
}

bool IsTenantRole(Role role) {
  return role == ROLE_VIEWER || role == ROLE_MEMBER || role == ROLE_TENANT_ADMIN;
}

bool IsGlobalRole(Role role) { return role == ROLE_PLATFORM_ADMIN || role == ROLE_SERVICE; }

bool IsMachineRole(Role role) {
  return role == ROLE_NODE_AGENT || role == ROLE_ACCESS_PROXY || role == ROLE_GATEWAY;
}

std::string_view RoleName(Role role) {
  switch (role) {
    case ROLE_UNSPECIFIED:
      return "ROLE_UNSPECIFIED";
    case ROLE_VIEWER:
      return "VIEWER";
    case ROLE_MEMBER:
      return "MEMBER";
    case ROLE_TENANT_ADMIN:
      return "TENANT_ADMIN";
    case ROLE_PLATFORM_ADMIN:
      return "PLATFORM_ADMIN";
    case ROLE_SERVICE:
      return "SERVICE";
    case ROLE_NODE_AGENT:
      return "NODE_AGENT";
    case ROLE_ACCESS_PROXY:
      return "ACCESS_PROXY";
    case ROLE_GATEWAY:
      return "GATEWAY";
    default:
      return "UNKNOWN";
  }
}

std::optional<Role> RoleFromName(std::string_view name) {
  for (Role r : kByStrength) {
    if (RoleName(r) == name) {
      return r;
    }
  }
  return std::nullopt;
}

}  // namespace gpuaas::authz
