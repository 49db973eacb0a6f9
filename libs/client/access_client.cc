#include "libs/client/access_client.h"

#include "libs/client/internal/unary_call.h"

namespace gpuaas::client {

AccessClient::AccessClient(std::shared_ptr<grpc::ChannelInterface> channel, AccessTokens& tokens,
                           absl::Duration default_timeout)
    : stub_(instancepb::AccessService::NewStub(std::move(channel))),
      tokens_(tokens),
      default_timeout_(default_timeout) {}

absl::StatusOr<instancepb::AccessGrant> AccessClient::RedeemAccessCode(
    const instancepb::RedeemAccessCodeRequest& req, const CallContext& call) const {
  return internal::UnaryCall(*stub_, &Stub::RedeemAccessCode, req, call, default_timeout_,
                             &tokens_);
}

absl::StatusOr<instancepb::AccessGrant> AccessClient::CheckAccessGrant(
    const instancepb::CheckAccessGrantRequest& req, const CallContext& call) const {
  return internal::UnaryCall(*stub_, &Stub::CheckAccessGrant, req, call, default_timeout_,
                             &tokens_);
}

absl::StatusOr<instancepb::ReportAccessResponse> AccessClient::ReportAccess(
    const instancepb::ReportAccessRequest& req, const CallContext& call) const {
  return internal::UnaryCall(*stub_, &Stub::ReportAccess, req, call, default_timeout_, &tokens_);
}

absl::StatusOr<instancepb::ProxyToken> AccessClient::GetProxyToken(
    const instancepb::GetProxyTokenRequest& req, const CallContext& call) const {
  return internal::UnaryCall(*stub_, &Stub::GetProxyToken, req, call, default_timeout_, &tokens_);
}

}  // namespace gpuaas::client
