#include "libs/authz/principal.h"

#include <string>

namespace gpuaas::authz {
namespace {

using ::gpuaas::common::v1::MEMBER;
using ::gpuaas::common::v1::PLATFORM_ADMIN;
using ::gpuaas::common::v1::ROLE_UNSPECIFIED;
using ::gpuaas::common::v1::SERVICE;
using ::gpuaas::common::v1::TENANT_ADMIN;
using ::gpuaas::common::v1::VIEWER;

// Rank among tenant roles; 0 for roles outside the tenant ladder.
int TenantRank(Role r) {
  switch (r) {
    case VIEWER:
      return 1;
    case MEMBER:
      return 2;
    case TENANT_ADMIN:
      return 3;
    default:
      return 0;
  }
}

bool Satisfies(Role have, Role need) {
  if (have == ROLE_UNSPECIFIED || RoleName(have) == "UNKNOWN") {
    return false;
  }
  if (have == PLATFORM_ADMIN || need == ROLE_UNSPECIFIED) {
    return true;
  }
  if (need == PLATFORM_ADMIN) {
    return false;
  }
  if (need == SERVICE) {
    return have == SERVICE;
  }
  const int need_rank = TenantRank(need);
  if (need_rank == 0) {
    return false;  // an out-of-range requirement is a bug; fail closed
  }
  if (have == SERVICE) {
    return need_rank <= TenantRank(MEMBER);
  }
  return TenantRank(have) >= need_rank;
}

}  // namespace

bool Principal::IsGlobal() const { return role == PLATFORM_ADMIN || role == SERVICE; }

bool Principal::IsPlatformAdmin() const { return role == PLATFORM_ADMIN; }

absl::Status RequireRole(const Principal& p, Role at_least) {
  if (Satisfies(p.role, at_least)) {
    return absl::OkStatus();
  }
  return absl::PermissionDeniedError("permission denied: requires role " +
                                     std::string(RoleName(at_least)));
}

absl::Status RequirePlatformAdmin(const Principal& p) { return RequireRole(p, PLATFORM_ADMIN); }

absl::Status RequireTenant(const Principal& p, std::string_view tenant_id, std::string_view what) {
  if (p.IsGlobal()) {
    return absl::OkStatus();
  }
  if (!p.tenant_id.empty() && p.tenant_id == tenant_id) {
    return absl::OkStatus();
  }
  return absl::NotFoundError(std::string(what) + " not found");
}

std::string_view RoleName(Role r) {
  switch (r) {
    case ROLE_UNSPECIFIED:
      return "ROLE_UNSPECIFIED";
    case VIEWER:
      return "VIEWER";
    case MEMBER:
      return "MEMBER";
    case TENANT_ADMIN:
      return "TENANT_ADMIN";
    case PLATFORM_ADMIN:
      return "PLATFORM_ADMIN";
    case SERVICE:
      return "SERVICE";
    default:
      return "UNKNOWN";
  }
}

std::optional<Role> RoleFromName(std::string_view name) {
  for (Role r : {VIEWER, MEMBER, TENANT_ADMIN, PLATFORM_ADMIN, SERVICE}) {
    if (RoleName(r) == name) {
      return r;
    }
  }
  return std::nullopt;
}

}  // namespace gpuaas::authz
