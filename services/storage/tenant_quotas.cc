#include "services/storage/tenant_quotas.h"

#include "absl/strings/str_cat.h"

namespace gpuaas::storage {

absl::StatusOr<int64_t> TenantQuotas::MaxStorageBytes(
    const std::string& tenant_id, const client::CallerCredentials& caller) const {
  client::authpb::GetTenantRequest req;
  req.set_tenant_id(tenant_id);
  absl::StatusOr<client::authpb::Tenant> tenant =
      auth_.GetTenant(req, client::CallContext::OnBehalf(caller));
  if (absl::IsNotFound(tenant.status())) {
    return absl::NotFoundError(absl::StrCat("tenant ", tenant_id, " not found"));
  }
  if (!tenant.ok()) {
    return absl::Status(tenant.status().code(),
                        absl::StrCat("reading the storage quota of tenant ", tenant_id,
                                     " from the auth service: ", tenant.status().message()));
  }
  return tenant->quota().max_storage_bytes();
}

}  // namespace gpuaas::storage
