#include "services/auth/policy.h"

#include <string>

#include "libs/authz/roles.h"
#include "libs/service/validate.h"

namespace gpuaas::auth {

absl::StatusOr<common::v1::Role> ApiKeyRole(const authz::Principal& p, common::v1::Role requested) {
  const common::v1::Role role = requested == common::v1::ROLE_UNSPECIFIED ? p.role : requested;
  if (authz::PowersOf(role) == 0) {
    return service::InvalidField("role", "unknown role");
  }
  if (!authz::MayGrant(p.role, role)) {
    return absl::PermissionDeniedError("role: " + std::string(authz::RoleName(role)) +
                                       " is more than the caller may grant");
  }
  if (authz::IsTenantRole(role) && p.tenant_id.empty()) {
    return absl::FailedPreconditionError(
        "role: a tenant role needs a token that acts for a tenant; log in with a tenant");
  }
  return role;
}

absl::Status ApiKeyNode(common::v1::Role role, std::string_view node_id) {
  const bool bound = role == common::v1::ROLE_NODE_AGENT;
  if (bound && node_id.empty()) {
    return service::InvalidField("node_id", "required for a ROLE_NODE_AGENT key");
  }
  if (!bound && !node_id.empty()) {
    return service::InvalidField("node_id", "only a ROLE_NODE_AGENT key is bound to a node");
  }
  return absl::OkStatus();
}

bool HasSelfRights(const authz::Principal& p, std::string_view user_id) {
  return p.api_key_id.empty() && p.user_id == user_id;
}

bool MayManageKey(const authz::Principal& p, const auth::v1::ApiKey& key) {
  if (p.Has(authz::Power::kPlatform)) {
    return true;
  }
  if (key.tenant_id() != p.tenant_id) {
    return false;
  }
  // A tenant admin may not revoke the platform's service keys made in its tenant.
  return HasSelfRights(p, key.user_id()) ||
         (p.Has(authz::Power::kManagePeople) && authz::MayGrant(p.role, key.role()));
}

absl::Status RequireGrantable(const authz::Principal& p, common::v1::Role role) {
  if (authz::MayGrant(p.role, role)) {
    return absl::OkStatus();
  }
  return absl::PermissionDeniedError("role: " + std::string(authz::RoleName(role)) +
                                     " is more than the caller may grant");
}

}  // namespace gpuaas::auth
