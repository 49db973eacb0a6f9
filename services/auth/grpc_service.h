// The gRPC adapter of the auth service: hands each call to the domain (Auth) through the
// shared rpc::Handler, which authenticates, runs it off the gRPC threads and maps statuses.
#pragma once

#include "gpuaas/auth/v1/auth.grpc.pb.h"
#include "libs/rpc/handler.h"
#include "services/auth/auth.h"
#include "services/auth/client_address.h"

namespace gpuaas::auth {

class AuthServiceImpl final : public pb::AuthService::CallbackService {
 public:
  // `cpu_handler` runs the methods that hash passwords (Login, CreateUser, UpdateUser);
  // `clients` says which client address Login and ExchangeApiKey count against.
  AuthServiceImpl(Auth& auth, rpc::Handler& handler, rpc::Handler& cpu_handler,
                  const ClientAddresses& clients)
      : auth_(auth), handler_(handler), cpu_handler_(cpu_handler), clients_(clients) {}

#define GPUAAS_AUTH_RPC(Method, Request, Response)                                       \
  grpc::ServerUnaryReactor* Method(grpc::CallbackServerContext* ctx, const Request* req, \
                                   Response* resp) override;
  GPUAAS_AUTH_RPC(CreateTenant, pb::CreateTenantRequest, pb::Tenant)
  GPUAAS_AUTH_RPC(GetTenant, pb::GetTenantRequest, pb::Tenant)
  GPUAAS_AUTH_RPC(ListTenants, pb::ListTenantsRequest, pb::ListTenantsResponse)
  GPUAAS_AUTH_RPC(UpdateTenant, pb::UpdateTenantRequest, pb::Tenant)
  GPUAAS_AUTH_RPC(DeleteTenant, pb::DeleteTenantRequest, pb::DeleteTenantResponse)
  GPUAAS_AUTH_RPC(CreateUser, pb::CreateUserRequest, pb::User)
  GPUAAS_AUTH_RPC(GetUser, pb::GetUserRequest, pb::User)
  GPUAAS_AUTH_RPC(ListUsers, pb::ListUsersRequest, pb::ListUsersResponse)
  GPUAAS_AUTH_RPC(UpdateUser, pb::UpdateUserRequest, pb::User)
  GPUAAS_AUTH_RPC(DeleteUser, pb::DeleteUserRequest, pb::DeleteUserResponse)
  GPUAAS_AUTH_RPC(AddMember, pb::AddMemberRequest, pb::Membership)
  GPUAAS_AUTH_RPC(UpdateMember, pb::UpdateMemberRequest, pb::Membership)
  GPUAAS_AUTH_RPC(RemoveMember, pb::RemoveMemberRequest, pb::RemoveMemberResponse)
  GPUAAS_AUTH_RPC(ListMembers, pb::ListMembersRequest, pb::ListMembersResponse)
  GPUAAS_AUTH_RPC(ListAuthorizedKeys, pb::ListAuthorizedKeysRequest, pb::ListAuthorizedKeysResponse)
  GPUAAS_AUTH_RPC(Login, pb::LoginRequest, pb::LoginResponse)
  GPUAAS_AUTH_RPC(Refresh, pb::RefreshRequest, pb::RefreshResponse)
  GPUAAS_AUTH_RPC(Logout, pb::LogoutRequest, pb::LogoutResponse)
  GPUAAS_AUTH_RPC(WhoAmI, pb::WhoAmIRequest, pb::WhoAmIResponse)
  GPUAAS_AUTH_RPC(CreateApiKey, pb::CreateApiKeyRequest, pb::CreateApiKeyResponse)
  GPUAAS_AUTH_RPC(ListApiKeys, pb::ListApiKeysRequest, pb::ListApiKeysResponse)
  GPUAAS_AUTH_RPC(RevokeApiKey, pb::RevokeApiKeyRequest, pb::ApiKey)
  GPUAAS_AUTH_RPC(ExchangeApiKey, pb::ExchangeApiKeyRequest, pb::ExchangeApiKeyResponse)
  GPUAAS_AUTH_RPC(GetJwks, pb::GetJwksRequest, pb::GetJwksResponse)
  GPUAAS_AUTH_RPC(RotateSigningKey, pb::RotateSigningKeyRequest, pb::SigningKey)
#undef GPUAAS_AUTH_RPC

 private:
  Auth& auth_;
  rpc::Handler& handler_;
  rpc::Handler& cpu_handler_;
  const ClientAddresses& clients_;
};

}  // namespace gpuaas::auth
