// Tenants: platform admins manage them; members may read their own.
#include "libs/common/status_macros.h"
#include "libs/service/paging.h"
#include "libs/service/update_mask.h"
#include "libs/service/validate.h"
#include "services/auth/auth.h"
#include "services/auth/validate.h"

namespace gpuaas::auth {
namespace {

constexpr std::string_view kCreateTenant = "CreateTenant";

absl::Status TenantNotFound() { return absl::NotFoundError("tenant not found"); }

}  // namespace

Auth::Auth(db::Pool& pool, Repository& repo, KeyStore& keys, LoginGuard& guard, const Clock& clock,
           AuthOptions options)
    : pool_(pool), repo_(repo), keys_(keys), guard_(guard), clock_(clock), options_(options) {}

absl::Status Auth::CreateTenant(const Principal& p, const pb::CreateTenantRequest& req,
                                pb::Tenant& out) {
  GPUAAS_RETURN_IF_ERROR(authz::RequirePlatformAdmin(p));
  const pb::Tenant& t = req.tenant();
  GPUAAS_RETURN_IF_ERROR(service::ValidateSlug("tenant.tenant_id", t.tenant_id()));
  GPUAAS_RETURN_IF_ERROR(service::ValidateDisplayText("tenant.display_name", t.display_name()));
  GPUAAS_RETURN_IF_ERROR(ValidateQuota("tenant.quota", t.quota()));
  GPUAAS_RETURN_IF_ERROR(service::ValidateRequestId("request_id", req.request_id()));
  return pool_.RunInTransaction(
      "auth.create_tenant",
      [&](db::Tx& tx) -> absl::Status {
        GPUAAS_ASSIGN_OR_RETURN(
            service::CreateOutcome created,
            requests_.Create(tx, {kCreateTenant, p.user_id, req.request_id()}, req,
                             [&](db::Tx& tx) -> absl::StatusOr<std::string> {
                               // A deleted tenant's id stays taken (0004_deleted_tenants.sql).
                               if (repo_.TenantIdWasUsed(tx, t.tenant_id())) {
                                 return absl::AlreadyExistsError(
                                     "tenant " + t.tenant_id() +
                                     " already exists or existed; tenant ids are never reused");
                               }
                               repo_.InsertTenant(tx, t);
                               return t.tenant_id();
                             }));
        std::optional<pb::Tenant> stored = repo_.GetTenant(tx, created.id);
        if (!stored) return TenantNotFound();  // created, then deleted since
        out = *std::move(stored);
        return absl::OkStatus();
      },
      /*serializable=*/true);
}

absl::Status Auth::GetTenant(const Principal& p, const pb::GetTenantRequest& req, pb::Tenant& out) {
  GPUAAS_RETURN_IF_ERROR(service::ValidateSlug("tenant_id", req.tenant_id()));
  GPUAAS_RETURN_IF_ERROR(authz::RequireTenant(p, req.tenant_id(), "tenant"));
  GPUAAS_RETURN_IF_ERROR(authz::RequirePower(p, authz::Power::kRead, "reading a tenant"));
  return pool_.RunInTransaction("auth.get_tenant", [&](db::Tx& tx) -> absl::Status {
    std::optional<pb::Tenant> t = repo_.GetTenant(tx, req.tenant_id());
    if (!t) return TenantNotFound();
    out = *std::move(t);
    return absl::OkStatus();
  });
}

absl::Status Auth::ListTenants(const Principal& p, const pb::ListTenantsRequest& req,
                               pb::ListTenantsResponse& out) {
  GPUAAS_RETURN_IF_ERROR(
      authz::RequirePower(p, authz::Power::kAnyTenant, "listing tenants (others use WhoAmI)"));
  GPUAAS_ASSIGN_OR_RETURN(service::PageRequest page,
                          service::ParsePage(req.page_size(), req.page_token()));
  return pool_.RunInTransaction("auth.list_tenants", [&](db::Tx& tx) -> absl::Status {
    service::FillPage(page, repo_.ListTenants(tx, page), *out.mutable_tenants(),
                      *out.mutable_next_page_token(),
                      [](const pb::Tenant& t) { return t.tenant_id(); });
    return absl::OkStatus();
  });
}

absl::Status Auth::UpdateTenant(const Principal& p, const pb::UpdateTenantRequest& req,
                                pb::Tenant& out) {
  const pb::Tenant& in = req.tenant();
  GPUAAS_RETURN_IF_ERROR(service::ValidateSlug("tenant.tenant_id", in.tenant_id()));
  GPUAAS_RETURN_IF_ERROR(authz::RequireTenant(p, in.tenant_id(), "tenant"));
  GPUAAS_ASSIGN_OR_RETURN(service::UpdateMask mask,
                          service::UpdateMask::Parse(req.update_mask(), {"display_name", "quota"}));
  if (mask.Touches("display_name")) {
    GPUAAS_RETURN_IF_ERROR(service::ValidateDisplayText("tenant.display_name", in.display_name()));
  }
  // Tenant admins may rename their tenant; only platform admins set quotas.
  if (mask.Touches("quota")) {
    GPUAAS_RETURN_IF_ERROR(ValidateQuota("tenant.quota", in.quota()));
    GPUAAS_RETURN_IF_ERROR(authz::RequirePower(p, authz::Power::kPlatform, "setting a quota"));
  } else {
    GPUAAS_RETURN_IF_ERROR(
        authz::RequirePower(p, authz::Power::kManagePeople, "renaming a tenant"));
  }
  return pool_.RunInTransaction("auth.update_tenant", [&](db::Tx& tx) -> absl::Status {
    std::optional<pb::Tenant> t = repo_.GetTenant(tx, in.tenant_id());
    if (!t) return TenantNotFound();
    mask.Apply(in, *t);
    repo_.UpdateTenant(tx, *t);
    out = *repo_.GetTenant(tx, in.tenant_id());
    return absl::OkStatus();
  });
}

absl::Status Auth::DeleteTenant(const Principal& p, const pb::DeleteTenantRequest& req) {
  GPUAAS_RETURN_IF_ERROR(service::ValidateSlug("tenant_id", req.tenant_id()));
  GPUAAS_RETURN_IF_ERROR(authz::RequireTenant(p, req.tenant_id(), "tenant"));
  GPUAAS_RETURN_IF_ERROR(authz::RequirePlatformAdmin(p));
  return pool_.RunInTransaction("auth.delete_tenant", [&](db::Tx& tx) -> absl::Status {
    if (!repo_.DeleteTenant(tx, req.tenant_id())) return TenantNotFound();
    return absl::OkStatus();
  });
}

}  // namespace gpuaas::auth
