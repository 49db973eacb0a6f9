// The auth service (gpuaas.auth.v1.AuthService) for the other gpuaas binaries: one method per
// RPC, named as in auth.proto, each blocking until the answer or the call's deadline.
//
//   GPUAAS_ASSIGN_OR_RETURN(auto channel, client::OpenChannel(endpoint.address, endpoint.tls));
//   client::AuthClient auth(channel, absl::Seconds(2));
//   GPUAAS_ASSIGN_OR_RETURN(
//       auth::v1::WhoAmIResponse me,
//       auth.WhoAmI({}, client::CallContext::FromIncoming(*ctx).set_bearer_token(token)));
//
// Every method: the request as in auth.proto, `call` for the deadline, the bearer token and
// the incoming call to follow (call_context.h). Errors: the codes auth.proto documents for the
// RPC, with the server's message; UNAVAILABLE when the service cannot be reached or is
// overloaded; DEADLINE_EXCEEDED when the deadline passed; CANCELLED when the incoming call
// this one follows was cancelled. Methods without a token need none (Login, Refresh, Logout,
// ExchangeApiKey, GetJwks); the rest answer UNAUTHENTICATED without one. Thread-safe: one
// client serves every thread.
#pragma once

#include <grpcpp/channel.h>

#include <memory>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "gpuaas/auth/v1/auth.grpc.pb.h"
#include "libs/client/call_context.h"
#include "libs/client/pending_call.h"

namespace gpuaas::client {

namespace authpb = ::gpuaas::auth::v1;

class AuthClient final {
 public:
  // `channel` from OpenChannel; `default_timeout` bounds every call whose CallContext sets
  // none. Does not connect.
  explicit AuthClient(std::shared_ptr<grpc::ChannelInterface> channel,
                      absl::Duration default_timeout = kDefaultTimeout);

  absl::StatusOr<authpb::Tenant> CreateTenant(const authpb::CreateTenantRequest& req,
                                              const CallContext& call = {}) const;
  absl::StatusOr<authpb::Tenant> GetTenant(const authpb::GetTenantRequest& req,
                                           const CallContext& call = {}) const;
  // GetTenant started without waiting: several calls in flight at once (pending_call.h).
  PendingCall<authpb::Tenant> StartGetTenant(const authpb::GetTenantRequest& req,
                                             const CallContext& call = {}) const;
  absl::StatusOr<authpb::ListTenantsResponse> ListTenants(const authpb::ListTenantsRequest& req,
                                                          const CallContext& call = {}) const;
  absl::StatusOr<authpb::Tenant> UpdateTenant(const authpb::UpdateTenantRequest& req,
                                              const CallContext& call = {}) const;
  absl::StatusOr<authpb::DeleteTenantResponse> DeleteTenant(const authpb::DeleteTenantRequest& req,
                                                            const CallContext& call = {}) const;

  absl::StatusOr<authpb::User> CreateUser(const authpb::CreateUserRequest& req,
                                          const CallContext& call = {}) const;
  absl::StatusOr<authpb::User> GetUser(const authpb::GetUserRequest& req,
                                       const CallContext& call = {}) const;
  absl::StatusOr<authpb::ListUsersResponse> ListUsers(const authpb::ListUsersRequest& req,
                                                      const CallContext& call = {}) const;
  absl::StatusOr<authpb::User> UpdateUser(const authpb::UpdateUserRequest& req,
                                          const CallContext& call = {}) const;
  absl::StatusOr<authpb::DeleteUserResponse> DeleteUser(const authpb::DeleteUserRequest& req,
                                                        const CallContext& call = {}) const;

  absl::StatusOr<authpb::Membership> AddMember(const authpb::AddMemberRequest& req,
                                               const CallContext& call = {}) const;
  absl::StatusOr<authpb::Membership> UpdateMember(const authpb::UpdateMemberRequest& req,
                                                  const CallContext& call = {}) const;
  absl::StatusOr<authpb::RemoveMemberResponse> RemoveMember(const authpb::RemoveMemberRequest& req,
                                                            const CallContext& call = {}) const;
  absl::StatusOr<authpb::ListAuthorizedKeysResponse> ListAuthorizedKeys(
      const authpb::ListAuthorizedKeysRequest& req, const CallContext& call = {}) const;
  absl::StatusOr<authpb::ListMembersResponse> ListMembers(const authpb::ListMembersRequest& req,
                                                          const CallContext& call = {}) const;

  absl::StatusOr<authpb::LoginResponse> Login(const authpb::LoginRequest& req,
                                              const CallContext& call = {}) const;
  absl::StatusOr<authpb::RefreshResponse> Refresh(const authpb::RefreshRequest& req,
                                                  const CallContext& call = {}) const;
  absl::StatusOr<authpb::LogoutResponse> Logout(const authpb::LogoutRequest& req,
                                                const CallContext& call = {}) const;
  absl::StatusOr<authpb::WhoAmIResponse> WhoAmI(const authpb::WhoAmIRequest& req,
                                                const CallContext& call = {}) const;

  absl::StatusOr<authpb::CreateApiKeyResponse> CreateApiKey(const authpb::CreateApiKeyRequest& req,
                                                            const CallContext& call = {}) const;
  absl::StatusOr<authpb::ListApiKeysResponse> ListApiKeys(const authpb::ListApiKeysRequest& req,
                                                          const CallContext& call = {}) const;
  absl::StatusOr<authpb::ApiKey> RevokeApiKey(const authpb::RevokeApiKeyRequest& req,
                                              const CallContext& call = {}) const;
  absl::StatusOr<authpb::ExchangeApiKeyResponse> ExchangeApiKey(
      const authpb::ExchangeApiKeyRequest& req, const CallContext& call = {}) const;

  absl::StatusOr<authpb::GetJwksResponse> GetJwks(const authpb::GetJwksRequest& req,
                                                  const CallContext& call = {}) const;
  absl::StatusOr<authpb::SigningKey> RotateSigningKey(const authpb::RotateSigningKeyRequest& req,
                                                      const CallContext& call = {}) const;

 private:
  using Stub = ::gpuaas::auth::v1::AuthService::StubInterface;

  std::unique_ptr<Stub> stub_;
  absl::Duration default_timeout_;
};

}  // namespace gpuaas::client
