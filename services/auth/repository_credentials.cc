// API keys, refresh tokens and signing keys.
#include "services/auth/repository.h"
#include "services/auth/repository_rows.h"

namespace gpuaas::auth {
namespace {

using internal::Micros;
using internal::NullIfEmpty;
using internal::SetMicros;

constexpr std::string_view kSelectApiKey =
    "SELECT api_key_id, name, coalesce(tenant_id, ''), user_id, role, "
    GPUAAS_MICROS("create_time") ", " GPUAAS_MICROS("expire_time") ", revoke_time IS NOT NULL, "
    "secret_hash FROM auth.api_keys ";

ApiKeyRecord ApiKeyFromRow(const pqxx::row& r) {
  ApiKeyRecord rec;
  pb::ApiKey& k = rec.key;
  k.set_api_key_id(r[0].as<std::string>());
  k.set_name(r[1].as<std::string>());
  k.set_tenant_id(r[2].as<std::string>());
  k.set_user_id(r[3].as<std::string>());
  k.set_role(static_cast<common::v1::Role>(r[4].as<int>()));
  SetMicros(*k.mutable_create_time(), r[5].as<int64_t>());
  if (!r[6].is_null()) SetMicros(*k.mutable_expire_time(), r[6].as<int64_t>());
  k.set_revoked(r[7].as<bool>());
  rec.secret_hash = r[8].as<std::string>();
  return rec;
}

}  // namespace

void Repository::InsertApiKey(db::Tx& tx, const ApiKeyRecord& rec) {
  constexpr std::string_view kInsert =
      "INSERT INTO auth.api_keys (api_key_id, name, tenant_id, user_id, role, secret_hash, "
      "expire_time) VALUES ($1, $2, $3, $4, $5, $6, "
      "CASE WHEN $7::int8 IS NULL THEN NULL ELSE to_timestamp($7::int8 / 1000000.0) END)";
  const pb::ApiKey& k = rec.key;
  std::optional<int64_t> expire;
  if (k.has_expire_time()) expire = k.expire_time().seconds() * 1'000'000;
  tx.Exec(kInsert, k.api_key_id(), k.name(), NullIfEmpty(k.tenant_id()), k.user_id(),
          static_cast<int>(k.role()), rec.secret_hash, expire);
}

std::optional<ApiKeyRecord> Repository::GetApiKey(db::Tx& tx, const std::string& api_key_id) {
  pqxx::result r = tx.Exec(std::string(kSelectApiKey) + "WHERE api_key_id = $1", api_key_id);
  if (r.empty()) return std::nullopt;
  return ApiKeyFromRow(r[0]);
}

std::vector<pb::ApiKey> Repository::ListApiKeys(db::Tx& tx, const std::string& tenant_id,
                                                const std::optional<std::string>& user_id,
                                                const PageQuery& page) {
  constexpr std::string_view kWhere =
      "WHERE coalesce(tenant_id, '') = $1 AND ($2::text IS NULL OR user_id = $2) "
      "AND api_key_id > $3 ORDER BY api_key_id LIMIT $4";
  pqxx::result r =
      tx.Exec(std::string(kSelectApiKey).append(kWhere), tenant_id, user_id, page.after, page.limit);
  std::vector<pb::ApiKey> out;
  for (const pqxx::row& row : r) out.push_back(ApiKeyFromRow(row).key);
  return out;
}

void Repository::RevokeApiKey(db::Tx& tx, const std::string& api_key_id) {
  tx.Exec("UPDATE auth.api_keys SET revoke_time = coalesce(revoke_time, now()) WHERE api_key_id = $1",
          api_key_id);
}

void Repository::InsertRefreshToken(db::Tx& tx, const RefreshTokenRecord& r) {
  constexpr std::string_view kInsert =
      "INSERT INTO auth.refresh_tokens (token_id, chain_id, user_id, tenant_id, secret_hash, "
      "expire_time) VALUES ($1, $2, $3, $4, $5, to_timestamp($6::int8 / 1000000.0))";
  tx.Exec(kInsert, r.token_id, r.chain_id, r.user_id, NullIfEmpty(r.tenant_id), r.secret_hash,
          Micros(r.expire_time));
}

std::optional<RefreshTokenRecord> Repository::GetRefreshTokenForUpdate(db::Tx& tx,
                                                                       const std::string& token_id) {
  constexpr std::string_view kSelect =
      "SELECT token_id, chain_id, user_id, coalesce(tenant_id, ''), secret_hash, "
      GPUAAS_MICROS("expire_time") ", used_time IS NOT NULL, revoke_time IS NOT NULL "
      "FROM auth.refresh_tokens WHERE token_id = $1 FOR UPDATE";
  pqxx::result r = tx.Exec(kSelect, token_id);
  if (r.empty()) return std::nullopt;
  RefreshTokenRecord rec;
  rec.token_id = r[0][0].as<std::string>();
  rec.chain_id = r[0][1].as<std::string>();
  rec.user_id = r[0][2].as<std::string>();
  rec.tenant_id = r[0][3].as<std::string>();
  rec.secret_hash = r[0][4].as<std::string>();
  rec.expire_time = internal::TimeFromMicros(r[0][5]);
  rec.used = r[0][6].as<bool>();
  rec.revoked = r[0][7].as<bool>();
  return rec;
}

void Repository::MarkRefreshTokenUsed(db::Tx& tx, const std::string& token_id) {
  tx.Exec("UPDATE auth.refresh_tokens SET used_time = now() WHERE token_id = $1", token_id);
}

void Repository::RevokeChain(db::Tx& tx, const std::string& chain_id) {
  tx.Exec("UPDATE auth.refresh_tokens SET revoke_time = coalesce(revoke_time, now()) "
          "WHERE chain_id = $1",
          chain_id);
}

void Repository::RevokeUserTokens(db::Tx& tx, const std::string& user_id) {
  tx.Exec("UPDATE auth.refresh_tokens SET revoke_time = coalesce(revoke_time, now()) "
          "WHERE user_id = $1",
          user_id);
}

void Repository::InsertSigningKey(db::Tx& tx, const SigningKeyRecord& k) {
  tx.Exec("INSERT INTO auth.signing_keys (kid, private_key) VALUES ($1, $2)", k.kid,
          pqxx::binarystring(k.private_raw));
}

std::vector<SigningKeyRecord> Repository::PublishedSigningKeys(db::Tx& tx,
                                                               absl::Time published_after) {
  constexpr std::string_view kSelect =
      "SELECT kid, private_key, " GPUAAS_MICROS("create_time") ", " GPUAAS_MICROS("retire_time")
      " FROM auth.signing_keys "
      "WHERE retire_time IS NULL OR retire_time > to_timestamp($1::int8 / 1000000.0) "
      "ORDER BY create_time DESC, kid";
  std::vector<SigningKeyRecord> out;
  for (const pqxx::row& row : tx.Exec(kSelect, Micros(published_after))) {
    SigningKeyRecord k;
    k.kid = row[0].as<std::string>();
    k.private_raw = pqxx::binarystring(row[1]).str();
    k.create_time = internal::TimeFromMicros(row[2]);
    k.retire_time = internal::OptionalTime(row[3]);
    out.push_back(std::move(k));
  }
  return out;
}

void Repository::RetireSigningKeys(db::Tx& tx, const std::string& except_kid) {
  tx.Exec("UPDATE auth.signing_keys SET retire_time = now() "
          "WHERE retire_time IS NULL AND kid <> $1",
          except_kid);
}

}  // namespace gpuaas::auth
