// All SQL of the auth service, each statement a named constant next to the method that runs it.
// Methods run inside a caller's transaction (db::Tx) so the domain decides transaction
// boundaries; they map rows to API messages and back. Errors are exceptions from libs/db that
// db::Pool::RunInTransaction turns into a Status.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "absl/time/time.h"
#include "gpuaas/auth/v1/auth.pb.h"
#include "libs/db/db.h"
#include "libs/service/paging.h"
#include "services/auth/credentials/login_throttle.h"

namespace gpuaas::auth {

namespace pb = ::gpuaas::auth::v1;

// A member with its user's state and SSH public keys (ListAuthorizedKeys).
struct MemberKeys {
  pb::Membership member;
  bool disabled = false;
  std::vector<std::string> ssh_public_keys;
};

struct UserRecord {
  pb::User user;
  std::string password_hash;
};

struct ApiKeyRecord {
  pb::ApiKey key;
  std::string secret_hash;
};

struct RefreshTokenRecord {
  std::string token_id;
  std::string chain_id;
  std::string user_id;
  std::string tenant_id;
  std::string secret_hash;
  absl::Time expire_time;
  bool used = false;
  bool revoked = false;
};

struct SigningKeyRecord {
  std::string kid;
  std::string private_raw;
  absl::Time create_time;
  std::optional<absl::Time> retire_time;
};

using service::PageRequest;

class Repository final {
 public:
  // Tenants.
  void InsertTenant(db::Tx& tx, const pb::Tenant& t);
  std::optional<pb::Tenant> GetTenant(db::Tx& tx, const std::string& tenant_id);
  std::vector<pb::Tenant> ListTenants(db::Tx& tx, const PageRequest& page);
  // Writes display name and quota as given; returns false when the tenant does not exist.
  bool UpdateTenant(db::Tx& tx, const pb::Tenant& t);
  // Deletes the tenant and keeps its id (auth.deleted_tenants) so that no later tenant gets it.
  bool DeleteTenant(db::Tx& tx, const std::string& tenant_id);
  // A tenant has, or a deleted tenant had, this id.
  bool TenantIdWasUsed(db::Tx& tx, const std::string& tenant_id);

  // Users.
  void InsertUser(db::Tx& tx, const UserRecord& u);
  std::optional<UserRecord> GetUser(db::Tx& tx, const std::string& user_id);
  std::optional<UserRecord> GetUserByName(db::Tx& tx, const std::string& user_name);
  // All users, or only members of `tenant_id` when it is set.
  std::vector<pb::User> ListUsers(db::Tx& tx, const std::optional<std::string>& tenant_id,
                                  const PageRequest& page);
  bool UpdateUser(db::Tx& tx, const UserRecord& u);
  bool DeleteUser(db::Tx& tx, const std::string& user_id);
  int64_t CountPlatformAdmins(db::Tx& tx);
  bool HasUsers(db::Tx& tx);
  // Holds a transaction lock that serializes first-start work (bootstrap admin, first signing
  // key) between replicas starting at once.
  void LockFirstStart(db::Tx& tx);

  // Memberships.
  void InsertMember(db::Tx& tx, const pb::Membership& m);
  std::optional<pb::Membership> GetMember(db::Tx& tx, const std::string& tenant_id,
                                          const std::string& user_id);
  bool UpdateMember(db::Tx& tx, const pb::Membership& m);
  bool DeleteMember(db::Tx& tx, const std::string& tenant_id, const std::string& user_id);
  std::vector<pb::Membership> ListMembers(db::Tx& tx, const std::string& tenant_id,
                                          const PageRequest& page);
  // Every membership of a user, oldest first.
  std::vector<pb::Membership> MembershipsOf(db::Tx& tx, const std::string& user_id);
  int64_t CountTenantAdmins(db::Tx& tx, const std::string& tenant_id);
  // The tenant's members who have SSH public keys, by user_id.
  std::vector<MemberKeys> MembersWithKeys(db::Tx& tx, const std::string& tenant_id);

  // API keys.
  void InsertApiKey(db::Tx& tx, const ApiKeyRecord& k);
  std::optional<ApiKeyRecord> GetApiKey(db::Tx& tx, const std::string& api_key_id);
  // Keys of one tenant, optionally only one user's.
  std::vector<pb::ApiKey> ListApiKeys(db::Tx& tx, const std::string& tenant_id,
                                      const std::optional<std::string>& user_id,
                                      const PageRequest& page);
  void RevokeApiKey(db::Tx& tx, const std::string& api_key_id);

  // Refresh tokens.
  void InsertRefreshToken(db::Tx& tx, const RefreshTokenRecord& r);
  // Locks the row (FOR UPDATE) so two concurrent refreshes cannot both rotate it.
  std::optional<RefreshTokenRecord> GetRefreshTokenForUpdate(db::Tx& tx,
                                                             const std::string& token_id);
  void MarkRefreshTokenUsed(db::Tx& tx, const std::string& token_id);
  void RevokeChain(db::Tx& tx, const std::string& chain_id);
  void RevokeUserTokens(db::Tx& tx, const std::string& user_id);
  // What a member leaving `tenant_id` held there: its sessions (refresh tokens) and API keys, so
  // re-adding the user later revives neither.
  void RevokeMemberCredentials(db::Tx& tx, const std::string& tenant_id,
                               const std::string& user_id);

  // Signing keys.
  void InsertSigningKey(db::Tx& tx, const SigningKeyRecord& k);
  // Keys not retired, or retired after `published_after`, newest first.
  std::vector<SigningKeyRecord> PublishedSigningKeys(db::Tx& tx, absl::Time published_after);
  void RetireSigningKeys(db::Tx& tx, const std::string& except_kid);

  // Login failures (auth.login_failures), one run per (scope, key).
  // The latest locked_until among `keys` of `scope`s (InfinitePast when none is stored).
  absl::Time LockedUntil(db::Tx& tx, const std::vector<std::pair<std::string, std::string>>& keys);
  // The run of (scope, key), locked for this transaction (a new run is made first).
  FailureRun LockFailureRun(db::Tx& tx, const std::string& scope, const std::string& key);
  void SaveFailureRun(db::Tx& tx, const std::string& scope, const std::string& key,
                      const FailureRun& run);
  void DeleteFailureRun(db::Tx& tx, const std::string& scope, const std::string& key);
  // Forgets runs whose last failure is before `before` and that are no longer locked at `now`.
  void SweepFailureRuns(db::Tx& tx, absl::Time before, absl::Time now);
};

}  // namespace gpuaas::auth
