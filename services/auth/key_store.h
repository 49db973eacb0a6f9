// The auth service's Ed25519 signing keys, kept in PostgreSQL so every replica signs with the
// same current key and publishes the same JWKS. Holds a cached copy that it reloads when
// older than `reload_after` (another replica may have rotated).
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "libs/authz/jwt.h"
#include "libs/authz/verifier.h"
#include "libs/common/clock.h"
#include "libs/db/db.h"
#include "services/auth/repository.h"

namespace gpuaas::auth {

struct KeyStoreOptions {
  // Retired keys stay published this long: the longest token lifetime plus clock leeway.
  absl::Duration publish_retired_for = absl::Minutes(16);
  absl::Duration reload_after = absl::Seconds(30);
};

class KeyStore final {
 public:
  KeyStore(db::Pool& pool, Repository& repo, const Clock& clock, KeyStoreOptions options = {});

  // Loads the keys, creating the first one on an empty schema. Blocks on the database.
  absl::Status Load();

  // Signs `claims` with the current key (setting claims.kid).
  absl::StatusOr<std::string> Sign(authz::Claims claims);

  // The published public keys as a JWKS document, reloaded first when the cached copy is older
  // than `max_age` (default: options.reload_after).
  absl::StatusOr<std::string> JwksJson(std::optional<absl::Duration> max_age = std::nullopt);

  // Creates a new current key and retires the others (they stay published for a while).
  absl::StatusOr<pb::SigningKey> Rotate();

  // A JwksSource reading this store, for the service's own token verification. Its fetches see
  // local rotations at once and other replicas' within a second, so the verifier using it may
  // refetch on every unknown kid without reaching the database more than once a second.
  std::unique_ptr<authz::JwksSource> NewLocalJwksSource();

 private:
  struct Snapshot {
    std::string current_kid;
    std::shared_ptr<const authz::Ed25519Key> current_key;
    std::vector<authz::PublicJwk> published;
    absl::Time loaded_at;
  };

  absl::StatusOr<std::shared_ptr<const Snapshot>> Fresh(absl::Duration max_age);
  absl::StatusOr<std::shared_ptr<const Snapshot>> Reload();

  db::Pool& pool_;
  Repository& repo_;
  const Clock& clock_;
  const KeyStoreOptions options_;
  absl::Mutex mu_;
  std::shared_ptr<const Snapshot> snapshot_ ABSL_GUARDED_BY(mu_);
};

}  // namespace gpuaas::auth
