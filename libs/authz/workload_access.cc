#include "libs/authz/workload_access.h"

namespace gpuaas::authz {

absl::Status AuthorizeWorkloadAccess(const Principal& p, std::string_view instance_tenant_id) {
  if (absl::Status s = RequireTenant(p, instance_tenant_id, "instance"); !s.ok()) {
    return s;
  }
  return RequirePower(p, Power::kUse, "reaching an instance's workload");
}

absl::Status AuthorizeWorkloadAccess(const WorkloadGrant& grant, std::string_view instance_id,
                                     int32_t port, std::string_view instance_tenant_id) {
  if (grant.instance_id != instance_id || grant.port != port ||
      grant.tenant_id != instance_tenant_id || grant.tenant_id.empty()) {
    return absl::NotFoundError("instance not found");
  }
  return absl::OkStatus();
}

}  // namespace gpuaas::authz
