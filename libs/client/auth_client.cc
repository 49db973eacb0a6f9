#include "libs/client/auth_client.h"

#include "libs/client/internal/unary_call.h"

namespace gpuaas::client {

AuthClient::AuthClient(std::shared_ptr<grpc::ChannelInterface> channel,
                       absl::Duration default_timeout)
    : stub_(::gpuaas::auth::v1::AuthService::NewStub(std::move(channel))),
      default_timeout_(default_timeout) {}

absl::StatusOr<authpb::Tenant> AuthClient::CreateTenant(const authpb::CreateTenantRequest& req,
                                                        const CallContext& call) const {
  return internal::RepeatableUnaryCall(!req.request_id().empty(), *stub_, &Stub::CreateTenant, req,
                                       call, default_timeout_);
}

absl::StatusOr<authpb::Tenant> AuthClient::GetTenant(const authpb::GetTenantRequest& req,
                                                     const CallContext& call) const {
  return internal::UnaryCall(*stub_, &Stub::GetTenant, req, call, default_timeout_);
}

PendingCall<authpb::Tenant> AuthClient::StartGetTenant(const authpb::GetTenantRequest& req,
                                                       const CallContext& call) const {
  return internal::StartUnaryCall(*stub_, &Stub::async_interface::GetTenant, req, call,
                                  default_timeout_);
}

absl::StatusOr<authpb::ListTenantsResponse> AuthClient::ListTenants(
    const authpb::ListTenantsRequest& req, const CallContext& call) const {
  return internal::UnaryCall(*stub_, &Stub::ListTenants, req, call, default_timeout_);
}

absl::StatusOr<authpb::Tenant> AuthClient::UpdateTenant(const authpb::UpdateTenantRequest& req,
                                                        const CallContext& call) const {
  return internal::UnaryCall(*stub_, &Stub::UpdateTenant, req, call, default_timeout_);
}

absl::StatusOr<authpb::DeleteTenantResponse> AuthClient::DeleteTenant(
    const authpb::DeleteTenantRequest& req, const CallContext& call) const {
  return internal::UnaryCall(*stub_, &Stub::DeleteTenant, req, call, default_timeout_);
}

absl::StatusOr<authpb::User> AuthClient::CreateUser(const authpb::CreateUserRequest& req,
                                                    const CallContext& call) const {
  return internal::RepeatableUnaryCall(!req.request_id().empty(), *stub_, &Stub::CreateUser, req,
                                       call, default_timeout_);
}

absl::StatusOr<authpb::User> AuthClient::GetUser(const authpb::GetUserRequest& req,
                                                 const CallContext& call) const {
  return internal::UnaryCall(*stub_, &Stub::GetUser, req, call, default_timeout_);
}

absl::StatusOr<authpb::ListUsersResponse> AuthClient::ListUsers(const authpb::ListUsersRequest& req,
                                                                const CallContext& call) const {
  return internal::UnaryCall(*stub_, &Stub::ListUsers, req, call, default_timeout_);
}

absl::StatusOr<authpb::User> AuthClient::UpdateUser(const authpb::UpdateUserRequest& req,
                                                    const CallContext& call) const {
  return internal::UnaryCall(*stub_, &Stub::UpdateUser, req, call, default_timeout_);
}

absl::StatusOr<authpb::DeleteUserResponse> AuthClient::DeleteUser(
    const authpb::DeleteUserRequest& req, const CallContext& call) const {
  return internal::UnaryCall(*stub_, &Stub::DeleteUser, req, call, default_timeout_);
}

absl::StatusOr<authpb::Membership> AuthClient::AddMember(const authpb::AddMemberRequest& req,
                                                         const CallContext& call) const {
  return internal::UnaryCall(*stub_, &Stub::AddMember, req, call, default_timeout_);
}

absl::StatusOr<authpb::Membership> AuthClient::UpdateMember(const authpb::UpdateMemberRequest& req,
                                                            const CallContext& call) const {
  return internal::UnaryCall(*stub_, &Stub::UpdateMember, req, call, default_timeout_);
}

absl::StatusOr<authpb::RemoveMemberResponse> AuthClient::RemoveMember(
    const authpb::RemoveMemberRequest& req, const CallContext& call) const {
  return internal::UnaryCall(*stub_, &Stub::RemoveMember, req, call, default_timeout_);
}

absl::StatusOr<authpb::ListAuthorizedKeysResponse> AuthClient::ListAuthorizedKeys(
    const authpb::ListAuthorizedKeysRequest& req, const CallContext& call) const {
  return internal::UnaryCall(*stub_, &Stub::ListAuthorizedKeys, req, call, default_timeout_);
}

absl::StatusOr<authpb::ListMembersResponse> AuthClient::ListMembers(
    const authpb::ListMembersRequest& req, const CallContext& call) const {
  return internal::UnaryCall(*stub_, &Stub::ListMembers, req, call, default_timeout_);
}

absl::StatusOr<authpb::LoginResponse> AuthClient::Login(const authpb::LoginRequest& req,
                                                        const CallContext& call) const {
  return internal::UnaryCall(*stub_, &Stub::Login, req, call, default_timeout_);
}

absl::StatusOr<authpb::RefreshResponse> AuthClient::Refresh(const authpb::RefreshRequest& req,
                                                            const CallContext& call) const {
  return internal::UnaryCall(*stub_, &Stub::Refresh, req, call, default_timeout_);
}

absl::StatusOr<authpb::LogoutResponse> AuthClient::Logout(const authpb::LogoutRequest& req,
                                                          const CallContext& call) const {
  return internal::UnaryCall(*stub_, &Stub::Logout, req, call, default_timeout_);
}

absl::StatusOr<authpb::WhoAmIResponse> AuthClient::WhoAmI(const authpb::WhoAmIRequest& req,
                                                          const CallContext& call) const {
  return internal::UnaryCall(*stub_, &Stub::WhoAmI, req, call, default_timeout_);
}

absl::StatusOr<authpb::CreateApiKeyResponse> AuthClient::CreateApiKey(
    const authpb::CreateApiKeyRequest& req, const CallContext& call) const {
  return internal::RepeatableUnaryCall(!req.request_id().empty(), *stub_, &Stub::CreateApiKey, req,
                                       call, default_timeout_);
}

absl::StatusOr<authpb::ListApiKeysResponse> AuthClient::ListApiKeys(
    const authpb::ListApiKeysRequest& req, const CallContext& call) const {
  return internal::UnaryCall(*stub_, &Stub::ListApiKeys, req, call, default_timeout_);
}

absl::StatusOr<authpb::ApiKey> AuthClient::RevokeApiKey(const authpb::RevokeApiKeyRequest& req,
                                                        const CallContext& call) const {
  return internal::UnaryCall(*stub_, &Stub::RevokeApiKey, req, call, default_timeout_);
}

absl::StatusOr<authpb::ExchangeApiKeyResponse> AuthClient::ExchangeApiKey(
    const authpb::ExchangeApiKeyRequest& req, const CallContext& call) const {
  return internal::UnaryCall(*stub_, &Stub::ExchangeApiKey, req, call, default_timeout_);
}

absl::StatusOr<authpb::GetJwksResponse> AuthClient::GetJwks(const authpb::GetJwksRequest& req,
                                                            const CallContext& call) const {
  return internal::UnaryCall(*stub_, &Stub::GetJwks, req, call, default_timeout_);
}

absl::StatusOr<authpb::SigningKey> AuthClient::RotateSigningKey(
    const authpb::RotateSigningKeyRequest& req, const CallContext& call) const {
  return internal::UnaryCall(*stub_, &Stub::RotateSigningKey, req, call, default_timeout_);
}

}  // namespace gpuaas::client
