// Users: platform admins manage everyone; a tenant admin creates users into its tenant and
// sees its members; everyone sees and edits themselves.
#include "libs/common/ids.h"
#include "libs/common/status_macros.h"
#include "libs/service/paging.h"
#include "libs/service/update_mask.h"
#include "libs/service/validate.h"
#include "services/auth/auth.h"
#include "services/auth/credentials/password.h"
#include "services/auth/policy.h"
#include "services/auth/ssh_public_key.h"
#include "services/auth/validate.h"

namespace gpuaas::auth {
namespace {

constexpr std::string_view kCreateUser = "CreateUser";
constexpr std::string_view kAdminUserName = "admin";

absl::Status UserNotFound() { return absl::NotFoundError("user not found"); }

}  // namespace

absl::Status Auth::Bootstrap(const std::string& password) {
  GPUAAS_RETURN_IF_ERROR(ValidatePassword("bootstrap admin password", password));
  UserRecord admin;
  admin.user.set_user_id(NewId("usr_"));
  admin.user.set_user_name(std::string(kAdminUserName));
  admin.user.set_display_name("Platform administrator");
  admin.user.set_global_role(common::v1::ROLE_PLATFORM_ADMIN);
  admin.password_hash = HashPassword(password);
  return pool_.RunInTransaction("auth.bootstrap", [&](db::Tx& tx) {
    repo_.LockFirstStart(tx);
    if (repo_.HasUsers(tx)) return absl::OkStatus();
    repo_.InsertUser(tx, admin);
    return absl::OkStatus();
  });
}

absl::Status Auth::RequireSeeUser(db::Tx& tx, const Principal& p, const std::string& user_id) {
  if (p.IsGlobal() || p.user_id == user_id) return absl::OkStatus();
  if (p.Has(authz::Power::kManagePeople) && repo_.GetMember(tx, p.tenant_id, user_id)) {
    return absl::OkStatus();
  }
  return UserNotFound();
}

absl::StatusOr<std::string> Auth::InsertUser(db::Tx& tx, const UserRecord& rec,
                                             const pb::CreateUserRequest& req) {
  if (repo_.GetUserByName(tx, rec.user.user_name())) {
    return absl::AlreadyExistsError("user " + rec.user.user_name() + " already exists");
  }
  if (!req.tenant_id().empty() && !repo_.GetTenant(tx, req.tenant_id())) {
    return absl::NotFoundError("tenant not found");
  }
  repo_.InsertUser(tx, rec);
  if (!req.tenant_id().empty()) {
    pb::Membership m;
    m.set_tenant_id(req.tenant_id());
    m.set_user_id(rec.user.user_id());
    m.set_role(req.role());
    repo_.InsertMember(tx, m);
  }
  return rec.user.user_id();
}

absl::Status Auth::CreateUser(const Principal& p, const pb::CreateUserRequest& req, pb::User& out) {
  const pb::User& in = req.user();
  GPUAAS_RETURN_IF_ERROR(ValidateUserName("user.user_name", in.user_name()));
  GPUAAS_RETURN_IF_ERROR(service::ValidateDisplayText("user.display_name", in.display_name()));
  GPUAAS_RETURN_IF_ERROR(ValidatePassword("password", req.password()));
  GPUAAS_RETURN_IF_ERROR(ValidateGlobalRole("user.global_role", in.global_role()));
  GPUAAS_RETURN_IF_ERROR(service::ValidateRequestId("request_id", req.request_id()));
  GPUAAS_ASSIGN_OR_RETURN(std::vector<std::string> ssh_keys,
                          CanonicalSshPublicKeys("user.ssh_public_keys", in.ssh_public_keys()));
  if (!req.tenant_id().empty()) {
    GPUAAS_RETURN_IF_ERROR(service::ValidateSlug("tenant_id", req.tenant_id()));
    GPUAAS_RETURN_IF_ERROR(ValidateTenantRole("role", req.role()));
  }
  if (in.global_role() != common::v1::ROLE_UNSPECIFIED &&
      !authz::MayGrant(p.role, in.global_role())) {
    return absl::PermissionDeniedError("only PLATFORM_ADMIN can grant a global role");
  }
  if (!p.Has(authz::Power::kPlatform)) {
    if (req.tenant_id().empty()) {
      return absl::PermissionDeniedError(
          "creating a user outside a tenant needs PLATFORM_ADMIN; set tenant_id and role");
    }
    GPUAAS_RETURN_IF_ERROR(RequireManagePeople(p, req.tenant_id()));
    GPUAAS_RETURN_IF_ERROR(RequireGrantable(p, req.role()));
  }

  UserRecord rec;
  rec.user = in;
  rec.user.set_user_id(NewId("usr_"));
  rec.user.clear_create_time();
  rec.user.clear_update_time();
  rec.user.mutable_ssh_public_keys()->Assign(ssh_keys.begin(), ssh_keys.end());
  rec.password_hash = HashPassword(req.password());  // scrypt: outside the transaction

  // The fingerprint must not hold the password (see RequestLog::Create).
  pb::CreateUserRequest fingerprinted = req;
  fingerprinted.clear_password();
  return pool_.RunInTransaction(
      "auth.create_user",
      [&](db::Tx& tx) -> absl::Status {
        GPUAAS_ASSIGN_OR_RETURN(
            service::CreateOutcome created,
            requests_.Create(tx, {kCreateUser, p.user_id, req.request_id()}, fingerprinted,
                             [&](db::Tx& tx) { return InsertUser(tx, rec, req); }));
        std::optional<UserRecord> stored = repo_.GetUser(tx, created.id);
        if (!stored) return UserNotFound();  // created, then deleted since
        out = stored->user;
        return absl::OkStatus();
      },
      /*serializable=*/true);
}

absl::Status Auth::GetUser(const Principal& p, const pb::GetUserRequest& req, pb::User& out) {
  GPUAAS_RETURN_IF_ERROR(service::ValidateServerId("user_id", req.user_id()));
  return pool_.RunInTransaction("auth.get_user", [&](db::Tx& tx) -> absl::Status {
    GPUAAS_RETURN_IF_ERROR(RequireSeeUser(tx, p, req.user_id()));
    std::optional<UserRecord> u = repo_.GetUser(tx, req.user_id());
    if (!u) return UserNotFound();
    out = u->user;
    return absl::OkStatus();
  });
}

absl::Status Auth::ListUsers(const Principal& p, const pb::ListUsersRequest& req,
                             pb::ListUsersResponse& out) {
  std::optional<std::string> tenant;
  if (!p.IsGlobal()) {
    GPUAAS_RETURN_IF_ERROR(
        authz::RequirePower(p, authz::Power::kManagePeople, "listing a tenant's users"));
    tenant = p.tenant_id;
  }
  GPUAAS_ASSIGN_OR_RETURN(service::PageRequest page,
                          service::ParsePage(req.page_size(), req.page_token()));
  return pool_.RunInTransaction("auth.list_users", [&](db::Tx& tx) -> absl::Status {
    service::FillPage(page, repo_.ListUsers(tx, tenant, page), *out.mutable_users(),
                      *out.mutable_next_page_token(),
                      [](const pb::User& u) { return u.user_id(); });
    return absl::OkStatus();
  });
}

absl::Status Auth::UpdateUser(const Principal& p, const pb::UpdateUserRequest& req, pb::User& out) {
  const pb::User& in = req.user();
  GPUAAS_RETURN_IF_ERROR(service::ValidateServerId("user.user_id", in.user_id()));
  GPUAAS_ASSIGN_OR_RETURN(
      service::UpdateMask mask,
      service::UpdateMask::Parse(req.update_mask(), {"display_name", "disabled", "password",
                                                     "global_role", "ssh_public_keys"}));
  // An empty mask changes the password only when one is given.
  const bool password =
      mask.Touches("password") && (req.update_mask().paths_size() > 0 || !req.password().empty());
  if (mask.Touches("display_name")) {
    GPUAAS_RETURN_IF_ERROR(service::ValidateDisplayText("user.display_name", in.display_name()));
  }
  if (password) GPUAAS_RETURN_IF_ERROR(ValidatePassword("password", req.password()));
  if (mask.Touches("global_role")) {
    GPUAAS_RETURN_IF_ERROR(ValidateGlobalRole("user.global_role", in.global_role()));
  }
  std::vector<std::string> ssh_keys;
  if (mask.Touches("ssh_public_keys")) {
    GPUAAS_ASSIGN_OR_RETURN(ssh_keys,
                            CanonicalSshPublicKeys("user.ssh_public_keys", in.ssh_public_keys()));
  }
  const bool self = HasSelfRights(p, in.user_id());
  const std::string new_hash = password ? HashPassword(req.password()) : std::string();

  return pool_.RunInTransaction("auth.update_user", [&](db::Tx& tx) -> absl::Status {
    GPUAAS_RETURN_IF_ERROR(RequireSeeUser(tx, p, in.user_id()));
    std::optional<UserRecord> u = repo_.GetUser(tx, in.user_id());
    if (!u) return UserNotFound();
    const bool changes_disabled = mask.Touches("disabled") && u->user.disabled() != in.disabled();
    const bool changes_role =
        mask.Touches("global_role") && u->user.global_role() != in.global_role();
    if (!p.Has(authz::Power::kPlatform) && (changes_disabled || changes_role || !self)) {
      return absl::PermissionDeniedError(
          "only PLATFORM_ADMIN may change other users, disable users or set global roles");
    }
    mask.Apply(in, u->user);
    if (mask.Touches("ssh_public_keys")) {
      u->user.mutable_ssh_public_keys()->Assign(ssh_keys.begin(), ssh_keys.end());
    }
    if (password) u->password_hash = new_hash;
    repo_.UpdateUser(tx, *u);
    // A disabled user or a new password ends every session.
    if (u->user.disabled() || password) repo_.RevokeUserTokens(tx, in.user_id());
    if (repo_.CountPlatformAdmins(tx) == 0) {
      return absl::FailedPreconditionError("the last platform admin cannot be disabled or demoted");
    }
    out = repo_.GetUser(tx, in.user_id())->user;
    return absl::OkStatus();
  });
}

absl::Status Auth::DeleteUser(const Principal& p, const pb::DeleteUserRequest& req) {
  GPUAAS_RETURN_IF_ERROR(service::ValidateServerId("user_id", req.user_id()));
  return pool_.RunInTransaction("auth.delete_user", [&](db::Tx& tx) -> absl::Status {
    GPUAAS_RETURN_IF_ERROR(RequireSeeUser(tx, p, req.user_id()));
    GPUAAS_RETURN_IF_ERROR(authz::RequirePlatformAdmin(p));
    if (!repo_.DeleteUser(tx, req.user_id())) return UserNotFound();
    if (repo_.CountPlatformAdmins(tx) == 0) {
      return absl::FailedPreconditionError("the last platform admin cannot be deleted");
    }
    return absl::OkStatus();
  });
}

}  // namespace gpuaas::auth
