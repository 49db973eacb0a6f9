#include "services/instance/access.h"

#include <openssl/evp.h>

#include <optional>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "libs/authz/roles.h"
#include "libs/common/ids.h"
#include "libs/common/proto_time.h"
#include "libs/common/status_macros.h"
#include "libs/service/validate.h"
#include "services/instance/instance_rules.h"
#include "services/instance/repository_instances.h"

namespace gpuaas::instance {
namespace {

constexpr int kCodeBytes = 32;
constexpr int kMaxReported = 10000;
constexpr char kAccessPath[] = "/.gpuaas/access";

db::Bytes CodeHash(std::string_view code) {
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int size = 0;
  EVP_Digest(code.data(), code.size(), digest, &size, EVP_sha256(), nullptr);
  return db::Bytes{std::string(reinterpret_cast<const char*>(digest), size)};
}

bool IsHttp(const pb::Port& port) { return port.protocol() != pb::PROTOCOL_TCP; }

// The port a link opens: the one asked for, else the probe port when it speaks HTTP, else
// the first HTTP port.
absl::StatusOr<pb::Port> PickPort(const pb::Template& t, int32_t wanted) {
  const pb::Port* first = nullptr;
  for (const pb::Port& port : t.ports()) {
    if (!IsHttp(port)) continue;
    if (wanted != 0 ? port.port() == wanted : port.is_probe()) return port;
    if (first == nullptr) first = &port;
  }
  if (wanted != 0) {
    return absl::FailedPreconditionError(
        absl::StrCat("port: ", wanted, " is not an HTTP port of the instance"));
  }
  if (first == nullptr) return absl::FailedPreconditionError("the instance has no HTTP port");
  return *first;
}

}  // namespace

Access::Access(db::Pool& pool, client::AuthClient& auth, client::AccessTokens& own_tokens,
               AccessOptions options)
    : pool_(pool), auth_(auth), own_tokens_(own_tokens), options_(std::move(options)) {}

absl::Status Access::GetInstanceAccess(const authz::Principal& p,
                                       const pb::GetInstanceAccessRequest& req,
                                       pb::InstanceAccess& out) {
  GPUAAS_RETURN_IF_ERROR(service::ValidateRequired("instance_id", req.instance_id()));
  if (req.port() < 0 || req.port() > 65535) {
    return absl::InvalidArgumentError("port: must be 0 (the default port) or 1 to 65535");
  }
  GPUAAS_RETURN_IF_ERROR(authz::RequirePower(p, authz::Power::kUse, "opening instances"));
  const std::string code = RandomToken(kCodeBytes);
  absl::Time expire;
  GPUAAS_RETURN_IF_ERROR(pool_.RunInTransaction("instance.access", [&](db::Tx& tx) -> absl::Status {
    std::optional<InstanceRow> row = repo::GetInstance(tx, req.instance_id());
    if (!row || row->deleted) return absl::NotFoundError("instance not found");
    const pb::Instance& i = row->instance;
    GPUAAS_RETURN_IF_ERROR(authz::RequireTenant(p, i.tenant_id(), "instance"));
    if (i.state() != pb::STATE_READY && i.state() != pb::STATE_RUNNING) {
      return absl::FailedPreconditionError(absl::StrCat(
          "instance is ", pb::State_Name(i.state()).substr(6), ", not READY or RUNNING"));
    }
    GPUAAS_ASSIGN_OR_RETURN(pb::Port port, PickPort(i.template_(), req.port()));
    const std::string host = absl::StrCat(options_.scheme, "://", i.instance_id(), "-", port.port(),
                                          ".", options_.domain);
    constexpr std::string_view kPurge =
        "DELETE FROM instance.access_codes WHERE expire_time < now() - interval '1 hour'";
    constexpr std::string_view kInsert =
        "INSERT INTO instance.access_codes (code_hash, instance_id, tenant_id, port, user_id, "
        "expire_time) VALUES ($1, $2, $3, $4, $5, now() + $6 * interval '1 microsecond') "
        "RETURNING " GPUAAS_SQL_MICROS("expire_time");
    tx.Exec(kPurge);
    expire = tx.Exec(kInsert, CodeHash(code), i.instance_id(), i.tenant_id(), port.port(),
                     p.user_id, absl::ToInt64Microseconds(options_.code_ttl))
                 .First()
                 ->GetTime(0);
    out.set_port(port.port());
    out.set_access_url(absl::StrCat(host, port.base_url().empty() ? "/" : port.base_url()));
    out.set_url(absl::StrCat(host, kAccessPath, "?code=", code));
    return absl::OkStatus();
  }));
  *out.mutable_expire_time() = ToProtoTime(expire);
  return absl::OkStatus();
}

absl::Status Access::RedeemAccessCode(const authz::Principal& p,
                                      const pb::RedeemAccessCodeRequest& req,
                                      pb::AccessGrant& out) {
  GPUAAS_RETURN_IF_ERROR(service::ValidateRequired("code", req.code()));
  GPUAAS_RETURN_IF_ERROR(ValidateInstanceId("instance_id", req.instance_id()));
  if (req.port() < 1 || req.port() > 65535) {
    return absl::InvalidArgumentError("port: must be 1 to 65535");
  }
  GPUAAS_RETURN_IF_ERROR(
      authz::RequirePower(p, authz::Power::kAccessCalls, "redeeming access codes"));
  return pool_.RunInTransaction("instance.redeem", [&](db::Tx& tx) -> absl::Status {
    // A code sent to another host stays unused: whoever holds it may still use it rightly.
    constexpr std::string_view kRedeem =
        "DELETE FROM instance.access_codes WHERE code_hash = $1 AND instance_id = $2 "
        "AND port = $3 AND expire_time > now() RETURNING tenant_id, user_id";
    db::Result r = tx.Exec(kRedeem, CodeHash(req.code()), req.instance_id(), req.port());
    if (r.empty()) return absl::NotFoundError("access code not found");
    out.set_instance_id(req.instance_id());
    out.set_tenant_id(r.First()->Get<std::string>(0));
    out.set_user_id(r.First()->Get<std::string>(1));
    out.set_port(req.port());
    return absl::OkStatus();
  });
}

absl::Status Access::CheckAccessGrant(const authz::Principal& p,
                                      const client::CallerCredentials& caller,
                                      const pb::CheckAccessGrantRequest& check,
                                      pb::AccessGrant& out) {
  const pb::AccessGrant& req = check.grant();
  GPUAAS_RETURN_IF_ERROR(ValidateInstanceId("grant.instance_id", req.instance_id()));
  GPUAAS_RETURN_IF_ERROR(service::ValidateRequired("grant.tenant_id", req.tenant_id()));
  GPUAAS_RETURN_IF_ERROR(service::ValidateRequired("grant.user_id", req.user_id()));
  if (req.port() < 1 || req.port() > 65535) {
    return absl::InvalidArgumentError("grant.port: must be 1 to 65535");
  }
  GPUAAS_RETURN_IF_ERROR(
      authz::RequirePower(p, authz::Power::kAccessCalls, "checking access grants"));
  GPUAAS_RETURN_IF_ERROR(pool_.RunInTransaction("instance.check_grant", [&](db::Tx& tx) {
    std::optional<InstanceRow> row = repo::GetInstance(tx, req.instance_id());
    if (!row || row->deleted || row->instance.tenant_id() != req.tenant_id() ||
        !PickPort(row->instance.template_(), req.port()).ok()) {
      return absl::NotFoundError("the grant's instance port is gone");
    }
    return absl::OkStatus();
  }));
  GPUAAS_RETURN_IF_ERROR(CheckStillMember(caller.deadline, req.tenant_id(), req.user_id()));
  out = req;
  return absl::OkStatus();
}

absl::Status Access::CheckStillMember(absl::Time deadline, const std::string& tenant_id,
                                      const std::string& user_id) {
  const absl::Status gone = absl::PermissionDeniedError("the grant's user may no longer use it");
  // The proxy's key reads no user or membership; the service's own key reads them all.
  absl::StatusOr<std::string> token = own_tokens_.Get();
  if (!token.ok()) {
    return absl::UnavailableError("checking memberships: " + std::string(token.status().message()));
  }
  const auto call = [&] {
    return client::CallContext::FromDeadline(deadline).set_bearer_token(*token);
  };
  auth::v1::GetUserRequest get;
  get.set_user_id(user_id);
  absl::StatusOr<auth::v1::User> user = auth_.GetUser(get, call());
  if (!user.ok()) {
    return user.status().code() == absl::StatusCode::kNotFound ? gone : user.status();
  }
  if (user->disabled()) return gone;
  // A global role (a platform admin) may open any tenant's instance, as GetInstanceAccess let it.
  if (authz::IsGlobalRole(user->global_role())) {
    return authz::Holds(user->global_role(), authz::Power::kUse) ? absl::OkStatus() : gone;
  }
  auth::v1::ListMembersRequest list;
  list.set_tenant_id(tenant_id);
  list.set_page_size(500);
  std::optional<common::v1::Role> role;
  do {
    absl::StatusOr<auth::v1::ListMembersResponse> page = auth_.ListMembers(list, call());
    if (!page.ok()) {
      return page.status().code() == absl::StatusCode::kNotFound ? gone : page.status();
    }
    for (const auth::v1::Membership& m : page->members()) {
      if (m.user_id() == user_id) role = m.role();
    }
    list.set_page_token(page->next_page_token());
  } while (!role && !list.page_token().empty());
  return role && authz::Holds(*role, authz::Power::kUse) ? absl::OkStatus() : gone;
}

absl::Status Access::ReportAccess(const authz::Principal& p, const pb::ReportAccessRequest& req,
                                  pb::ReportAccessResponse&) {
  if (req.instance_ids_size() > kMaxReported) {
    return absl::InvalidArgumentError(
        absl::StrCat("instance_ids: at most ", kMaxReported, " per report"));
  }
  for (int i = 0; i < req.instance_ids_size(); ++i) {
    GPUAAS_RETURN_IF_ERROR(
        ValidateInstanceId(absl::StrCat("instance_ids[", i, "]"), req.instance_ids(i)));
  }
  GPUAAS_RETURN_IF_ERROR(
      authz::RequirePower(p, authz::Power::kAccessCalls, "reporting instance access"));
  if (req.instance_ids().empty()) return absl::OkStatus();
  return pool_.RunInTransaction("instance.report_access", [&](db::Tx& tx) -> absl::Status {
    // Only running instances have an idle window (last_active_time set); it changes no
    // revision, so watchers hear nothing of it. Instance ids never hold ','.
    constexpr std::string_view kTouch =
        "UPDATE instance.instances SET last_active_time = greatest(last_active_time, now()) "
        "WHERE instance_id = ANY(string_to_array($1, ',')) AND last_active_time IS NOT NULL";
    tx.Exec(kTouch, absl::StrJoin(req.instance_ids(), ","));
    return absl::OkStatus();
  });
}

absl::Status Access::GetProxyToken(const authz::Principal& p, const pb::GetProxyTokenRequest& req,
                                   pb::ProxyToken& out) {
  GPUAAS_RETURN_IF_ERROR(ValidateInstanceId("instance_id", req.instance_id()));
  GPUAAS_RETURN_IF_ERROR(
      authz::RequirePower(p, authz::Power::kAccessCalls, "reading proxy tokens"));
  return pool_.RunInTransaction("instance.proxy_token", [&](db::Tx& tx) -> absl::Status {
    constexpr std::string_view kToken =
        "SELECT proxy_token FROM instance.instances WHERE instance_id = $1 "
        "AND delete_time IS NULL";
    std::optional<db::Row> row = tx.Exec(kToken, req.instance_id()).First();
    if (!row) return absl::NotFoundError("instance not found");
    out.set_instance_id(req.instance_id());
    out.set_token(row->Get<std::string>(0));
    return absl::OkStatus();
  });
}

}  // namespace gpuaas::instance
