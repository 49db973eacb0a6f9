// Users: platform admins manage everyone; a tenant admin creates users into its tenant and
// sees its members; everyone sees and edits themselves.
#include "absl/strings/str_cat.h"
#include "libs/common/ids.h"
#include "libs/common/status_macros.h"
#include "services/auth/auth.h"
#include "services/auth/credentials/password.h"
#include "services/auth/validate.h"

namespace gpuaas::auth {
namespace {

constexpr std::string_view kCreateUser = "CreateUser";
constexpr std::string_view kAdminUserName = "admin";

absl::Status UserNotFound() { return absl::NotFoundError("user not found"); }

absl::Status ValidateGlobalRole(std::string_view field, common::v1::Role role) {
  if (role == common::v1::ROLE_UNSPECIFIED || role == common::v1::ROLE_PLATFORM_ADMIN ||
      role == common::v1::ROLE_SERVICE) {
    return absl::OkStatus();
  }
  return absl::InvalidArgumentError(
      std::string(field) + ": must be PLATFORM_ADMIN, SERVICE or unspecified");
}

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
    tx.Exec("SELECT pg_advisory_xact_lock(hashtext('auth.bootstrap'))");
    if (!tx.Exec("SELECT 1 FROM auth.users LIMIT 1").empty()) return absl::OkStatus();
    repo_.InsertUser(tx, admin);
    return absl::OkStatus();
  });
}

absl::Status Auth::RequireSeeUser(db::Tx& tx, const Principal& p, const std::string& user_id) {
  if (p.IsGlobal() || p.user_id == user_id) return absl::OkStatus();
  if (p.role == common::v1::ROLE_TENANT_ADMIN && repo_.GetMember(tx, p.tenant_id, user_id)) {
    return absl::OkStatus();
  }
  return UserNotFound();
}

absl::Status Auth::CreateUser(const Principal& p, const pb::CreateUserRequest& req, pb::User& out) {
  const pb::User& in = req.user();
  GPUAAS_RETURN_IF_ERROR(ValidateUserName("user.user_name", in.user_name()));
  GPUAAS_RETURN_IF_ERROR(ValidateDisplayName("user.display_name", in.display_name()));
  GPUAAS_RETURN_IF_ERROR(ValidatePassword("password", req.password()));
  GPUAAS_RETURN_IF_ERROR(ValidateGlobalRole("user.global_role", in.global_role()));
  GPUAAS_RETURN_IF_ERROR(ValidateRequestId("request_id", req.request_id()));
  if (!req.tenant_id().empty()) {
    GPUAAS_RETURN_IF_ERROR(ValidateTenantId("tenant_id", req.tenant_id()));
    GPUAAS_RETURN_IF_ERROR(ValidateTenantRole("role", req.role()));
  }
  if (p.IsPlatformAdmin()) {
    // may do anything below
  } else if (in.global_role() != common::v1::ROLE_UNSPECIFIED) {
    return absl::PermissionDeniedError("only PLATFORM_ADMIN can grant a global role");
  } else if (req.tenant_id().empty()) {
    return absl::PermissionDeniedError(
        "creating a user outside a tenant needs PLATFORM_ADMIN; set tenant_id and role");
  } else {
    GPUAAS_RETURN_IF_ERROR(RequireTenantAdmin(p, req.tenant_id()));
  }

  UserRecord rec;
  rec.user = in;
  rec.user.set_user_id(NewId("usr_"));
  rec.user.clear_create_time();
  rec.user.clear_update_time();
  rec.password_hash = HashPassword(req.password());  // scrypt: outside the transaction

  return pool_.RunInTransaction(
      "auth.create_user",
      [&](db::Tx& tx) -> absl::Status {
        if (!req.request_id().empty()) {
          if (auto prior =
                  repo_.FindRequest(tx, std::string(kCreateUser), p.user_id, req.request_id())) {
            std::optional<UserRecord> existing = repo_.GetUser(tx, *prior);
            if (!existing) return UserNotFound();
            out = existing->user;
            return absl::OkStatus();
          }
        }
        if (repo_.GetUserByName(tx, in.user_name())) {
          return absl::AlreadyExistsError(absl::StrCat("user ", in.user_name(), " already exists"));
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
        if (!req.request_id().empty()) {
          repo_.RecordRequest(tx, std::string(kCreateUser), p.user_id, req.request_id(),
                              rec.user.user_id());
        }
        out = repo_.GetUser(tx, rec.user.user_id())->user;
        return absl::OkStatus();
      },
      /*serializable=*/true);
}

absl::Status Auth::GetUser(const Principal& p, const pb::GetUserRequest& req, pb::User& out) {
  GPUAAS_RETURN_IF_ERROR(ValidateId("user_id", req.user_id()));
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
    GPUAAS_RETURN_IF_ERROR(authz::RequireRole(p, common::v1::ROLE_TENANT_ADMIN));
    tenant = p.tenant_id;
  }
  GPUAAS_ASSIGN_OR_RETURN(PageQuery page, ParsePage(req.page_size(), req.page_token()));
  return pool_.RunInTransaction("auth.list_users", [&](db::Tx& tx) -> absl::Status {
    out.Clear();
    for (pb::User& u : repo_.ListUsers(tx, tenant, page)) *out.add_users() = std::move(u);
    if (out.users_size() > 0) {
      out.set_next_page_token(NextPageToken(page, static_cast<size_t>(out.users_size()),
                                            out.users().rbegin()->user_id()));
    }
    return absl::OkStatus();
  });
}

