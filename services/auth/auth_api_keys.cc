// API keys: long-lived credentials for scripts and services, exchanged for access tokens.
// A key acts in its creator's tenant with a role its creator may grant (libs/authz/roles.h), and
// its tokens never carry more than the creator holds there at exchange time.
#include "libs/authz/roles.h"
#include "libs/common/ids.h"
#include "libs/common/proto_time.h"
#include "libs/common/status_macros.h"
#include "libs/service/paging.h"
#include "libs/service/validate.h"
#include "services/auth/auth.h"
#include "services/auth/credentials/password.h"
#include "services/auth/credentials/secret_hash.h"
#include "services/auth/policy.h"
#include "services/auth/token_answers.h"
#include "services/auth/validate.h"

namespace gpuaas::auth {
namespace {

constexpr std::string_view kCreateApiKey = "CreateApiKey";
constexpr int kSecretBytes = 32;
// Long enough for any automation, short enough that every expiry is a valid Timestamp.
constexpr absl::Duration kMaxKeyLifetime = absl::Hours(24 * 366 * 10);

absl::Status KeyNotFound() { return absl::NotFoundError("api key not found"); }

absl::Status BadKey() { return absl::UnauthenticatedError("invalid, expired or revoked api key"); }

}  // namespace

absl::Status Auth::CreateApiKey(const Principal& p, const pb::CreateApiKeyRequest& req,
                                pb::CreateApiKeyResponse& out) {
  GPUAAS_RETURN_IF_ERROR(service::ValidateRequired("name", req.name()));
  GPUAAS_RETURN_IF_ERROR(service::ValidateDisplayText("name", req.name()));
  GPUAAS_RETURN_IF_ERROR(service::ValidateRequestId("request_id", req.request_id()));
  const absl::Duration ttl = FromProtoDuration(req.ttl());
  if (ttl < absl::ZeroDuration()) return service::InvalidField("ttl", "must not be negative");
  if (req.ttl().nanos() != 0) return service::InvalidField("ttl", "must be whole seconds");
  if (ttl > kMaxKeyLifetime) return service::InvalidField("ttl", "must be at most 10 years");
  if (!p.api_key_id.empty()) {
    return absl::PermissionDeniedError("an API key cannot create API keys; log in as a user");
  }
  GPUAAS_ASSIGN_OR_RETURN(common::v1::Role role, ApiKeyRole(p, req.role()));
  GPUAAS_RETURN_IF_ERROR(ApiKeyNode(role, req.node_id()));
  if (!req.node_id().empty()) {
    GPUAAS_RETURN_IF_ERROR(service::ValidateNodeId("node_id", req.node_id()));
  }

  ApiKeyRecord rec;
  rec.key.set_api_key_id(NewId("gak_"));
  rec.key.set_name(req.name());
  // A machine's key acts in no tenant, whichever tenant its maker's token was in.
  if (!authz::IsMachineRole(role)) rec.key.set_tenant_id(p.tenant_id);
  rec.key.set_user_id(p.user_id);
  rec.key.set_role(role);
  rec.key.set_node_id(req.node_id());
  if (ttl > absl::ZeroDuration()) {
    *rec.key.mutable_expire_time() = ToProtoTime(clock_.Now() + ttl);
  }
  const std::string secret = RandomToken(kSecretBytes);
  rec.secret_hash = HashSecret(secret);

  // Request ids are scoped to the tenant too: a key belongs to the tenant its token acts for.
  const std::string caller = p.user_id + "@" + p.tenant_id;
  return pool_.RunInTransaction(
      "auth.create_api_key",
      [&](db::Tx& tx) -> absl::Status {
        GPUAAS_ASSIGN_OR_RETURN(service::CreateOutcome created,
                                requests_.Create(tx, {kCreateApiKey, caller, req.request_id()}, req,
                                                 [&](db::Tx& tx) -> absl::StatusOr<std::string> {
                                                   repo_.InsertApiKey(tx, rec);
                                                   return rec.key.api_key_id();
                                                 }));
        std::optional<ApiKeyRecord> stored = repo_.GetApiKey(tx, created.id);
        if (!stored) return KeyNotFound();
        out.Clear();
        *out.mutable_api_key() = stored->key;
        // The secret is shown once, in the first answer; a retry gets the key alone.
        if (created.first) out.set_secret(rec.key.api_key_id() + "." + secret);
        return absl::OkStatus();
      },
      /*serializable=*/true);
}

absl::Status Auth::ListApiKeys(const Principal& p, const pb::ListApiKeysRequest& req,
                               pb::ListApiKeysResponse& out) {
  GPUAAS_ASSIGN_OR_RETURN(service::PageRequest page,
                          service::ParsePage(req.page_size(), req.page_token()));
  // A machine's key lists nothing (not even its maker's keys).
  GPUAAS_RETURN_IF_ERROR(authz::RequireRole(p, common::v1::ROLE_UNSPECIFIED));
  // Those who manage the tenant's people see all its keys; others their own.
  std::optional<std::string> only_user;
  if (!p.Has(authz::Power::kManagePeople)) only_user = p.user_id;
  return pool_.RunInTransaction("auth.list_api_keys", [&](db::Tx& tx) -> absl::Status {
    service::FillPage(page, repo_.ListApiKeys(tx, p.tenant_id, only_user, page),
                      *out.mutable_api_keys(), *out.mutable_next_page_token(),
                      [](const pb::ApiKey& k) { return k.api_key_id(); });
    return absl::OkStatus();
  });
}

absl::Status Auth::RevokeApiKey(const Principal& p, const pb::RevokeApiKeyRequest& req,
                                pb::ApiKey& out) {
  GPUAAS_RETURN_IF_ERROR(service::ValidateServerId("api_key_id", req.api_key_id()));
  return pool_.RunInTransaction("auth.revoke_api_key", [&](db::Tx& tx) -> absl::Status {
    std::optional<ApiKeyRecord> k = repo_.GetApiKey(tx, req.api_key_id());
    if (!k || !MayManageKey(p, k->key)) return KeyNotFound();
    repo_.RevokeApiKey(tx, req.api_key_id());
    out = repo_.GetApiKey(tx, req.api_key_id())->key;
    return absl::OkStatus();
  });
}

absl::Status Auth::ExchangeApiKey(const pb::ExchangeApiKeyRequest& req, const std::string& client,
                                  pb::ExchangeApiKeyResponse& out) {
  GPUAAS_RETURN_IF_ERROR(service::ValidateRequired("secret", req.secret()));
  std::optional<IdSecret> parts = ParseIdSecret(req.secret());
  // A malformed secret is a guess too; it counts against the client with no key of its own.
  const LoginAttempt attempt{.kind = LoginAttempt::Kind::kApiKey,
                             .account = parts ? parts->id.substr(0, 64) : std::string(),
                             .client = client};
  GPUAAS_RETURN_IF_ERROR(guard_.Check(attempt));
  bool guessed = false;
  absl::Status verified = VerifyApiKey(req, out, guessed);
  if (guessed) {
    GPUAAS_RETURN_IF_ERROR(guard_.RecordFailure(attempt));
  } else if (verified.ok()) {
    GPUAAS_RETURN_IF_ERROR(guard_.RecordSuccess(attempt));
  }
  return verified;
}

absl::Status Auth::VerifyApiKey(const pb::ExchangeApiKeyRequest& req,
                                pb::ExchangeApiKeyResponse& out, bool& guessed) {
  std::optional<IdSecret> parts = ParseIdSecret(req.secret());
  guessed = true;
  if (!parts) return BadKey();
  std::string user_id;
  std::string api_key_id;
  Grant grant;
  GPUAAS_RETURN_IF_ERROR(pool_.RunInTransaction("auth.exchange_api_key", [&](db::Tx& tx) {
    guessed = true;  // again on a retried transaction
    std::optional<ApiKeyRecord> k = repo_.GetApiKey(tx, parts->id);
    if (!k || !VerifySecret(parts->secret, k->secret_hash)) return BadKey();
    // The right secret of a revoked or expired key is no guess: a machine retrying its old key
    // must not lock out the other machines at its address.
    guessed = false;
    if (k->key.revoked()) return BadKey();
    if (k->key.has_expire_time() && clock_.Now() >= FromProtoTime(k->key.expire_time())) {
      return BadKey();
    }
    std::optional<UserRecord> user = repo_.GetUser(tx, k->key.user_id());
    if (!user || user->user.disabled()) return BadKey();
    // The key never does more than its creator may do there now.
    absl::StatusOr<Grant> now = ResolveGrant(tx, *user, k->key.tenant_id());
    if (!now.ok()) return BadKey();
    grant = *now;
    grant.role = authz::Meet(now->role, k->key.role());
    if (grant.role == common::v1::ROLE_UNSPECIFIED) return BadKey();
    if (authz::IsTenantRole(grant.role) && grant.tenant_id.empty()) return BadKey();
    if (authz::IsMachineRole(grant.role)) grant.tenant_id.clear();
    grant.node_id = k->key.node_id();
    if ((grant.role == common::v1::ROLE_NODE_AGENT) != !grant.node_id.empty()) return BadKey();
    user_id = k->key.user_id();
    api_key_id = k->key.api_key_id();
    return absl::OkStatus();
  }));
  GPUAAS_ASSIGN_OR_RETURN(IssuedToken token, IssueAccessToken(user_id, grant, api_key_id));
  FillTokenAnswer(token, out);
  return absl::OkStatus();
}

}  // namespace gpuaas::auth
