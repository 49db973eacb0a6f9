// API keys, refresh tokens and signing keys.
#include "libs/common/proto_time.h"
#include "services/auth/repository.h"

namespace gpuaas::auth {
namespace {

// SQL reads best as written.
// clang-format off
#define GPUAAS_API_KEY_FROM                                                   \
  "SELECT api_key_id, name, coalesce(tenant_id, ''), user_id, role, "         \
  GPUAAS_SQL_MICROS("create_time") ", " GPUAAS_SQL_MICROS("expire_time") ", " \
  "revoke_time IS NOT NULL, secret_hash, coalesce(node_id, '') FROM auth.api_keys "
// clang-format on

std::optional<std::string> NullIfEmpty(const std::string& s) {
  if (s.empty()) return std::nullopt;
  return s;
}

ApiKeyRecord ApiKeyFromRow(const db::Row& r) {
  ApiKeyRecord rec;
  pb::ApiKey& k = rec.key;
  k.set_api_key_id(r.Get<std::string>(0));
  k.set_name(r.Get<std::string>(1));
  k.set_tenant_id(r.Get<std::string>(2));
  k.set_user_id(r.Get<std::string>(3));
  k.set_role(r.GetEnum<common::v1::Role>(4));
  *k.mutable_create_time() = ToProtoTime(r.GetTime(5));
  if (std::optional<absl::Time> expire = r.GetOptionalTime(6)) {
    *k.mutable_expire_time() = ToProtoTime(*expire);
  }
  k.set_revoked(r.Get<bool>(7));
  rec.secret_hash = r.Get<std::string>(8);
  k.set_node_id(r.Get<std::string>(9));
  return rec;
}

pb::ApiKey ApiKeyOnly(const db::Row& r) { return ApiKeyFromRow(r).key; }

SigningKeyRecord SigningKeyFromRow(const db::Row& r) {
  SigningKeyRecord k;
  k.kid = r.Get<std::string>(0);
  k.private_raw = r.GetBytes(1);
  k.create_time = r.GetTime(2);
  k.retire_time = r.GetOptionalTime(3);
  return k;
}

}  // namespace

void Repository::InsertApiKey(db::Tx& tx, const ApiKeyRecord& rec) {
  constexpr std::string_view kInsertApiKey =
      "INSERT INTO auth.api_keys (api_key_id, name, tenant_id, user_id, role, secret_hash, "
      "expire_time, node_id) VALUES ($1, $2, $3, $4, $5, $6, " GPUAAS_SQL_FROM_MICROS("$7") ", $8)";
  const pb::ApiKey& k = rec.key;
  std::optional<absl::Time> expire;
  if (k.has_expire_time()) expire = FromProtoTime(k.expire_time());
  tx.Exec(kInsertApiKey, k.api_key_id(), k.name(), NullIfEmpty(k.tenant_id()), k.user_id(),
          k.role(), rec.secret_hash, expire, NullIfEmpty(k.node_id()));
}

std::optional<ApiKeyRecord> Repository::GetApiKey(db::Tx& tx, const std::string& api_key_id) {
  constexpr std::string_view kGetApiKey = GPUAAS_API_KEY_FROM "WHERE api_key_id = $1";
  std::optional<db::Row> row = tx.Exec(kGetApiKey, api_key_id).First();
  if (!row) return std::nullopt;
  return ApiKeyFromRow(*row);
}

std::vector<pb::ApiKey> Repository::ListApiKeys(db::Tx& tx, const std::string& tenant_id,
                                                const std::optional<std::string>& user_id,
                                                const PageRequest& page) {
  constexpr std::string_view kListApiKeys = GPUAAS_API_KEY_FROM
      "WHERE coalesce(tenant_id, '') = $1 AND ($2::text IS NULL OR user_id = $2) "
      "AND api_key_id > $3 ORDER BY api_key_id LIMIT $4";
  return tx.Exec(kListApiKeys, tenant_id, user_id, page.after, page.limit).Map(ApiKeyOnly);
}

void Repository::RevokeApiKey(db::Tx& tx, const std::string& api_key_id) {
  constexpr std::string_view kRevokeApiKey =
      "UPDATE auth.api_keys SET revoke_time = coalesce(revoke_time, now()) WHERE api_key_id = $1";
  tx.Exec(kRevokeApiKey, api_key_id);
}

void Repository::InsertRefreshToken(db::Tx& tx, const RefreshTokenRecord& r) {
  constexpr std::string_view kInsertRefreshToken =
      "INSERT INTO auth.refresh_tokens (token_id, chain_id, user_id, tenant_id, secret_hash, "
      "expire_time) VALUES ($1, $2, $3, $4, $5, " GPUAAS_SQL_FROM_MICROS("$6") ")";
  tx.Exec(kInsertRefreshToken, r.token_id, r.chain_id, r.user_id, NullIfEmpty(r.tenant_id),
          r.secret_hash, r.expire_time);
}

std::optional<RefreshTokenRecord> Repository::GetRefreshTokenForUpdate(
    db::Tx& tx, const std::string& token_id) {
  constexpr std::string_view kGetRefreshTokenForUpdate =
      "SELECT token_id, chain_id, user_id, coalesce(tenant_id, ''), secret_hash, "
      GPUAAS_SQL_MICROS("expire_time") ", used_time IS NOT NULL, revoke_time IS NOT NULL "
      "FROM auth.refresh_tokens WHERE token_id = $1 FOR UPDATE";
  std::optional<db::Row> row = tx.Exec(kGetRefreshTokenForUpdate, token_id).First();
  if (!row) return std::nullopt;
  RefreshTokenRecord rec;
  rec.token_id = row->Get<std::string>(0);
  rec.chain_id = row->Get<std::string>(1);
  rec.user_id = row->Get<std::string>(2);
  rec.tenant_id = row->Get<std::string>(3);
  rec.secret_hash = row->Get<std::string>(4);
  rec.expire_time = row->GetTime(5);
  rec.used = row->Get<bool>(6);
  rec.revoked = row->Get<bool>(7);
  return rec;
}

void Repository::MarkRefreshTokenUsed(db::Tx& tx, const std::string& token_id) {
  constexpr std::string_view kMarkRefreshTokenUsed =
      "UPDATE auth.refresh_tokens SET used_time = now() WHERE token_id = $1";
  tx.Exec(kMarkRefreshTokenUsed, token_id);
}

void Repository::RevokeChain(db::Tx& tx, const std::string& chain_id) {
  constexpr std::string_view kRevokeChain =
      "UPDATE auth.refresh_tokens SET revoke_time = coalesce(revoke_time, now()) "
      "WHERE chain_id = $1";
  tx.Exec(kRevokeChain, chain_id);
}

void Repository::RevokeUserTokens(db::Tx& tx, const std::string& user_id) {
  constexpr std::string_view kRevokeUserTokens =
      "UPDATE auth.refresh_tokens SET revoke_time = coalesce(revoke_time, now()) "
      "WHERE user_id = $1";
  tx.Exec(kRevokeUserTokens, user_id);
}

void Repository::RevokeMemberCredentials(db::Tx& tx, const std::string& tenant_id,
                                         const std::string& user_id) {
  constexpr std::string_view kRevokeMemberTokens =
      "UPDATE auth.refresh_tokens SET revoke_time = coalesce(revoke_time, now()) "
      "WHERE tenant_id = $1 AND user_id = $2";
  constexpr std::string_view kRevokeMemberKeys =
      "UPDATE auth.api_keys SET revoke_time = coalesce(revoke_time, now()) "
      "WHERE tenant_id = $1 AND user_id = $2";
  tx.Exec(kRevokeMemberTokens, tenant_id, user_id);
  tx.Exec(kRevokeMemberKeys, tenant_id, user_id);
}

void Repository::InsertSigningKey(db::Tx& tx, const SigningKeyRecord& k) {
  constexpr std::string_view kInsertSigningKey =
      "INSERT INTO auth.signing_keys (kid, private_key) VALUES ($1, $2)";
  tx.Exec(kInsertSigningKey, k.kid, db::Bytes{k.private_raw});
}

std::vector<SigningKeyRecord> Repository::PublishedSigningKeys(db::Tx& tx,
                                                               absl::Time published_after) {
  constexpr std::string_view kPublishedSigningKeys =
      "SELECT kid, private_key, " GPUAAS_SQL_MICROS("create_time") ", "
      GPUAAS_SQL_MICROS("retire_time") " FROM auth.signing_keys "
      "WHERE retire_time IS NULL OR retire_time > " GPUAAS_SQL_FROM_MICROS("$1")
      " ORDER BY create_time DESC, kid";
  return tx.Exec(kPublishedSigningKeys, published_after).Map(SigningKeyFromRow);
}

void Repository::RetireSigningKeys(db::Tx& tx, const std::string& except_kid) {
  constexpr std::string_view kRetireSigningKeys =
      "UPDATE auth.signing_keys SET retire_time = now() "
      "WHERE retire_time IS NULL AND kid <> $1";
  tx.Exec(kRetireSigningKeys, except_kid);
}

}  // namespace gpuaas::auth