absl::Status Auth::UpdateUser(const Principal& p, const pb::UpdateUserRequest& req, pb::User& out) {
  const pb::User& in = req.user();
  GPUAAS_RETURN_IF_ERROR(ValidateId("user.user_id", in.user_id()));
  bool all = req.update_mask().paths_size() == 0;
  bool name = all, disabled = all, role = all;
  bool password = all ? !req.password().empty() : false;
  for (const std::string& path : req.update_mask().paths()) {
    if (path == "display_name") {
      name = true;
    } else if (path == "disabled") {
      disabled = true;
    } else if (path == "password") {
      password = true;
    } else if (path == "global_role") {
      role = true;
    } else {
      return absl::InvalidArgumentError(
          absl::StrCat("update_mask: unknown field '", path,
                       "'; allowed: display_name, disabled, password, global_role"));
    }
  }
  if (name) GPUAAS_RETURN_IF_ERROR(ValidateDisplayName("user.display_name", in.display_name()));
  if (password) GPUAAS_RETURN_IF_ERROR(ValidatePassword("password", req.password()));
  if (role) GPUAAS_RETURN_IF_ERROR(ValidateGlobalRole("user.global_role", in.global_role()));
  const bool self = p.user_id == in.user_id();
  const std::string new_hash = password ? HashPassword(req.password()) : std::string();

  return pool_.RunInTransaction("auth.update_user", [&](db::Tx& tx) -> absl::Status {
    GPUAAS_RETURN_IF_ERROR(RequireSeeUser(tx, p, in.user_id()));
    std::optional<UserRecord> u = repo_.GetUser(tx, in.user_id());
    if (!u) return UserNotFound();
    const bool changes_disabled = disabled && u->user.disabled() != in.disabled();
    const bool changes_role = role && u->user.global_role() != in.global_role();
    if (!p.IsPlatformAdmin() && (changes_disabled || changes_role || !self)) {
      return absl::PermissionDeniedError(
          "only PLATFORM_ADMIN may change other users, disable users or set global roles");
    }
    if (name) u->user.set_display_name(in.display_name());
    if (disabled) u->user.set_disabled(in.disabled());
    if (role) u->user.set_global_role(in.global_role());
    if (password) u->password_hash = new_hash;
    repo_.UpdateUser(tx, *u);
    // A disabled user or a new password ends every session.
    if ((disabled && in.disabled()) || password) repo_.RevokeUserTokens(tx, in.user_id());
    if (repo_.CountPlatformAdmins(tx) == 0) {
      return absl::FailedPreconditionError("the last platform admin cannot be disabled or demoted");
    }
    out = repo_.GetUser(tx, in.user_id())->user;
    return absl::OkStatus();
  });
}

absl::Status Auth::DeleteUser(const Principal& p, const pb::DeleteUserRequest& req) {
  GPUAAS_RETURN_IF_ERROR(ValidateId("user_id", req.user_id()));
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
