// Tenants: platform admins manage them; members may read their own.
#include "absl/strings/str_cat.h"
#include "libs/common/status_macros.h"
#include "services/auth/auth.h"
#include "services/auth/validate.h"

namespace gpuaas::auth {
namespace {

constexpr std::string_view kCreateTenant = "CreateTenant";

absl::Status TenantNotFound() { return absl::NotFoundError("tenant not found"); }

}  // namespace

Auth::Auth(db::Pool& pool, Repository& repo, KeyStore& keys, LoginThrottle& throttle,
           const Clock& clock, AuthOptions options)
    : pool_(pool), repo_(repo), keys_(keys), throttle_(throttle), clock_(clock), options_(options) {}

absl::Status Auth::CreateTenant(const Principal& p, const pb::CreateTenantRequest& req,
                                pb::Tenant& out) {
  GPUAAS_RETURN_IF_ERROR(authz::RequirePlatformAdmin(p));
  const pb::Tenant& t = req.tenant();
  GPUAAS_RETURN_IF_ERROR(ValidateTenantId("tenant.tenant_id", t.tenant_id()));
  GPUAAS_RETURN_IF_ERROR(ValidateDisplayName("tenant.display_name", t.display_name()));
  GPUAAS_RETURN_IF_ERROR(ValidateQuota("tenant.quota", t.quota()));
  GPUAAS_RETURN_IF_ERROR(ValidateRequestId("request_id", req.request_id()));

  // Serializable so that two retries racing on one request id cannot both insert.
  return pool_.RunInTransaction(
      "auth.create_tenant",
      [&](db::Tx& tx) -> absl::Status {
        std::string first;
        if (!req.request_id().empty()) {
          if (auto prior = repo_.FindRequest(tx, std::string(kCreateTenant), p.user_id,
                                             req.request_id())) {
            first = *prior;
          }
        }
        if (!first.empty()) {
          std::optional<pb::Tenant> existing = repo_.GetTenant(tx, first);
          if (!existing) return TenantNotFound();  // created, then deleted since
          out = *existing;
          return absl::OkStatus();
        }
        if (repo_.GetTenant(tx, t.tenant_id())) {
          return absl::AlreadyExistsError(absl::StrCat("tenant ", t.tenant_id(), " already exists"));
        }
        repo_.InsertTenant(tx, t);
        if (!req.request_id().empty()) {
          repo_.RecordRequest(tx, std::string(kCreateTenant), p.user_id, req.request_id(),
                              t.tenant_id());
        }
        out = *repo_.GetTenant(tx, t.tenant_id());
        return absl::OkStatus();
      },
      /*serializable=*/true);
}

absl::Status Auth::GetTenant(const Principal& p, const pb::GetTenantRequest& req, pb::Tenant& out) {
  GPUAAS_RETURN_IF_ERROR(ValidateTenantId("tenant_id", req.tenant_id()));
  GPUAAS_RETURN_IF_ERROR(authz::RequireRole(p, common::v1::ROLE_VIEWER));
  GPUAAS_RETURN_IF_ERROR(authz::RequireTenant(p, req.tenant_id(), "tenant"));
  return pool_.RunInTransaction("auth.get_tenant", [&](db::Tx& tx) -> absl::Status {
    std::optional<pb::Tenant> t = repo_.GetTenant(tx, req.tenant_id());
    if (!t) return TenantNotFound();
    out = *t;
    return absl::OkStatus();
  });
}

absl::Status Auth::ListTenants(const Principal& p, const pb::ListTenantsRequest& req,
                               pb::ListTenantsResponse& out) {
  if (!p.IsGlobal()) {
    return absl::PermissionDeniedError("listing tenants needs PLATFORM_ADMIN; use WhoAmI");
  }
  GPUAAS_ASSIGN_OR_RETURN(PageQuery page, ParsePage(req.page_size(), req.page_token()));
  return pool_.RunInTransaction("auth.list_tenants", [&](db::Tx& tx) -> absl::Status {
    out.Clear();
    for (pb::Tenant& t : repo_.ListTenants(tx, page)) *out.add_tenants() = std::move(t);
    if (out.tenants_size() > 0) {
      out.set_next_page_token(NextPageToken(page, static_cast<size_t>(out.tenants_size()),
                                            out.tenants().rbegin()->tenant_id()));
    }
    return absl::OkStatus();
  });
}

absl::Status Auth::UpdateTenant(const Principal& p, const pb::UpdateTenantRequest& req,
                                pb::Tenant& out) {
  const pb::Tenant& in = req.tenant();
  GPUAAS_RETURN_IF_ERROR(ValidateTenantId("tenant.tenant_id", in.tenant_id()));
  GPUAAS_RETURN_IF_ERROR(authz::RequireRole(p, common::v1::ROLE_VIEWER));
  GPUAAS_RETURN_IF_ERROR(authz::RequireTenant(p, in.tenant_id(), "tenant"));
  // An empty mask means every updatable field.
  bool all = req.update_mask().paths_size() == 0;
  bool name = all;
  bool max_gpus = all, max_instances = all, max_storage = all;
  for (const std::string& path : req.update_mask().paths()) {
    if (path == "display_name") {
      name = true;
    } else if (path == "quota") {
      max_gpus = max_instances = max_storage = true;
    } else if (path == "quota.max_gpus") {
      max_gpus = true;
    } else if (path == "quota.max_instances") {
      max_instances = true;
    } else if (path == "quota.max_storage_bytes") {
      max_storage = true;
    } else {
      return absl::InvalidArgumentError(absl::StrCat(
          "update_mask: unknown field '", path, "'; allowed: display_name, quota, quota.<limit>"));
    }
  }
  const bool quota = max_gpus || max_instances || max_storage;
  if (name) GPUAAS_RETURN_IF_ERROR(ValidateDisplayName("tenant.display_name", in.display_name()));
  if (quota) GPUAAS_RETURN_IF_ERROR(ValidateQuota("tenant.quota", in.quota()));
  // Tenant admins may rename their tenant; only platform admins set quotas.
  if (quota) {
    GPUAAS_RETURN_IF_ERROR(authz::RequirePlatformAdmin(p));
  } else {
    GPUAAS_RETURN_IF_ERROR(authz::RequireRole(p, common::v1::ROLE_TENANT_ADMIN));
  }
  return pool_.RunInTransaction("auth.update_tenant", [&](db::Tx& tx) -> absl::Status {
    std::optional<pb::Tenant> t = repo_.GetTenant(tx, in.tenant_id());
    if (!t) return TenantNotFound();
    if (name) t->set_display_name(in.display_name());
    if (max_gpus) t->mutable_quota()->set_max_gpus(in.quota().max_gpus());
    if (max_instances) t->mutable_quota()->set_max_instances(in.quota().max_instances());
    if (max_storage) t->mutable_quota()->set_max_storage_bytes(in.quota().max_storage_bytes());
    repo_.UpdateTenant(tx, *t);
    out = *repo_.GetTenant(tx, in.tenant_id());
    return absl::OkStatus();
  });
}

absl::Status Auth::DeleteTenant(const Principal& p, const pb::DeleteTenantRequest& req) {
  GPUAAS_RETURN_IF_ERROR(ValidateTenantId("tenant_id", req.tenant_id()));
  GPUAAS_RETURN_IF_ERROR(authz::RequireTenant(p, req.tenant_id(), "tenant"));
  GPUAAS_RETURN_IF_ERROR(authz::RequirePlatformAdmin(p));
  return pool_.RunInTransaction("auth.delete_tenant", [&](db::Tx& tx) -> absl::Status {
    if (!repo_.DeleteTenant(tx, req.tenant_id())) return TenantNotFound();
    return absl::OkStatus();
  });
}

}  // namespace gpuaas::auth
