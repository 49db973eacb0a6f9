#include "libs/client/workload_log_client.h"

#include "absl/strings/str_cat.h"
#include "libs/common/status_macros.h"

namespace gpuaas::client {

absl::StatusOr<ServerStreamPtr<instancepb::LogChunk>> WorkloadLogClient::OpenReadWorkloadLogs(
    const std::string& node_id, const std::string& agent_address,
    const instancepb::ReadWorkloadLogsRequest& req, const CallContext& call) {
  GPUAAS_ASSIGN_OR_RETURN(Stub * stub, stubs_.For(agent_address));
  absl::StatusOr<std::string> token =
      tokens_.Get(node_id, ::gpuaas::auth::v1::AGENT_CALL_PURPOSE_READ_WORKLOAD_LOGS);
  if (!token.ok()) {
    return absl::UnavailableError(
        absl::StrCat("no token for node ", node_id, "'s agent: ", token.status().ToString()));
  }
  CallContext authorized = call;
  authorized.set_bearer_token(*token);
  return internal::OpenServerStream(*stub, &Stub::ReadWorkloadLogs, req, authorized);
}

void WorkloadLogClient::TokenRefused(const std::string& node_id) {
  tokens_.Invalidate(node_id, ::gpuaas::auth::v1::AGENT_CALL_PURPOSE_READ_WORKLOAD_LOGS);
}

}  // namespace gpuaas::client
