// API keys: long-lived credentials for scripts and services, exchanged for access tokens.
// A key acts in its creator's tenant with at most its creator's role.
#include "absl/strings/str_cat.h"
#include "libs/common/ids.h"
#include "libs/common/status_macros.h"
#include "services/auth/auth.h"
#include "services/auth/credentials/password.h"
#include "services/auth/credentials/secret_hash.h"
#include "services/auth/validate.h"

namespace gpuaas::auth {
namespace {

constexpr std::string_view kCreateApiKey = "CreateApiKey";
constexpr int kSecretBytes = 32;

absl::Status KeyNotFound() { return absl::NotFoundError("api key not found"); }

absl::Status BadKey() { return absl::UnauthenticatedError("invalid, expired or revoked api key"); }

// Tenant roles rank VIEWER < MEMBER < TENANT_ADMIN; global roles outrank them all.
int Rank(common::v1::Role r) {
  switch (r) {
    case common::v1::ROLE_VIEWER: return 1;
    case common::v1::ROLE_MEMBER: return 2;
    case common::v1::ROLE_TENANT_ADMIN: return 3;
    case common::v1::ROLE_SERVICE: return 4;
    case common::v1::ROLE_PLATFORM_ADMIN: return 5;
    default: return 0;
  }
}

bool MayManageKey(const Principal& p, const pb::ApiKey& k) {
  if (p.IsPlatformAdmin()) return true;
  if (k.tenant_id() != p.tenant_id) return false;
  return k.user_id() == p.user_id || p.role == common::v1::ROLE_TENANT_ADMIN;
}

}  // namespace

absl::Status Auth::CreateApiKey(const Principal& p, const pb::CreateApiKeyRequest& req,
                                pb::CreateApiKeyResponse& out) {
  if (req.name().empty()) return absl::InvalidArgumentError("name: required");
  GPUAAS_RETURN_IF_ERROR(ValidateDisplayName("name", req.name()));
  GPUAAS_RETURN_IF_ERROR(ValidateRequestId("request_id", req.request_id()));
  if (req.ttl_seconds() < 0) return absl::InvalidArgumentError("ttl_seconds: must be >= 0");
  if (!p.api_key_id.empty()) {
    return absl::PermissionDeniedError("an API key cannot create API keys; log in as a user");
  }
  common::v1::Role role = req.role() == common::v1::ROLE_UNSPECIFIED ? p.role : req.role();
  if (Rank(role) == 0) return absl::InvalidArgumentError("role: unknown role");
  if (Rank(role) > Rank(p.role)) {
    return absl::PermissionDeniedError("role: an API key cannot outrank its creator");
  }
  if ((role == common::v1::ROLE_PLATFORM_ADMIN || role == common::v1::ROLE_SERVICE) && !p.IsGlobal()) {
    return absl::PermissionDeniedError("role: only global principals hold global roles");
  }

  ApiKeyRecord rec;
  rec.key.set_api_key_id(NewId("gak_"));
  rec.key.set_name(req.name());
  rec.key.set_tenant_id(p.tenant_id);
  rec.key.set_user_id(p.user_id);
  rec.key.set_role(role);
  if (req.ttl_seconds() > 0) {
    rec.key.mutable_expire_time()->set_seconds(absl::ToUnixSeconds(clock_.Now()) +
                                               req.ttl_seconds());
  }
  std::string secret = RandomToken(kSecretBytes);
  rec.secret_hash = HashSecret(secret);

  return pool_.RunInTransaction(
      "auth.create_api_key",
      [&](db::Tx& tx) -> absl::Status {
        out.Clear();
        if (!req.request_id().empty()) {
          if (auto prior =
                  repo_.FindRequest(tx, std::string(kCreateApiKey), p.user_id, req.request_id())) {
            // The secret was shown once, in the first answer; a retry gets the key alone.
            std::optional<ApiKeyRecord> existing = repo_.GetApiKey(tx, *prior);
            if (!existing) return KeyNotFound();
            *out.mutable_api_key() = existing->key;
            return absl::OkStatus();
          }
        }
        repo_.InsertApiKey(tx, rec);
        if (!req.request_id().empty()) {
          repo_.RecordRequest(tx, std::string(kCreateApiKey), p.user_id, req.request_id(),
                              rec.key.api_key_id());
        }
        *out.mutable_api_key() = repo_.GetApiKey(tx, rec.key.api_key_id())->key;
        out.set_secret(absl::StrCat(rec.key.api_key_id(), ".", secret));
        return absl::OkStatus();
      },
      /*serializable=*/true);
}

absl::Status Auth::ListApiKeys(const Principal& p, const pb::ListApiKeysRequest& req,
                               pb::ListApiKeysResponse& out) {
  GPUAAS_ASSIGN_OR_RETURN(PageQuery page, ParsePage(req.page_size(), req.page_token()));
  // Tenant admins and platform admins see the tenant's keys; others their own.
  std::optional<std::string> only_user;
  if (!p.IsPlatformAdmin() && p.role != common::v1::ROLE_TENANT_ADMIN) only_user = p.user_id;
  return pool_.RunInTransaction("auth.list_api_keys", [&](db::Tx& tx) -> absl::Status {
    out.Clear();
    for (pb::ApiKey& k : repo_.ListApiKeys(tx, p.tenant_id, only_user, page)) {
      *out.add_api_keys() = std::move(k);
    }
    if (out.api_keys_size() > 0) {
      out.set_next_page_token(NextPageToken(page, static_cast<size_t>(out.api_keys_size()),
                                            out.api_keys().rbegin()->api_key_id()));
    }
    return absl::OkStatus();
  });
}

absl::Status Auth::RevokeApiKey(const Principal& p, const pb::RevokeApiKeyRequest& req,
                                pb::ApiKey& out) {
  GPUAAS_RETURN_IF_ERROR(ValidateId("api_key_id", req.api_key_id()));
  return pool_.RunInTransaction("auth.revoke_api_key", [&](db::Tx& tx) -> absl::Status {
    std::optional<ApiKeyRecord> k = repo_.GetApiKey(tx, req.api_key_id());
    if (!k || !MayManageKey(p, k->key)) return KeyNotFound();
    repo_.RevokeApiKey(tx, req.api_key_id());
    out = repo_.GetApiKey(tx, req.api_key_id())->key;
    return absl::OkStatus();
  });
}

absl::Status Auth::ExchangeApiKey(const pb::ExchangeApiKeyRequest& req, pb::TokenResponse& out) {
  if (req.secret().empty()) return absl::InvalidArgumentError("secret: required");
  std::optional<IdSecret> parts = ParseIdSecret(req.secret());
  if (!parts) return BadKey();
  std::string user_id;
  std::string api_key_id;
  Grant grant;
  GPUAAS_RETURN_IF_ERROR(pool_.RunInTransaction("auth.exchange_api_key", [&](db::Tx& tx) {
    std::optional<ApiKeyRecord> k = repo_.GetApiKey(tx, parts->id);
    if (!k || !VerifySecret(parts->secret, k->secret_hash) || k->key.revoked()) return BadKey();
    if (k->key.has_expire_time() &&
        absl::ToUnixSeconds(clock_.Now()) >= k->key.expire_time().seconds()) {
      return BadKey();
    }
    std::optional<UserRecord> user = repo_.GetUser(tx, k->key.user_id());
    if (!user || user->user.disabled()) return BadKey();
    // The key never outranks what its creator holds now.
    absl::StatusOr<Grant> now = ResolveGrant(tx, *user, k->key.tenant_id());
    if (!now.ok()) return BadKey();
    grant = *now;
    if (Rank(k->key.role()) < Rank(grant.role)) grant.role = k->key.role();
    user_id = k->key.user_id();
    api_key_id = k->key.api_key_id();
    return absl::OkStatus();
  }));
  return IssueAccessToken(user_id, grant, api_key_id, out);
}

}  // namespace gpuaas::auth
