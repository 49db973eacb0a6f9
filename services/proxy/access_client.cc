#include "services/proxy/access_client.h"

namespace gpuaas::proxy {

namespace instancepb = ::gpuaas::instance::v1;

AccessClient::AccessClient(std::shared_ptr<grpc::Channel> instance_channel,
                           client::AccessTokens& tokens, absl::Duration timeout)
    : access_(std::move(instance_channel), tokens, timeout) {}

absl::StatusOr<authz::WorkloadGrant> AccessClient::Redeem(const std::string& code,
                                                          const std::string& instance_id,
                                                          int32_t port) {
  instancepb::RedeemAccessCodeRequest req;
  req.set_code(code);
  req.set_instance_id(instance_id);
  req.set_port(port);
  absl::StatusOr<instancepb::AccessGrant> grant = access_.RedeemAccessCode(req);
  if (!grant.ok()) {
    return grant.status();
  }
  return authz::WorkloadGrant{.instance_id = grant->instance_id(),
                              .port = grant->port(),
                              .tenant_id = grant->tenant_id(),
                              .user_id = grant->user_id()};
}

absl::Status AccessClient::CheckGrant(const authz::WorkloadGrant& grant) {
  instancepb::CheckAccessGrantRequest req;
  req.mutable_grant()->set_instance_id(grant.instance_id);
  req.mutable_grant()->set_port(grant.port);
  req.mutable_grant()->set_tenant_id(grant.tenant_id);
  req.mutable_grant()->set_user_id(grant.user_id);
  return access_.CheckAccessGrant(req).status();
}

absl::Status AccessClient::Report(const std::vector<std::string>& instance_ids) {
  instancepb::ReportAccessRequest req;
  for (const std::string& id : instance_ids) {
    req.add_instance_ids(id);
  }
  return access_.ReportAccess(req).status();
}

}  // namespace gpuaas::proxy
