// Login, refresh-token rotation, logout, WhoAmI and the signing keys.
#include "absl/strings/str_cat.h"
#include "libs/common/base64url.h"
#include "libs/common/ids.h"
#include "libs/common/status_macros.h"
#include "libs/service/validate.h"
#include "services/auth/auth.h"
#include "services/auth/credentials/password.h"
#include "services/auth/credentials/secret_hash.h"
#include "services/auth/validate.h"

namespace gpuaas::auth {
namespace {

constexpr int kRefreshSecretBytes = 32;

absl::Status BadCredentials() {
  return absl::UnauthenticatedError("invalid user name or password");
}

absl::Status BadRefreshToken() {
  return absl::UnauthenticatedError("invalid or expired refresh token");
}

// Hashing a password for an unknown user too keeps the answer's timing from telling which
// user names exist.
const std::string& DummyHash() {
  static const std::string* hash = new std::string(HashPassword("not-a-real-password"));
  return *hash;
}

}  // namespace

absl::StatusOr<Auth::Grant> Auth::ResolveGrant(db::Tx& tx, const UserRecord& user,
                                               const std::string& requested_tenant) {
  const common::v1::Role global = user.user.global_role();
  std::vector<pb::Membership> memberships = repo_.MembershipsOf(tx, user.user.user_id());
  if (!requested_tenant.empty()) {
    for (const pb::Membership& m : memberships) {
      if (m.tenant_id() == requested_tenant) {
        return Grant{requested_tenant, global != common::v1::ROLE_UNSPECIFIED ? global : m.role()};
      }
    }
    if (global != common::v1::ROLE_UNSPECIFIED && repo_.GetTenant(tx, requested_tenant)) {
      return Grant{requested_tenant, global};
    }
    return absl::NotFoundError("tenant not found");
  }
  if (global != common::v1::ROLE_UNSPECIFIED) {
    return Grant{memberships.empty() ? "" : memberships[0].tenant_id(), global};
  }
  if (memberships.empty()) {
    return absl::FailedPreconditionError("user belongs to no tenant; ask a tenant admin");
  }
  return Grant{memberships[0].tenant_id(), memberships[0].role()};
}

absl::StatusOr<IssuedToken> Auth::IssueAccessToken(const std::string& user_id, const Grant& grant,
                                                   const std::string& api_key_id) {
  authz::Claims claims;
  claims.iss = options_.issuer;
  claims.sub = user_id;
  claims.tenant = grant.tenant_id;
  claims.role = grant.role;
  claims.iat = clock_.Now();
  claims.exp = claims.iat + options_.access_token_ttl;
  claims.jti = NewId("jti_");
  claims.api_key_id = api_key_id;
  claims.node = grant.node_id;
  GPUAAS_ASSIGN_OR_RETURN(std::string token, keys_.Sign(claims));
  return IssuedToken{std::move(token), claims.exp, grant.tenant_id, grant.role};
}

std::string Auth::IssueRefreshToken(db::Tx& tx, const std::string& user_id, const Grant& grant,
                                    const std::string& chain_id) {
  RefreshTokenRecord r;
  r.token_id = NewId("grt_");
  r.chain_id = chain_id;
  r.user_id = user_id;
  r.tenant_id = grant.tenant_id;
  std::string secret = RandomToken(kRefreshSecretBytes);
  r.secret_hash = HashSecret(secret);
  r.expire_time = clock_.Now() + options_.refresh_token_ttl;
  repo_.InsertRefreshToken(tx, r);
  return absl::StrCat(r.token_id, ".", secret);
}

absl::Status Auth::Login(const pb::LoginRequest& req, const std::string& client,
                         pb::LoginResponse& out) {
  GPUAAS_RETURN_IF_ERROR(ValidateUserName("user_name", req.user_name()));
  GPUAAS_RETURN_IF_ERROR(service::ValidateRequired("password", req.password()));
  if (req.password().size() > 1024) {
    return service::InvalidField("password", "must be at most 1024 bytes");
  }
  if (!req.tenant_id().empty()) {
    GPUAAS_RETURN_IF_ERROR(service::ValidateSlug("tenant_id", req.tenant_id()));
  }
  // Failures count for unknown user names too, so a refusal says nothing about who exists.
  const LoginAttempt attempt{
      .kind = LoginAttempt::Kind::kPassword, .account = req.user_name(), .client = client};
  GPUAAS_RETURN_IF_ERROR(guard_.Check(attempt));

  GPUAAS_ASSIGN_OR_RETURN(
      std::optional<UserRecord> user,
      pool_.Read<std::optional<UserRecord>>(
          "auth.login_user", [&](db::Tx& tx) -> absl::StatusOr<std::optional<UserRecord>> {
            return repo_.GetUserByName(tx, req.user_name());
          }));
  // scrypt runs outside any transaction so no connection is held while it burns CPU.
  const bool password_ok = VerifyPassword(req.password(), user ? user->password_hash : DummyHash());
  if (!user || !password_ok) {
    GPUAAS_RETURN_IF_ERROR(guard_.RecordFailure(attempt));
    return BadCredentials();
  }
  if (user->user.disabled()) return absl::PermissionDeniedError("user is disabled");
  GPUAAS_RETURN_IF_ERROR(guard_.RecordSuccess(attempt));

  Grant grant;
  std::string refresh;
  GPUAAS_RETURN_IF_ERROR(pool_.RunInTransaction("auth.login", [&](db::Tx& tx) -> absl::Status {
    GPUAAS_ASSIGN_OR_RETURN(grant, ResolveGrant(tx, *user, req.tenant_id()));
    refresh = IssueRefreshToken(tx, user->user.user_id(), grant, NewId("chn_"));
    return absl::OkStatus();
  }));
  GPUAAS_ASSIGN_OR_RETURN(IssuedToken token, IssueAccessToken(user->user.user_id(), grant, ""));
  FillTokenAnswer(token, out);
  out.set_refresh_token(refresh);
  return absl::OkStatus();
}

absl::Status Auth::Refresh(const pb::RefreshRequest& req, pb::RefreshResponse& out) {
  GPUAAS_RETURN_IF_ERROR(service::ValidateRequired("refresh_token", req.refresh_token()));
  if (!req.tenant_id().empty()) {
    GPUAAS_RETURN_IF_ERROR(service::ValidateSlug("tenant_id", req.tenant_id()));
  }
  std::optional<IdSecret> parts = ParseIdSecret(req.refresh_token());
  if (!parts) return BadRefreshToken();

  // A replayed token revokes its chain, and that revocation must commit even though the
  // call fails: the transaction returns OK and the verdict travels in `verdict`.
  absl::Status verdict;
  std::string user_id;
  Grant grant;
  std::string refresh;
  GPUAAS_RETURN_IF_ERROR(pool_.RunInTransaction("auth.refresh", [&](db::Tx& tx) -> absl::Status {
    verdict = absl::OkStatus();
    std::optional<RefreshTokenRecord> r = repo_.GetRefreshTokenForUpdate(tx, parts->id);
    if (!r || !VerifySecret(parts->secret, r->secret_hash) || r->revoked ||
        clock_.Now() >= r->expire_time) {
      verdict = BadRefreshToken();
      return absl::OkStatus();
    }
    if (r->used) {
      repo_.RevokeChain(tx, r->chain_id);
      verdict = absl::UnauthenticatedError("refresh token reused; the session has been revoked");
      return absl::OkStatus();
    }
    std::optional<UserRecord> user = repo_.GetUser(tx, r->user_id);
    if (!user || user->user.disabled()) {
      repo_.RevokeChain(tx, r->chain_id);
      verdict = BadRefreshToken();
      return absl::OkStatus();
    }
    // A switch to a tenant the user is not in leaves the session as it was: the token stays
    // unspent, the answer NOT_FOUND (as Login's).
    if (!req.tenant_id().empty() && req.tenant_id() != r->tenant_id) {
      absl::StatusOr<Grant> g = ResolveGrant(tx, *user, req.tenant_id());
      if (!g.ok()) {
        verdict = g.status();
        return absl::OkStatus();
      }
      r->tenant_id = req.tenant_id();
    }
    // Roles may have changed since login: the new token carries the current one.
    absl::StatusOr<Grant> g = ResolveGrant(tx, *user, r->tenant_id);
    if (!g.ok()) {
      repo_.RevokeChain(tx, r->chain_id);
      verdict = BadRefreshToken();
      return absl::OkStatus();
    }
    grant = *g;
    user_id = r->user_id;
    repo_.MarkRefreshTokenUsed(tx, r->token_id);
    refresh = IssueRefreshToken(tx, user_id, grant, r->chain_id);
    return absl::OkStatus();
  }));
  GPUAAS_RETURN_IF_ERROR(verdict);
  GPUAAS_ASSIGN_OR_RETURN(IssuedToken token, IssueAccessToken(user_id, grant, ""));
  FillTokenAnswer(token, out);
  out.set_refresh_token(refresh);
  return absl::OkStatus();
}

absl::Status Auth::Logout(const pb::LogoutRequest& req) {
  GPUAAS_RETURN_IF_ERROR(service::ValidateRequired("refresh_token", req.refresh_token()));
  std::optional<IdSecret> parts = ParseIdSecret(req.refresh_token());
  if (!parts) return BadRefreshToken();
  absl::Status verdict;
  GPUAAS_RETURN_IF_ERROR(pool_.RunInTransaction("auth.logout", [&](db::Tx& tx) -> absl::Status {
    verdict = absl::OkStatus();
    std::optional<RefreshTokenRecord> r = repo_.GetRefreshTokenForUpdate(tx, parts->id);
    if (!r || !VerifySecret(parts->secret, r->secret_hash)) {
      verdict = BadRefreshToken();
      return absl::OkStatus();
    }
    repo_.RevokeChain(tx, r->chain_id);
    return absl::OkStatus();
  }));
  return verdict;
}

absl::Status Auth::WhoAmI(const Principal& p, pb::WhoAmIResponse& out) {
  return pool_.RunInTransaction("auth.whoami", [&](db::Tx& tx) -> absl::Status {
    std::optional<UserRecord> user = repo_.GetUser(tx, p.user_id);
    if (!user) return absl::UnauthenticatedError("user no longer exists");
    out.Clear();
    out.set_user_id(p.user_id);
    out.set_user_name(user->user.user_name());
    out.set_tenant_id(p.tenant_id);
    out.set_role(p.role);
    out.set_api_key_id(p.api_key_id);
    // A machine's key is its maker's (a platform admin's): it learns nothing of their tenants.
    if (authz::IsMachineRole(p.role)) return absl::OkStatus();
    for (pb::Membership& m : repo_.MembershipsOf(tx, p.user_id)) {
      *out.add_memberships() = std::move(m);
    }
    return absl::OkStatus();
  });
}

absl::Status Auth::GetJwks(pb::GetJwksResponse& out) {
  GPUAAS_ASSIGN_OR_RETURN(std::string json, keys_.JwksJson());
  GPUAAS_ASSIGN_OR_RETURN(std::vector<authz::PublicJwk> keys, authz::ParseJwksJson(json));
  out.Clear();
  for (const authz::PublicJwk& k : keys) {
    pb::Jwk* jwk = out.add_keys();
    jwk->set_kid(k.kid);
    jwk->set_kty("OKP");
    jwk->set_crv("Ed25519");
    jwk->set_x(Base64UrlEncode(k.public_raw));
    jwk->set_alg("EdDSA");
    jwk->set_use("sig");
  }
  out.set_json(std::move(json));
  return absl::OkStatus();
}

absl::Status Auth::RotateSigningKey(const Principal& p, pb::SigningKey& out) {
  GPUAAS_RETURN_IF_ERROR(authz::RequirePlatformAdmin(p));
  GPUAAS_ASSIGN_OR_RETURN(out, keys_.Rotate());
  return absl::OkStatus();
}

}  // namespace gpuaas::auth
