#include "libs/authz/tenant_scope.h"

namespace gpuaas::authz {

absl::StatusOr<std::string> TenantScope(const Principal& p) {
  if (p.IsGlobal()) return std::string();
  if (p.tenant_id.empty()) {
    return absl::PermissionDeniedError("permission denied: the token acts for no tenant");
  }
  return p.tenant_id;
}

absl::StatusOr<std::string> InstanceListScope(const Principal& p, std::string_view what) {
  if (!p.Has(Power::kRead) && p.Has(Power::kAccessCalls)) return std::string();
  if (absl::Status s = RequirePower(p, Power::kRead, what); !s.ok()) return s;
  return TenantScope(p);
}

absl::StatusOr<std::string> TargetTenant(const Principal& p, std::string_view requested) {
  if (!requested.empty()) {
    if (absl::Status s = RequireTenant(p, requested, "tenant"); !s.ok()) return s;
    return std::string(requested);
  }
  if (!p.tenant_id.empty()) return p.tenant_id;
  return absl::InvalidArgumentError(
      "tenant_id: required: the token acts for no tenant, so name the tenant");
}

}  // namespace gpuaas::authz
