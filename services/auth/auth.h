// The auth service's domain logic: who may do what to tenants, users, memberships and API
// keys, and how credentials turn into tokens. Plain C++ on API messages; the gRPC adapter
// (grpc_service.h) only parses and maps statuses, the repository holds the SQL.
//
// Every method blocks on PostgreSQL and returns:
//   INVALID_ARGUMENT naming the field, NOT_FOUND for missing or other tenants' resources,
//   PERMISSION_DENIED when the caller's role is too low for a resource it may see,
//   FAILED_PRECONDITION for a state that must change first, ALREADY_EXISTS for duplicates,
//   UNAUTHENTICATED for bad credentials, UNAVAILABLE when the database is down.
#pragma once

#include <string>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "gpuaas/auth/v1/auth.pb.h"
#include "libs/authz/principal.h"
#include "libs/common/clock.h"
#include "libs/db/db.h"
#include "libs/service/request_log.h"
#include "services/auth/key_store.h"
#include "services/auth/login_guard.h"
#include "services/auth/repository.h"
#include "services/auth/token_answers.h"

namespace gpuaas::auth {

using authz::Principal;

struct AuthOptions {
  std::string issuer = "gpuaas-auth";
  absl::Duration access_token_ttl = absl::Minutes(15);
  absl::Duration refresh_token_ttl = absl::Hours(24 * 7);
  // A token for one call to one node's agent (IssueNodeToken): a captured one is worth
  // minutes, never more than access_token_ttl.
  absl::Duration node_token_ttl = absl::Minutes(5);
};

class Auth final {
 public:
  Auth(db::Pool& pool, Repository& repo, KeyStore& keys, LoginGuard& guard, const Clock& clock,
       AuthOptions options = {});

  // Creates the platform admin "admin" with `password` when the schema has no users at all.
  // Returns OK without change otherwise.
  absl::Status Bootstrap(const std::string& password);

  absl::Status CreateTenant(const Principal& p, const pb::CreateTenantRequest& req,
                            pb::Tenant& out);
  absl::Status GetTenant(const Principal& p, const pb::GetTenantRequest& req, pb::Tenant& out);
  absl::Status ListTenants(const Principal& p, const pb::ListTenantsRequest& req,
                           pb::ListTenantsResponse& out);
  absl::Status UpdateTenant(const Principal& p, const pb::UpdateTenantRequest& req,
                            pb::Tenant& out);
  absl::Status DeleteTenant(const Principal& p, const pb::DeleteTenantRequest& req);

  absl::Status CreateUser(const Principal& p, const pb::CreateUserRequest& req, pb::User& out);
  absl::Status GetUser(const Principal& p, const pb::GetUserRequest& req, pb::User& out);
  absl::Status ListUsers(const Principal& p, const pb::ListUsersRequest& req,
                         pb::ListUsersResponse& out);
  absl::Status UpdateUser(const Principal& p, const pb::UpdateUserRequest& req, pb::User& out);
  absl::Status DeleteUser(const Principal& p, const pb::DeleteUserRequest& req);

  absl::Status AddMember(const Principal& p, const pb::AddMemberRequest& req, pb::Membership& out);
  absl::Status UpdateMember(const Principal& p, const pb::UpdateMemberRequest& req,
                            pb::Membership& out);
  absl::Status RemoveMember(const Principal& p, const pb::RemoveMemberRequest& req);
  absl::Status ListMembers(const Principal& p, const pb::ListMembersRequest& req,
                           pb::ListMembersResponse& out);
  absl::Status ListAuthorizedKeys(const Principal& p, const pb::ListAuthorizedKeysRequest& req,
                                  pb::ListAuthorizedKeysResponse& out);

  // Login and ExchangeApiKey take the client's address (ClientAddresses::Resolve) and throttle
  // guessing by it (login_guard.h): RESOURCE_EXHAUSTED "... retry in Ns" while it is locked.
  absl::Status Login(const pb::LoginRequest& req, const std::string& client,
                     pb::LoginResponse& out);
  absl::Status Refresh(const pb::RefreshRequest& req, pb::RefreshResponse& out);
  absl::Status Logout(const pb::LogoutRequest& req);
  absl::Status WhoAmI(const Principal& p, pb::WhoAmIResponse& out);

  absl::Status CreateApiKey(const Principal& p, const pb::CreateApiKeyRequest& req,
                            pb::CreateApiKeyResponse& out);
  absl::Status ListApiKeys(const Principal& p, const pb::ListApiKeysRequest& req,
                           pb::ListApiKeysResponse& out);
  absl::Status RevokeApiKey(const Principal& p, const pb::RevokeApiKeyRequest& req,
                            pb::ApiKey& out);
  absl::Status ExchangeApiKey(const pb::ExchangeApiKeyRequest& req, const std::string& client,
                              pb::ExchangeApiKeyResponse& out);

  // A token for `req.purpose` on node `req.node_id`'s agent only (authz/node_calls.h), signed
  // without a database read. Errors: INVALID_ARGUMENT naming node_id or purpose,
  // PERMISSION_DENIED unless the caller holds service calls.
  absl::Status IssueNodeToken(const Principal& p, const pb::IssueNodeTokenRequest& req,
                              pb::IssueNodeTokenResponse& out);

  absl::Status GetJwks(pb::GetJwksResponse& out);
  absl::Status RotateSigningKey(const Principal& p, pb::SigningKey& out);

 private:
  // What a token will say: the tenant it acts for and the role there.
  struct Grant {
    std::string tenant_id;
    common::v1::Role role = common::v1::ROLE_UNSPECIFIED;
    std::string node_id;  // a NODE_AGENT key's node
  };

  // Picks the tenant and role for `user` (requested tenant, or the only/first membership).
  absl::StatusOr<Grant> ResolveGrant(db::Tx& tx, const UserRecord& user,
                                     const std::string& requested_tenant);
  absl::StatusOr<IssuedToken> IssueAccessToken(const std::string& user_id, const Grant& grant,
                                               const std::string& api_key_id);
  // Stores a new refresh token in `chain_id` and returns its wire form.
  std::string IssueRefreshToken(db::Tx& tx, const std::string& user_id, const Grant& grant,
                                const std::string& chain_id);
  // The caller may manage members of `tenant_id`: it acts there and holds kManagePeople.
  absl::Status RequireManagePeople(const Principal& p, const std::string& tenant_id);
  // CreateUser's insert: the user and its first membership; returns the user id.
  absl::StatusOr<std::string> InsertUser(db::Tx& tx, const UserRecord& rec,
                                         const pb::CreateUserRequest& req);
  absl::Status RequireSeeUser(db::Tx& tx, const Principal& p, const std::string& user_id);
  // ExchangeApiKey past the throttle: UNAUTHENTICATED for any key that does not exchange;
  // `guessed` says whether the secret itself was wrong (malformed, unknown id, no match).
  absl::Status VerifyApiKey(const pb::ExchangeApiKeyRequest& req, pb::ExchangeApiKeyResponse& out,
                            bool& guessed);

  db::Pool& pool_;
  Repository& repo_;
  KeyStore& keys_;
  LoginGuard& guard_;
  const Clock& clock_;
  const AuthOptions options_;
  const service::RequestLog requests_{"auth"};
};

}  // namespace gpuaas::auth
