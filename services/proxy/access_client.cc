#include "services/proxy/access_client.h"

#include "libs/rpc/status.h"

namespace gpuaas::proxy {

namespace instancepb = ::gpuaas::instance::v1;

AccessClient::AccessClient(std::shared_ptr<grpc::Channel> instance_channel,
                           client::AccessTokens& tokens, absl::Duration timeout)
    : stub_(instancepb::AccessService::NewStub(instance_channel)),
      tokens_(tokens),
      timeout_(timeout) {}

std::unique_ptr<grpc::ClientContext> AccessClient::Context(const std::string& token) const {
  auto ctx = std::make_unique<grpc::ClientContext>();
  ctx->set_deadline(absl::ToChronoTime(absl::Now() + timeout_));
  ctx->AddMetadata("authorization", "Bearer " + token);
  return ctx;
}

absl::StatusOr<authz::WorkloadGrant> AccessClient::Redeem(const std::string& code,
                                                          const std::string& instance_id,
                                                          int32_t port) {
  absl::StatusOr<std::string> token = tokens_.Get();
  if (!token.ok()) {
    return absl::UnavailableError("no service token: " + std::string(token.status().message()));
  }
  instancepb::RedeemAccessCodeRequest req;
  req.set_code(code);
  req.set_instance_id(instance_id);
  req.set_port(port);
  instancepb::AccessGrant grant;
  grpc::Status s = stub_->RedeemAccessCode(Context(*token).get(), req, &grant);
  if (!s.ok()) {
    if (s.error_code() == grpc::StatusCode::UNAUTHENTICATED) {
      tokens_.Invalidate();
    }
    return rpc::FromGrpcStatus(s);
  }
  return authz::WorkloadGrant{.instance_id = grant.instance_id(),
                              .port = grant.port(),
                              .tenant_id = grant.tenant_id(),
                              .user_id = grant.user_id()};
}

absl::Status AccessClient::Report(const std::vector<std::string>& instance_ids) {
  absl::StatusOr<std::string> token = tokens_.Get();
  if (!token.ok()) {
    return token.status();
  }
  instancepb::ReportAccessRequest req;
  for (const std::string& id : instance_ids) {
    req.add_instance_ids(id);
  }
  instancepb::ReportAccessResponse resp;
  grpc::Status s = stub_->ReportAccess(Context(*token).get(), req, &resp);
  if (s.error_code() == grpc::StatusCode::UNAUTHENTICATED) {
    tokens_.Invalidate();
  }
  return rpc::FromGrpcStatus(s);
}

}  // namespace gpuaas::proxy
