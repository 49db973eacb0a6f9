// Memberships: a tenant admin manages its own tenant's members; platform admins any tenant's.
// Nobody grants a global role through a membership.
#include "libs/common/status_macros.h"
#include "libs/service/paging.h"
#include "libs/service/validate.h"
#include "services/auth/auth.h"
#include "services/auth/policy.h"
#include "services/auth/validate.h"

namespace gpuaas::auth {
namespace {

absl::Status MemberNotFound() { return absl::NotFoundError("membership not found"); }

}  // namespace

absl::Status Auth::RequireManagePeople(const Principal& p, const std::string& tenant_id) {
  GPUAAS_RETURN_IF_ERROR(authz::RequireTenant(p, tenant_id, "tenant"));
  return authz::RequirePower(p, authz::Power::kManagePeople, "managing members");
}

absl::Status Auth::AddMember(const Principal& p, const pb::AddMemberRequest& req,
                             pb::Membership& out) {
  GPUAAS_RETURN_IF_ERROR(service::ValidateSlug("tenant_id", req.tenant_id()));
  GPUAAS_RETURN_IF_ERROR(service::ValidateServerId("user_id", req.user_id()));
  GPUAAS_RETURN_IF_ERROR(ValidateTenantRole("role", req.role()));
  GPUAAS_RETURN_IF_ERROR(RequireManagePeople(p, req.tenant_id()));
  GPUAAS_RETURN_IF_ERROR(RequireGrantable(p, req.role()));
  return pool_.RunInTransaction("auth.add_member", [&](db::Tx& tx) -> absl::Status {
    if (!repo_.GetTenant(tx, req.tenant_id())) return absl::NotFoundError("tenant not found");
    if (!repo_.GetUser(tx, req.user_id())) return absl::NotFoundError("user not found");
    if (repo_.GetMember(tx, req.tenant_id(), req.user_id())) {
      return absl::AlreadyExistsError("user is already a member of this tenant");
    }
    pb::Membership m;
    m.set_tenant_id(req.tenant_id());
    m.set_user_id(req.user_id());
    m.set_role(req.role());
    repo_.InsertMember(tx, m);
    out = *repo_.GetMember(tx, req.tenant_id(), req.user_id());
    return absl::OkStatus();
  });
}

absl::Status Auth::UpdateMember(const Principal& p, const pb::UpdateMemberRequest& req,
                                pb::Membership& out) {
  GPUAAS_RETURN_IF_ERROR(service::ValidateSlug("tenant_id", req.tenant_id()));
  GPUAAS_RETURN_IF_ERROR(service::ValidateServerId("user_id", req.user_id()));
  GPUAAS_RETURN_IF_ERROR(ValidateTenantRole("role", req.role()));
  GPUAAS_RETURN_IF_ERROR(RequireManagePeople(p, req.tenant_id()));
  GPUAAS_RETURN_IF_ERROR(RequireGrantable(p, req.role()));
  return pool_.RunInTransaction("auth.update_member", [&](db::Tx& tx) -> absl::Status {
    std::optional<pb::Membership> m = repo_.GetMember(tx, req.tenant_id(), req.user_id());
    if (!m) return MemberNotFound();
    m->set_role(req.role());
    repo_.UpdateMember(tx, *m);
    if (repo_.CountTenantAdmins(tx, req.tenant_id()) == 0 && !p.Has(authz::Power::kPlatform)) {
      return absl::FailedPreconditionError("a tenant must keep at least one TENANT_ADMIN");
    }
    out = *repo_.GetMember(tx, req.tenant_id(), req.user_id());
    return absl::OkStatus();
  });
}

absl::Status Auth::RemoveMember(const Principal& p, const pb::RemoveMemberRequest& req) {
  GPUAAS_RETURN_IF_ERROR(service::ValidateSlug("tenant_id", req.tenant_id()));
  GPUAAS_RETURN_IF_ERROR(service::ValidateServerId("user_id", req.user_id()));
  GPUAAS_RETURN_IF_ERROR(RequireManagePeople(p, req.tenant_id()));
  return pool_.RunInTransaction("auth.remove_member", [&](db::Tx& tx) -> absl::Status {
    if (!repo_.DeleteMember(tx, req.tenant_id(), req.user_id())) return MemberNotFound();
    // Refresh and key exchange already re-check membership; revoking here keeps a later re-add
    // (a rehire, another role) from reviving what the departed member held.
    repo_.RevokeMemberCredentials(tx, req.tenant_id(), req.user_id());
    if (repo_.CountTenantAdmins(tx, req.tenant_id()) == 0 && !p.Has(authz::Power::kPlatform)) {
      return absl::FailedPreconditionError("a tenant must keep at least one TENANT_ADMIN");
    }
    return absl::OkStatus();
  });
}

absl::Status Auth::ListMembers(const Principal& p, const pb::ListMembersRequest& req,
                               pb::ListMembersResponse& out) {
  GPUAAS_RETURN_IF_ERROR(service::ValidateSlug("tenant_id", req.tenant_id()));
  GPUAAS_RETURN_IF_ERROR(authz::RequireTenant(p, req.tenant_id(), "tenant"));
  GPUAAS_RETURN_IF_ERROR(authz::RequirePower(p, authz::Power::kRead, "listing members"));
  GPUAAS_ASSIGN_OR_RETURN(service::PageRequest page,
                          service::ParsePage(req.page_size(), req.page_token()));
  return pool_.RunInTransaction("auth.list_members", [&](db::Tx& tx) -> absl::Status {
    if (!repo_.GetTenant(tx, req.tenant_id())) return absl::NotFoundError("tenant not found");
    service::FillPage(page, repo_.ListMembers(tx, req.tenant_id(), page), *out.mutable_members(),
                      *out.mutable_next_page_token(),
                      [](const pb::Membership& m) { return m.user_id(); });
    return absl::OkStatus();
  });
}

absl::Status Auth::ListAuthorizedKeys(const Principal& p, const pb::ListAuthorizedKeysRequest& req,
                                      pb::ListAuthorizedKeysResponse& out) {
  GPUAAS_RETURN_IF_ERROR(service::ValidateSlug("tenant_id", req.tenant_id()));
  GPUAAS_RETURN_IF_ERROR(authz::RequireTenant(p, req.tenant_id(), "tenant"));
  GPUAAS_RETURN_IF_ERROR(authz::RequirePower(p, authz::Power::kRead, "listing authorized keys"));
  return pool_.RunInTransaction("auth.list_authorized_keys", [&](db::Tx& tx) -> absl::Status {
    if (!repo_.GetTenant(tx, req.tenant_id())) return absl::NotFoundError("tenant not found");
    // Only who may open a session on an instance: a viewer's key would give it a shell.
    for (const MemberKeys& m : repo_.MembersWithKeys(tx, req.tenant_id())) {
      if (m.disabled || !authz::Holds(m.member.role(), authz::Power::kUse)) continue;
      for (const std::string& key : m.ssh_public_keys) {
        pb::AuthorizedKey* k = out.add_keys();
        k->set_user_id(m.member.user_id());
        k->set_user_name(m.member.user_name());
        k->set_public_key(key);
      }
    }
    return absl::OkStatus();
  });
}

}  // namespace gpuaas::auth
