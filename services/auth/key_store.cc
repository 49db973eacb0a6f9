#include "services/auth/key_store.h"

#include "libs/common/ids.h"
#include "libs/common/status_macros.h"

namespace gpuaas::auth {
namespace {

class LocalJwksSource final : public authz::JwksSource {
 public:
  explicit LocalJwksSource(KeyStore& store) : store_(store) {}
  absl::StatusOr<std::string> FetchJwks() override { return store_.JwksJson(absl::Seconds(1)); }

 private:
  KeyStore& store_;
};

}  // namespace

KeyStore::KeyStore(db::Pool& pool, Repository& repo, const Clock& clock, KeyStoreOptions options)
    : pool_(pool), repo_(repo), clock_(clock), options_(options) {}

absl::Status KeyStore::Load() { return Reload().status(); }

absl::StatusOr<std::shared_ptr<const KeyStore::Snapshot>> KeyStore::Reload() {
  std::vector<SigningKeyRecord> records;
  GPUAAS_RETURN_IF_ERROR(pool_.RunInTransaction(
      "auth.load_signing_keys",
      [&](db::Tx& tx) {
        records = repo_.PublishedSigningKeys(tx, clock_.Now() - options_.publish_retired_for);
        bool has_current = false;
        for (const SigningKeyRecord& r : records) has_current |= !r.retire_time.has_value();
        if (has_current) return absl::OkStatus();
        // Serialise first-key creation between replicas starting together.
        repo_.LockFirstStart(tx);
        records = repo_.PublishedSigningKeys(tx, clock_.Now() - options_.publish_retired_for);
        for (const SigningKeyRecord& r : records) has_current |= !r.retire_time.has_value();
        if (has_current) return absl::OkStatus();
        SigningKeyRecord fresh{NewId("key_"), authz::Ed25519Key::Generate().PrivateRaw(),
                               clock_.Now(), std::nullopt};
        repo_.InsertSigningKey(tx, fresh);
        records.insert(records.begin(), fresh);
        return absl::OkStatus();
      },
      /*serializable=*/false));

  auto snap = std::make_shared<Snapshot>();
  snap->loaded_at = clock_.Now();
  for (const SigningKeyRecord& r : records) {
    GPUAAS_ASSIGN_OR_RETURN(authz::Ed25519Key key,
                            authz::Ed25519Key::FromPrivateRaw(r.private_raw));
    snap->published.push_back({r.kid, key.PublicRaw()});
    if (!r.retire_time.has_value() && snap->current_key == nullptr) {
      snap->current_kid = r.kid;
      snap->current_key = std::make_shared<const authz::Ed25519Key>(std::move(key));
    }
  }
  absl::MutexLock lock(&mu_);
  snapshot_ = snap;
  return std::shared_ptr<const Snapshot>(snap);
}

absl::StatusOr<std::shared_ptr<const KeyStore::Snapshot>> KeyStore::Fresh(absl::Duration max_age) {
  {
    absl::MutexLock lock(&mu_);
    if (snapshot_ != nullptr && clock_.Now() - snapshot_->loaded_at < max_age) {
      return snapshot_;
    }
  }
  return Reload();
}

absl::StatusOr<std::string> KeyStore::Sign(authz::Claims claims) {
  GPUAAS_ASSIGN_OR_RETURN(std::shared_ptr<const Snapshot> snap, Fresh(options_.reload_after));
  claims.kid = snap->current_kid;
  return authz::SignJwt(claims, *snap->current_key);
}

absl::StatusOr<std::string> KeyStore::JwksJson(std::optional<absl::Duration> max_age) {
  GPUAAS_ASSIGN_OR_RETURN(std::shared_ptr<const Snapshot> snap,
                          Fresh(max_age.value_or(options_.reload_after)));
  return authz::JwksJson(snap->published);
}

absl::StatusOr<pb::SigningKey> KeyStore::Rotate() {
  SigningKeyRecord fresh{NewId("key_"), authz::Ed25519Key::Generate().PrivateRaw(), clock_.Now(),
                         std::nullopt};
  GPUAAS_RETURN_IF_ERROR(pool_.RunInTransaction("auth.rotate_signing_key", [&](db::Tx& tx) {
    repo_.InsertSigningKey(tx, fresh);
    repo_.RetireSigningKeys(tx, fresh.kid);
    return absl::OkStatus();
  }));
  GPUAAS_RETURN_IF_ERROR(Reload().status());
  pb::SigningKey out;
  out.set_kid(fresh.kid);
  out.mutable_create_time()->set_seconds(absl::ToUnixSeconds(fresh.create_time));
  return out;
}

std::unique_ptr<authz::JwksSource> KeyStore::NewLocalJwksSource() {
  return std::make_unique<LocalJwksSource>(*this);
}

}  // namespace gpuaas::auth
