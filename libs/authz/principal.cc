#include "libs/authz/principal.h"

#include <string>

#include "libs/common/status_macros.h"

namespace gpuaas::authz {

bool Principal::IsGlobal() const { return Has(Power::kAnyTenant); }

bool Principal::IsPlatformAdmin() const {
  return role == ::gpuaas::common::v1::ROLE_PLATFORM_ADMIN;
}

bool Principal::Has(Power power) const { return Holds(role, power); }

absl::Status RequireRole(const Principal& p, Role at_least) {
  const bool any = at_least == ::gpuaas::common::v1::ROLE_UNSPECIFIED && p.Has(Power::kRead);
  if (any || MayGrant(p.role, at_least)) {
    return absl::OkStatus();
  }
  return absl::PermissionDeniedError("permission denied: requires role " +
                                     std::string(RoleName(at_least)));
}

absl::Status RequirePlatformAdmin(const Principal& p) {
  return RequireRole(p, ::gpuaas::common::v1::ROLE_PLATFORM_ADMIN);
}

absl::Status RequirePower(const Principal& p, Power power, std::string_view what) {
  if (p.Has(power)) {
    return absl::OkStatus();
  }
  return absl::PermissionDeniedError("permission denied: " + std::string(what) + " requires role " +
                                     std::string(RoleName(WeakestHolder(power))));
}

absl::Status RequireTenant(const Principal& p, std::string_view tenant_id, std::string_view what) {
  if (p.IsGlobal()) {
    return absl::OkStatus();
  }
  if (!p.tenant_id.empty() && p.tenant_id == tenant_id) {
    return absl::OkStatus();
  }
  return absl::NotFoundError(std::string(what) + " not found");
}

absl::Status RequireNode(const Principal& p, std::string_view node_id, std::string_view what) {
  GPUAAS_RETURN_IF_ERROR(RequirePower(p, Power::kNodeCalls, what));
  // Bound or refused: a holder of node calls without a node acts for none.
  if (!p.node_id.empty() && p.node_id == node_id) {
    return absl::OkStatus();
  }
  return absl::PermissionDeniedError("permission denied: " + std::string(what) +
                                     ": this agent's key is bound to another node");
}

}  // namespace gpuaas::authz
