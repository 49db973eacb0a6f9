#include "services/storage/tenancy.h"

#include "libs/common/status_macros.h"
#include "libs/service/validate.h"

namespace gpuaas::storage {

absl::StatusOr<std::string> ReadScope(const authz::Principal& p) {
  if (p.IsGlobal()) return std::string();
  if (p.tenant_id.empty()) {
    return absl::PermissionDeniedError("permission denied: the token acts for no tenant");
  }
  return p.tenant_id;
}

absl::StatusOr<std::string> TargetTenant(const authz::Principal& p, const std::string& requested) {
  if (!requested.empty()) {
    GPUAAS_RETURN_IF_ERROR(service::ValidateSlug("tenant_id", requested));
    GPUAAS_RETURN_IF_ERROR(authz::RequireTenant(p, requested, "tenant"));
    return requested;
  }
  if (!p.tenant_id.empty()) return p.tenant_id;
  return service::InvalidField("tenant_id",
                               "required: the token acts for no tenant, so name the tenant");
}

}  // namespace gpuaas::storage
