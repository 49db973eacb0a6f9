#include "services/auth/grpc_service.h"

namespace gpuaas::auth {

// Authenticated methods: the domain method takes the principal, the request and the response.
// `Lane` is handler_, or cpu_handler_ for the methods that hash a password (scrypt).
#define GPUAAS_AUTHED_ON(Lane, Method, Request, Response)                                 \
  grpc::ServerUnaryReactor* AuthServiceImpl::Method(grpc::CallbackServerContext* ctx,     \
                                                    const Request* req, Response* resp) { \
    return Lane.Run(ctx, [this, req, resp](const authz::Principal& p) {                   \
      return auth_.Method(p, *req, *resp);                                                \
    });                                                                                   \
  }
#define GPUAAS_AUTHED(Method, Request, Response) \
  GPUAAS_AUTHED_ON(handler_, Method, Request, Response)

GPUAAS_AUTHED(CreateTenant, pb::CreateTenantRequest, pb::Tenant)
GPUAAS_AUTHED(GetTenant, pb::GetTenantRequest, pb::Tenant)
GPUAAS_AUTHED(ListTenants, pb::ListTenantsRequest, pb::ListTenantsResponse)
GPUAAS_AUTHED(UpdateTenant, pb::UpdateTenantRequest, pb::Tenant)
GPUAAS_AUTHED_ON(cpu_handler_, CreateUser, pb::CreateUserRequest, pb::User)
GPUAAS_AUTHED(GetUser, pb::GetUserRequest, pb::User)
GPUAAS_AUTHED(ListUsers, pb::ListUsersRequest, pb::ListUsersResponse)
GPUAAS_AUTHED_ON(cpu_handler_, UpdateUser, pb::UpdateUserRequest, pb::User)
GPUAAS_AUTHED(AddMember, pb::AddMemberRequest, pb::Membership)
GPUAAS_AUTHED(UpdateMember, pb::UpdateMemberRequest, pb::Membership)
GPUAAS_AUTHED(ListMembers, pb::ListMembersRequest, pb::ListMembersResponse)
GPUAAS_AUTHED(ListAuthorizedKeys, pb::ListAuthorizedKeysRequest, pb::ListAuthorizedKeysResponse)
GPUAAS_AUTHED(CreateApiKey, pb::CreateApiKeyRequest, pb::CreateApiKeyResponse)
GPUAAS_AUTHED(ListApiKeys, pb::ListApiKeysRequest, pb::ListApiKeysResponse)
GPUAAS_AUTHED(RevokeApiKey, pb::RevokeApiKeyRequest, pb::ApiKey)
#undef GPUAAS_AUTHED
#undef GPUAAS_AUTHED_ON

// Deletes answer an empty message.
#define GPUAAS_AUTHED_EMPTY(Method, Request, Response)                                             \
  grpc::ServerUnaryReactor* AuthServiceImpl::Method(grpc::CallbackServerContext* ctx,              \
                                                    const Request* req, Response*) {               \
    return handler_.Run(ctx,                                                                       \
                        [this, req](const authz::Principal& p) { return auth_.Method(p, *req); }); \
  }

GPUAAS_AUTHED_EMPTY(DeleteTenant, pb::DeleteTenantRequest, pb::DeleteTenantResponse)
GPUAAS_AUTHED_EMPTY(DeleteUser, pb::DeleteUserRequest, pb::DeleteUserResponse)
GPUAAS_AUTHED_EMPTY(RemoveMember, pb::RemoveMemberRequest, pb::RemoveMemberResponse)
#undef GPUAAS_AUTHED_EMPTY

grpc::ServerUnaryReactor* AuthServiceImpl::WhoAmI(grpc::CallbackServerContext* ctx,
                                                  const pb::WhoAmIRequest*,
                                                  pb::WhoAmIResponse* resp) {
  return handler_.Run(ctx,
                      [this, resp](const authz::Principal& p) { return auth_.WhoAmI(p, *resp); });
}

grpc::ServerUnaryReactor* AuthServiceImpl::RotateSigningKey(grpc::CallbackServerContext* ctx,
                                                            const pb::RotateSigningKeyRequest*,
                                                            pb::SigningKey* resp) {
  return handler_.Run(
      ctx, [this, resp](const authz::Principal& p) { return auth_.RotateSigningKey(p, *resp); });
}

// Public methods: the credential is in the request itself.
grpc::ServerUnaryReactor* AuthServiceImpl::Login(grpc::CallbackServerContext* ctx,
                                                 const pb::LoginRequest* req,
                                                 pb::LoginResponse* resp) {
  // The metadata is copied on the gRPC thread, where it is certainly stable.
  return cpu_handler_.RunPublic(ctx, [this, req, resp, peer = rpc::PeerAddress(*ctx),
                                      forwarded = client::ForwardedClient::FromIncoming(*ctx)] {
    return auth_.Login(*req, clients_.Resolve(peer, forwarded), *resp);
  });
}

grpc::ServerUnaryReactor* AuthServiceImpl::Refresh(grpc::CallbackServerContext* ctx,
                                                   const pb::RefreshRequest* req,
                                                   pb::RefreshResponse* resp) {
  return handler_.RunPublic(ctx, [this, req, resp] { return auth_.Refresh(*req, *resp); });
}

grpc::ServerUnaryReactor* AuthServiceImpl::Logout(grpc::CallbackServerContext* ctx,
                                                  const pb::LogoutRequest* req,
                                                  pb::LogoutResponse*) {
  return handler_.RunPublic(ctx, [this, req] { return auth_.Logout(*req); });
}

grpc::ServerUnaryReactor* AuthServiceImpl::ExchangeApiKey(grpc::CallbackServerContext* ctx,
                                                          const pb::ExchangeApiKeyRequest* req,
                                                          pb::ExchangeApiKeyResponse* resp) {
  return handler_.RunPublic(ctx, [this, req, resp, peer = rpc::PeerAddress(*ctx),
                                  forwarded = client::ForwardedClient::FromIncoming(*ctx)] {
    return auth_.ExchangeApiKey(*req, clients_.Resolve(peer, forwarded), *resp);
  });
}

grpc::ServerUnaryReactor* AuthServiceImpl::GetJwks(grpc::CallbackServerContext* ctx,
                                                   const pb::GetJwksRequest*,
                                                   pb::GetJwksResponse* resp) {
  return handler_.RunPublic(ctx, [this, resp] { return auth_.GetJwks(*resp); });
}

}  // namespace gpuaas::auth
